package insight

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/bots"
)

// Other is the label and page entry of every identified crawler that is
// not in the tracked list (an unknown Web Bot Auth agent, say): the
// labels stay bounded whatever clients claim.
const Other = "other"

// Hours is the length of the in-memory window.
const Hours = 24

// Request is what the proxy tells Tracker.Observe about one finished
// request, from its decision record.
type Request struct {
	Identity bots.Identity // bots.None (Name "-") for a request that names no crawler
	Path     string        // the request's path as it arrived, percent-encoded (as [watch] keys a page); the sketch keeps MaxPathBytes of it
	Status   int           // the status sent; 0 when the client left before one
	Bytes    int64         // response body bytes sent
	// RobotsViolation: an identified crawler asked for a path the served
	// robots.txt disallows for its group (the proxy decides it).
	RobotsViolation bool
	Referer         string    // the request's Referer field, as received
	Time            time.Time // when it was received; zero: Options.Now()
	// Group is the page's split-test group (SPEC §21): "control" or
	// "variant" on an experiment's page, "" elsewhere; the `group` label
	// of headgate_bot_requests_total. Any other value counts as "".
	Group string
}

// The `group` label values (SPEC §21): none (no label) outside any
// experiment.
const nGroups = 3

var groupLabels = [nGroups]string{"", "control", "variant"}

func groupIndex(g string) int {
	switch g {
	case groupLabels[1]:
		return 1
	case groupLabels[2]:
		return 2
	}
	return 0
}

// Options configure a Tracker; the zero value works.
type Options struct {
	// Registerer receives the four families; nil: no metrics (the page
	// and its JSON still work).
	Registerer prometheus.Registerer
	// Crawlers are the names tracked, each with its own label value and
	// page entry; nil: bots.Directory(). Pass bots.Merge's result when
	// the config adds crawlers. Every other identity counts as Other.
	Crawlers []bots.Crawler
	// TopPaths is the number of Space-Saving counters per crawler and
	// half-day (default 32, at most 64).
	TopPaths int
	// Logger gets a line per robots violation, at most one per crawler
	// a second (the rest are counted in the next line); nil: slog.Default().
	Logger *slog.Logger
	Now    func() time.Time // nil: time.Now
}

// Verdict indexes: the label values of `verified`.
const (
	vIP = iota
	vDNS
	vSignature
	vNo
	vUnverifiable
	nVerified
)

var verifiedLabels = [nVerified]string{"ip", "dns", "signature", "no", "unverifiable"}

func verifiedIndex(v bots.Verified) int {
	switch v {
	case bots.VerifiedIP:
		return vIP
	case bots.VerifiedDNS:
		return vDNS
	case bots.VerifiedSignature:
		return vSignature
	case bots.VerifiedNo:
		return vNo
	}
	return vUnverifiable // also "": nothing said how it was established
}

// Status classes: the label values of `code_class`.
const nClasses = 4

var classLabels = [nClasses]string{"2xx", "3xx", "4xx", "5xx"}

// classIndex: 2xx…5xx; a status below 200 (0: the client left before an
// answer) counts as 4xx, like nginx's 499; one above 599 as 5xx.
func classIndex(status int) int {
	switch {
	case status >= 500:
		return 3
	case status >= 400 || status < 200:
		return 2
	case status >= 300:
		return 1
	}
	return 0
}

// maxCategories bounds the category dimension: bots.Categories (7 today)
// and "unknown" (an unknown agent's identity has no category).
const maxCategories = 16

// categoryIndex: the index in bots.Categories, or unknownCategory.
func categoryIndex(c bots.Category) int {
	for i, k := range bots.Categories {
		if k == c && i < unknownCategory {
			return i
		}
	}
	return unknownCategory
}

const unknownCategory = maxCategories - 1

func categoryLabel(i int) string {
	if i < len(bots.Categories) && i != unknownCategory {
		return string(bots.Categories[i])
	}
	return "unknown"
}

// requestsCollector is headgate_bot_requests_total: the series of pages
// outside any experiment (plain, no `group` label) and of experiment
// pages (grouped). It describes nothing, so the registry takes it
// unchecked: a checked one refuses one name with two label sets, which
// the exposition format allows (TestGroupLabel parses it back).
type requestsCollector struct{ plain, grouped *prometheus.CounterVec }

func (requestsCollector) Describe(chan<- *prometheus.Desc) {}

func (c requestsCollector) Collect(ch chan<- prometheus.Metric) {
	c.plain.Collect(ch)
	c.grouped.Collect(ch)
}

// lazyCounter is a label child resolved on first use: the families start
// with no per-crawler series (50 crawlers × 8 categories × 5 verdicts × 4
// classes would be 8,000 zeros), and after the first count of a
// combination the hot path loads one pointer.
type lazyCounter struct {
	p atomic.Pointer[prometheus.Counter]
}

func (l *lazyCounter) get(vec *prometheus.CounterVec, labels ...string) prometheus.Counter {
	if c := l.p.Load(); c != nil {
		return *c
	}
	c := vec.WithLabelValues(labels...)
	l.p.CompareAndSwap(nil, &c)
	return *l.p.Load()
}

// bucket is one hour of one crawler. Its counters are atomics; hour says
// which hour they count, and a bucket found holding an older hour is
// cleared under the crawler's lock before use.
type bucket struct {
	hour       atomic.Int64 // Unix hour + 1; 0: never used
	requests   atomic.Uint64
	bytes      atomic.Uint64
	verdicts   [nVerified]atomic.Uint64
	classes    [nClasses]atomic.Uint64
	violations atomic.Uint64
}

func (b *bucket) clear(hour int64) {
	b.requests.Store(0)
	b.bytes.Store(0)
	for i := range b.verdicts {
		b.verdicts[i].Store(0)
	}
	for i := range b.classes {
		b.classes[i].Store(0)
	}
	b.violations.Store(0)
	b.hour.Store(hour + 1)
}

// halfDay is the top-paths sketch of 12 hours; two of them cover 12 to
// 24 hours, whatever the traffic, in fixed memory.
const halfDay = 12

type crawler struct {
	name string

	mu      sync.Mutex // bucket rollover; the sketches
	hours   [Hours]bucket
	top     [2]sketch
	topHalf [2]int64 // which half-day each sketch counts (+1; 0: none)

	requests [maxCategories][nVerified][nClasses][nGroups]lazyCounter
	bytes    lazyCounter
	viol     [nVerified]lazyCounter

	lastLog    atomic.Int64 // Unix second of the last violation line
	suppressed atomic.Uint64
}

// refBucket is one hour of referrals by source.
type refBucket struct {
	hour   atomic.Int64 // Unix hour + 1
	counts []atomic.Uint64
}

// Tracker counts what crawlers do and which search engines and assistants
// send visits (SPEC §20.1). It is safe for concurrent use; Observe takes
// no lock but a crawler's own when a new path enters its sketch or an
// hour rolls over.
type Tracker struct {
	now  func() time.Time
	log  *slog.Logger
	topK int

	// set is the tracked list Observe and Snapshot read; SetCrawlers
	// replaces it. setMu orders the replacements; known holds every
	// crawler ever tracked (at most MaxCrawlers), so that a name a reload
	// drops and a later one brings back keeps its window and its series.
	set   atomic.Pointer[crawlerSet]
	setMu sync.Mutex
	known map[string]*crawler
	other *crawler

	// reqVec and reqGroupVec are headgate_bot_requests_total without and
	// with `group` (register).
	reqVec, reqGroupVec, bytesVec, violVec *prometheus.CounterVec
	referrals                              []prometheus.Counter // by source index; nil without a registerer

	refMu    sync.Mutex
	refHours [Hours]refBucket
}

// crawlerSet is the tracked list at one time, never changed once
// published: the crawlers, Other last, with their directory entries'
// category and operator (the page's columns; a reload may change them).
type crawlerSet struct {
	list   []*crawler
	meta   []crawlerMeta
	byName map[string]*crawler
}

type crawlerMeta struct{ category, operator string }

// MaxCrawlers bounds the names a Tracker ever tracks, over New and every
// SetCrawlers (the directory has about 40): each has its own label value
// and its window (about 28 KiB at the default TopPaths). A name past it
// counts as Other.
const MaxCrawlers = 256

// New returns a Tracker with its metric families registered on
// opt.Registerer (an error if they already are).
func New(opt Options) (*Tracker, error) {
	t := &Tracker{now: opt.Now, log: opt.Logger, topK: opt.TopPaths, known: map[string]*crawler{}}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if t.topK <= 0 {
		t.topK = 32
	}
	t.topK = min(t.topK, 64)
	list := opt.Crawlers
	if list == nil {
		list = bots.Directory()
	}
	t.other = t.newCrawler(Other)
	if left := t.SetCrawlers(list); len(left) > 0 {
		t.log.Warn("insight: more crawlers than it tracks; these count as other", "max", MaxCrawlers, "names", left)
	}
	for i := range t.refHours {
		t.refHours[i].counts = make([]atomic.Uint64, len(sourceNames))
	}
	if opt.Registerer != nil {
		if err := t.register(opt.Registerer); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// The metric family names, for tests and the deploy checks.
const (
	MetricRequests   = "headgate_bot_requests_total"
	MetricBytes      = "headgate_bot_response_bytes_total"
	MetricViolations = "headgate_bot_robots_violations_total"
	MetricReferrals  = "headgate_referrals_total"
)

func (t *Tracker) newCrawler(name string) *crawler {
	return &crawler{name: name, top: [2]sketch{newSketch(t.topK), newSketch(t.topK)}}
}

// SetCrawlers makes list the tracked crawlers from now on: a config
// reload's directory merged with its [[bots.crawler]] (bots.Merge). A
// name tracked before keeps its window; a new one starts empty, with its
// own label value; one list leaves out counts as Other from now on (its
// series stay where they are). Names past MaxCrawlers (over the Tracker's
// life) are not tracked: SetCrawlers returns them, for a warning. Safe
// with Observe and Snapshot running.
func (t *Tracker) SetCrawlers(list []bots.Crawler) (left []string) {
	t.setMu.Lock()
	defer t.setMu.Unlock()
	set := &crawlerSet{byName: make(map[string]*crawler, len(list))}
	for _, c := range list {
		if _, dup := set.byName[c.Name]; dup || c.Name == Other || c.Name == "" || c.Name == "-" {
			continue
		}
		cr := t.known[c.Name]
		if cr == nil {
			if len(t.known) >= MaxCrawlers {
				left = append(left, c.Name)
				continue
			}
			cr = t.newCrawler(c.Name)
			t.known[c.Name] = cr
		}
		set.byName[c.Name] = cr
		set.list = append(set.list, cr)
		set.meta = append(set.meta, crawlerMeta{string(c.Category), c.Operator})
	}
	set.list = append(set.list, t.other)
	set.meta = append(set.meta, crawlerMeta{})
	t.set.Store(set)
	return left
}

func (t *Tracker) register(reg prometheus.Registerer) error {
	// The one place the label sets are decided. `group` is §21's, on
	// experiment pages' series only (control or variant: bounded); a page
	// outside any experiment counts in a vector without it, not as
	// group="". One name, two label sets: valid exposition, so the two go
	// to the registry as one unchecked collector (requestsCollector).
	help := "Requests of identified crawlers: bot is a directory name or other; verified ip, dns, signature, no (spoofed) or unverifiable; code_class 2xx to 5xx; group control or variant on split-test pages, absent elsewhere."
	plainLabels := []string{"bot", "category", "verified", "code_class"}
	t.reqVec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRequests, Help: help}, plainLabels)
	t.reqGroupVec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRequests, Help: help}, append(plainLabels[:len(plainLabels):len(plainLabels)], "group"))
	t.bytesVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricBytes,
		Help: "Response body bytes sent to identified crawlers.",
	}, []string{"bot"})
	t.violVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricViolations,
		Help: "Requests of identified crawlers for a path the served robots.txt disallows for their group.",
	}, []string{"bot", "verified"})
	refVec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricReferrals,
		Help: "Requests whose Referer host is a search engine or AI assistant of the documented list, by source.",
	}, []string{"source"})
	for _, c := range []prometheus.Collector{requestsCollector{t.reqVec, t.reqGroupVec}, t.bytesVec, t.violVec, refVec} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	t.referrals = make([]prometheus.Counter, len(sourceNames))
	for i, s := range sourceNames {
		t.referrals[i] = refVec.WithLabelValues(s) // bounded: every series from the start
	}
	return nil
}

// Observe records one finished request. Call it once per request, after
// the response (the access log's moment). It costs well under a
// microsecond and does not allocate once a label combination has been
// seen (bench_test.go).
func (t *Tracker) Observe(ev Request) {
	at := ev.Time
	if at.IsZero() {
		at = t.now()
	}
	hour := at.Unix() / 3600
	if ev.Referer != "" {
		if i := sourceIndex(ev.Referer); i >= 0 {
			if t.referrals != nil {
				t.referrals[i].Inc()
			}
			t.refBucket(hour).counts[i].Add(1)
		}
	}
	if !ev.Identity.Known() {
		return
	}
	c := t.set.Load().byName[ev.Identity.Name]
	if c == nil {
		c = t.other
	}
	v, cl := verifiedIndex(ev.Identity.Verified), classIndex(ev.Status)
	var n uint64
	if ev.Bytes > 0 {
		n = uint64(ev.Bytes)
	}
	if t.reqVec != nil {
		cat := categoryIndex(ev.Identity.Category)
		g := groupIndex(ev.Group)
		if g == 0 {
			c.requests[cat][v][cl][g].get(t.reqVec, c.name, categoryLabel(cat), verifiedLabels[v], classLabels[cl]).Inc()
		} else {
			c.requests[cat][v][cl][g].get(t.reqGroupVec, c.name, categoryLabel(cat), verifiedLabels[v], classLabels[cl], groupLabels[g]).Inc()
		}
		if n > 0 {
			c.bytes.get(t.bytesVec, c.name).Add(float64(n))
		}
		if ev.RobotsViolation {
			c.viol[v].get(t.violVec, c.name, verifiedLabels[v]).Inc()
		}
	}
	b := c.bucket(hour)
	b.requests.Add(1)
	b.bytes.Add(n)
	b.verdicts[v].Add(1)
	b.classes[cl].Add(1)
	if ev.RobotsViolation {
		b.violations.Add(1)
		t.logViolation(c, ev, at)
	}
	if ev.Path != "" {
		c.mu.Lock()
		c.sketchFor(hour).add(ev.Path)
		c.mu.Unlock()
	}
}

// bucket returns the crawler's bucket for hour, cleared if it held an
// older hour. A bucket of a newer hour (an event that arrived late, past
// a rollover) is not rewound: the late event counts in it.
func (c *crawler) bucket(hour int64) *bucket {
	b := &c.hours[hour%Hours]
	if h := b.hour.Load(); h < hour+1 {
		c.mu.Lock()
		if b.hour.Load() < hour+1 {
			b.clear(hour)
		}
		c.mu.Unlock()
	}
	return b
}

// sketchFor returns the sketch of hour's half-day; c.mu is held.
func (c *crawler) sketchFor(hour int64) *sketch {
	half := hour / halfDay
	i := half % 2
	if c.topHalf[i] < half+1 {
		c.top[i].reset()
		c.topHalf[i] = half + 1
	}
	return &c.top[i]
}

func (t *Tracker) refBucket(hour int64) *refBucket {
	b := &t.refHours[hour%Hours]
	if b.hour.Load() < hour+1 {
		t.refMu.Lock()
		if b.hour.Load() < hour+1 {
			for i := range b.counts {
				b.counts[i].Store(0)
			}
			b.hour.Store(hour + 1)
		}
		t.refMu.Unlock()
	}
	return b
}

// logViolation writes at most one line per crawler a second.
func (t *Tracker) logViolation(c *crawler, ev Request, at time.Time) {
	sec := at.Unix()
	last := c.lastLog.Load()
	if sec <= last || !c.lastLog.CompareAndSwap(last, sec) {
		c.suppressed.Add(1)
		return
	}
	t.log.Info("robots violation", "bot", ev.Identity.Name, "verified", string(ev.Identity.Verified),
		"path", truncPath(ev.Path), "suppressed", c.suppressed.Swap(0))
}
