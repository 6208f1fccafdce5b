package indexnow

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/rules"
)

// Defaults of Options.
const (
	DefaultBatchSize      = 10000 // the protocol's limit per POST
	DefaultAttempts       = 3
	DefaultAttemptTimeout = 20 * time.Second
	DefaultMaxWait        = 20 * time.Second
	DefaultBackoff        = time.Second
)

// Options configures a Run. Config and URLs are required; the zero value
// of every other field is its documented default.
type Options struct {
	// Config holds site.base_url and [indexnow] (key, endpoint).
	Config *rules.Config
	// URLs lists the sitemap's URLs with their lastmod ("" when none),
	// generating it once (sitemap.(*Sitemap).Each).
	URLs func(ctx context.Context, fn func(loc, lastmod string)) error
	// State is the path of the state file of the last successful run.
	State string
	// DryRun submits nothing and writes no state: it logs what a run
	// would submit.
	DryRun bool
	// All submits every URL, also on a first run and when unchanged.
	All bool
	// Transport carries the POSTs. nil: http.DefaultTransport. Redirects
	// are never followed, whatever the transport.
	Transport http.RoundTripper
	// BatchSize is the most URLs per POST. 0: 10,000 (also the maximum).
	BatchSize int
	// Attempts is the most POSTs per batch. 0: 3.
	Attempts int
	// AttemptTimeout bounds one POST, headers and body. 0: 20 s.
	AttemptTimeout time.Duration
	// MaxWait is the longest Retry-After a run waits for; a longer one
	// fails the run. 0: 20 s.
	MaxWait time.Duration
	// Backoff is the wait before the second attempt when the receiver
	// gives no Retry-After, doubled for each further one. 0: 1 s.
	Backoff time.Duration
	// Logger gets one line per batch and the run's summary. nil: discard.
	Logger *slog.Logger
	// Registerer gets headgate_indexnow_urls_total{result}. nil: none.
	Registerer prometheus.Registerer
}

// WorstCase is the longest a run spends on one batch whose receiver never
// answers or always asks to retry, with o's settings: the bound behind
// "a receiver that hangs ends the run within 2 minutes".
func (o *Options) WorstCase() time.Duration {
	o2 := *o
	o2.defaults()
	wait := max(o2.MaxWait, o2.Backoff<<(o2.Attempts-2))
	return time.Duration(o2.Attempts)*o2.AttemptTimeout + time.Duration(o2.Attempts-1)*wait
}

func (o *Options) defaults() {
	if o.BatchSize <= 0 || o.BatchSize > DefaultBatchSize {
		o.BatchSize = DefaultBatchSize
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Summary says what a run did.
type Summary struct {
	URLs        int  // listed by the sitemap (each once)
	New         int  // not in the state
	Changed     int  // in the state with another lastmod
	Submitted   int  // accepted by the receiver
	Batches     int  // POSTs accepted
	SkippedHost int  // not on base_url's origin: never sent
	FirstRun    bool // there was no state file: the state is recorded, nothing submitted (without All)
}

// StatusError is a receiver's answer that fails the run.
type StatusError struct {
	StatusCode int
	Location   string // of a redirect, which is not followed
	Body       string // the first bytes, for the log
}

func (e *StatusError) Error() string {
	switch {
	case e.Location != "":
		return fmt.Sprintf("the receiver answered %d and redirects to %q; redirects are not followed", e.StatusCode, e.Location)
	case e.Body != "":
		return fmt.Sprintf("the receiver answered %d: %s", e.StatusCode, e.Body)
	}
	return fmt.Sprintf("the receiver answered %d", e.StatusCode)
}

// stateHeader is the first line of a state file.
const stateHeader = "# headgate indexnow state v1: lastmod TAB url"

// Run generates the sitemap's URLs, compares them with the state of the
// last successful run, submits the new and changed ones in batches, and
// then writes the new state. A failed run writes no state, so the next run
// submits the same URLs.
func Run(ctx context.Context, o Options) (Summary, error) {
	o.defaults()
	var sum Summary
	if o.Config == nil || o.Config.IndexNow == nil {
		return sum, errors.New("the config has no [indexnow] table (key = …)")
	}
	if o.URLs == nil || o.State == "" {
		return sum, errors.New("indexnow: Options.URLs and Options.State are required")
	}
	m := newMetrics(o.Registerer)
	base, err := url.Parse(o.Config.Site.BaseURL)
	if err != nil {
		return sum, err
	}
	origin := base.Scheme + "://" + base.Host

	seed := maphash.MakeSeed()
	old, err := readState(o.State, seed)
	switch {
	case errors.Is(err, os.ErrNotExist):
		sum.FirstRun = true
	case err != nil:
		return sum, err
	}

	// The new state and the URLs to submit are spooled to files beside
	// the state file: a million URLs are never held in memory.
	dir := filepath.Dir(o.State)
	stTmp, err := os.CreateTemp(dir, "."+filepath.Base(o.State)+".*")
	if err != nil {
		return sum, fmt.Errorf("state directory: %w", err)
	}
	defer func() {
		stTmp.Close()
		os.Remove(stTmp.Name()) // gone already when renamed
	}()
	queue, err := os.CreateTemp(dir, "."+filepath.Base(o.State)+".queue.*")
	if err != nil {
		return sum, err
	}
	defer func() {
		queue.Close()
		os.Remove(queue.Name())
	}()
	stw := bufio.NewWriter(stTmp)
	qw := bufio.NewWriter(queue)
	stw.WriteString(stateHeader + "\n")
	if old == nil {
		old = map[uint64]uint64{}
	}
	queued, unchanged, err := spool(ctx, &o, old, seed, origin, stw, qw, &sum)
	if err != nil {
		return sum, err
	}
	m.add("unchanged", unchanged)
	m.add("skipped_host", sum.SkippedHost)
	if sum.SkippedHost > 0 {
		o.Logger.Warn("indexnow: URLs not on base_url's origin are never submitted", "skipped", sum.SkippedHost, "origin", origin)
	}
	if sum.FirstRun && !o.All {
		m.add("recorded", sum.URLs)
		o.Logger.Info("indexnow: first run: the state is recorded, nothing is submitted (-all submits every URL)", "urls", sum.URLs)
	}

	if queued > 0 {
		if _, err := queue.Seek(0, io.SeekStart); err != nil {
			return sum, err
		}
		if err := o.submit(ctx, bufio.NewScanner(queue), base, &sum, m); err != nil {
			m.add("failed", queued-sum.Submitted)
			return sum, err
		}
	}
	if o.DryRun {
		o.Logger.Info("indexnow: dry run: nothing submitted, the state is left as it was", "would_submit", queued)
		m.add("dry_run", queued)
		return sum, nil
	}
	if err := stTmp.Sync(); err != nil {
		return sum, err
	}
	if err := stTmp.Close(); err != nil {
		return sum, err
	}
	if err := os.Rename(stTmp.Name(), o.State); err != nil {
		return sum, fmt.Errorf("writing the state: %w", err)
	}
	o.Logger.Info("indexnow: done", "urls", sum.URLs, "new", sum.New, "changed", sum.Changed,
		"submitted", sum.Submitted, "batches", sum.Batches, "first_run", sum.FirstRun)
	return sum, nil
}

// spool lists the sitemap's URLs on origin into the new state (stw) and
// the ones to submit into the queue (qw), counting them in sum: the new and
// changed ones, or every one with o.All, and none on a first run without
// it. old is the last state, by URL hash; spool marks what it lists in it.
func spool(ctx context.Context, o *Options, old map[uint64]uint64, seed maphash.Seed, origin string, stw, qw *bufio.Writer, sum *Summary) (queued, unchanged int, err error) {
	var writeErr error
	err = o.URLs(ctx, func(loc, lastmod string) {
		if writeErr != nil {
			return
		}
		if !onOrigin(loc, origin) {
			sum.SkippedHost++
			return
		}
		h := maphash.String(seed, loc)
		prev, known := old[h]
		if known && prev == seenMark {
			return // listed twice (two rules): once is enough
		}
		old[h] = seenMark
		sum.URLs++
		stw.WriteString(lastmod)
		stw.WriteByte('\t')
		stw.WriteString(loc)
		_, writeErr = stw.WriteString("\n")
		switch {
		case !known:
			sum.New++
		case prev != lastmodHash(seed, lastmod):
			sum.Changed++
		case !o.All:
			unchanged++
			return
		}
		if sum.FirstRun && !o.All {
			return
		}
		qw.WriteString(loc)
		qw.WriteByte('\n')
		queued++
	})
	if err != nil {
		return 0, 0, fmt.Errorf("generating the sitemap: %w", err)
	}
	if writeErr == nil {
		writeErr = stw.Flush()
	}
	if writeErr == nil {
		writeErr = qw.Flush()
	}
	if writeErr != nil {
		return 0, 0, fmt.Errorf("spooling the state: %w", writeErr)
	}
	return queued, unchanged, nil
}

// onOrigin reports whether loc is an absolute URL on origin.
func onOrigin(loc, origin string) bool {
	rest, ok := strings.CutPrefix(loc, origin)
	return ok && (rest == "" || rest[0] == '/')
}

// seenMark replaces a URL's lastmod hash in the state map once the run has
// listed it; lastmodHash is never 0.
const seenMark = 0

func lastmodHash(seed maphash.Seed, lastmod string) uint64 {
	return maphash.String(seed, lastmod) | 1
}

// readState reads a state file into hash(url) → lastmodHash(lastmod),
// sized from the file's length.
func readState(path string, seed maphash.Seed) (map[uint64]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	hint := 0
	if fi, err := f.Stat(); err == nil {
		hint = int(min(fi.Size()/48, 50_000_000))
	}
	st := make(map[uint64]uint64, hint)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			if line != stateHeader {
				return nil, fmt.Errorf("%s:1: not a headgate indexnow state file (delete it to start again: the next run records and submits nothing)", path)
			}
			continue
		}
		lastmod, loc, ok := strings.Cut(line, "\t")
		if !ok || loc == "" {
			return nil, fmt.Errorf("%s:%d: not a state line (lastmod TAB url)", path, n)
		}
		st[maphash.String(seed, loc)] = lastmodHash(seed, lastmod)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: empty state file", path)
	}
	return st, nil
}

// payload is the body of one POST (indexnow.org's JSON form).
type payload struct {
	Host        string   `json:"host"`
	Key         string   `json:"key"`
	KeyLocation string   `json:"keyLocation"`
	URLList     []string `json:"urlList"`
}

func (o *Options) submit(ctx context.Context, sc *bufio.Scanner, base *url.URL, sum *Summary, m *metrics) error {
	in := o.Config.IndexNow
	endpoint := in.Endpoint
	client := &http.Client{
		Transport:     o.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	p := payload{Host: base.Host, Key: in.Key, KeyLocation: o.Config.Site.BaseURL + in.KeyPath()}
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	batch := 0
	flush := func() error {
		if len(p.URLList) == 0 {
			return nil
		}
		batch++
		if o.DryRun {
			o.Logger.Info("indexnow: dry run: would submit", "batch", batch, "urls", len(p.URLList), "first", p.URLList[0])
			p.URLList = p.URLList[:0]
			return nil
		}
		body, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		if err := o.post(ctx, client, endpoint, body, batch); err != nil {
			return fmt.Errorf("batch %d (%d URLs) to %s: %w", batch, len(p.URLList), endpoint, err)
		}
		sum.Submitted += len(p.URLList)
		sum.Batches++
		m.add("submitted", len(p.URLList))
		o.Logger.Info("indexnow: batch accepted", "batch", batch, "urls", len(p.URLList))
		p.URLList = p.URLList[:0]
		return nil
	}
	for sc.Scan() {
		p.URLList = append(p.URLList, sc.Text())
		if len(p.URLList) == o.BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}

// post sends one batch: 200 and 202 succeed; 429, 5xx, timeouts and
// network errors are retried (Retry-After honoured up to MaxWait); any
// other answer fails at once.
func (o *Options) post(ctx context.Context, client *http.Client, endpoint string, body []byte, batch int) error {
	var last error
	tried := 0
	for attempt := 1; attempt <= o.Attempts; attempt++ {
		tried = attempt
		wait, err := o.attempt(ctx, client, endpoint, body)
		if err == nil {
			return nil
		}
		last = err
		if wait < 0 {
			return err // not to be retried: sent once
		}
		if attempt == o.Attempts {
			break
		}
		if wait == 0 {
			wait = o.Backoff << (attempt - 1)
		}
		if wait > o.MaxWait {
			return fmt.Errorf("%w; it asks to retry after %v, longer than this run waits (%v)", err, wait, o.MaxWait)
		}
		o.Logger.Warn("indexnow: retrying", "batch", batch, "attempt", attempt, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Errorf("%w (after %d attempts)", last, tried)
}

// attempt is one POST. wait < 0: do not retry; 0: retry after the
// backoff; > 0: retry after that long (Retry-After).
func (o *Options) attempt(ctx context.Context, client *http.Client, endpoint string, body []byte) (wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "headgate-indexnow")
	res, err := client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return 0, fmt.Errorf("no answer within %v", o.AttemptTimeout)
		}
		return 0, err
	}
	defer res.Body.Close()
	// The answer's body is only for the log: a few bytes, never all of it.
	head, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	switch {
	case res.StatusCode == http.StatusOK || res.StatusCode == http.StatusAccepted:
		return 0, nil
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 && res.StatusCode <= 599:
		return retryAfter(res.Header.Get("Retry-After"), time.Now()), &StatusError{StatusCode: res.StatusCode, Body: printable(head)}
	case res.StatusCode >= 300 && res.StatusCode <= 399:
		return -1, &StatusError{StatusCode: res.StatusCode, Location: printable([]byte(res.Header.Get("Location")))}
	}
	return -1, &StatusError{StatusCode: res.StatusCode, Body: printable(head)}
}

// retryAfter reads Retry-After (seconds or an HTTP date); 0 when absent
// or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		if n > 1<<31 {
			n = 1 << 31
		}
		return max(time.Duration(n)*time.Second, time.Millisecond)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), time.Millisecond)
	}
	return 0
}

// printable cuts b to a short, printable string for the log.
func printable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// metrics are headgate_indexnow_urls_total{result}.
type metrics struct{ urls *prometheus.CounterVec }

// Results of headgate_indexnow_urls_total.
var results = []string{"submitted", "failed", "unchanged", "recorded", "skipped_host", "dry_run"}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return &metrics{}
	}
	v := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_indexnow_urls_total",
		Help: "Sitemap URLs seen by headgate indexnow, by result: submitted (accepted by the receiver), failed (in a batch that failed), unchanged, recorded (first run), skipped_host (not on base_url's origin), dry_run.",
	}, []string{"result"})
	if err := reg.Register(v); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			v = are.ExistingCollector.(*prometheus.CounterVec)
		} else {
			return &metrics{}
		}
	}
	for _, r := range results {
		v.WithLabelValues(r)
	}
	return &metrics{urls: v}
}

func (m *metrics) add(result string, n int) {
	if m.urls != nil && n > 0 {
		m.urls.WithLabelValues(result).Add(float64(n))
	}
}
