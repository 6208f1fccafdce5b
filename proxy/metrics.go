package proxy

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

type metrics struct {
	requests       *prometheus.CounterVec
	rewriteSeconds prometheus.Histogram
	tagsWritten    *prometheus.CounterVec
	tagsRemoved    *prometheus.CounterVec
	urlsDropped    *prometheus.CounterVec
	reloads        *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
	recordLimits   prometheus.Counter // compressed heads past the recording limit
	idleConns      prometheus.Gauge   // idle keep-alive connections on the public port
	idleClosed     prometheus.Counter // of them, closed by server.max_idle_connections
	misdirected    prometheus.Counter // the admin listener's 421s (admin.go)
	plans          map[rewrite.PlanUse]prometheus.Counter
	expPages       *prometheus.GaugeVec // headgate_experiment_pages (experiment.go)
	expMu          sync.RWMutex
	expCounters    map[string]*[2]prometheus.Gauge // experiment name → (control, variant)

	// Per-label counters, looked up once: a rewritten page records a few
	// dozen changes, and CounterVec hashes its labels on every lookup.
	written, removed, dropped, outcomes sync.Map // label → prometheus.Counter
}

// inc increments vec's counter for label through cache.
func inc(cache *sync.Map, vec *prometheus.CounterVec, label string) {
	if c, ok := cache.Load(label); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c := vec.WithLabelValues(label)
	cache.Store(label, c)
	c.Inc()
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_requests_total",
			Help: "Requests on the public port, by what became of them.",
		}, []string{"outcome"}),
		rewriteSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "headgate_rewrite_duration_seconds",
			Help:    "Time spent processing a document's head (not waiting for the upstream).",
			Buckets: []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3},
		}),
		tagsWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_tags_written_total",
			Help: "Head tags headgate wrote, by identity.",
		}, []string{"kind"}),
		tagsRemoved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_tags_removed_total",
			Help: "Upstream head tags headgate removed (replaced or dropped), by identity.",
		}, []string{"kind"}),
		urlsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_urls_dropped_total",
			Help: "URLs and header values headgate refused to write, by reason.",
		}, []string{"reason"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_config_reloads_total",
			Help: "Config reloads: ok, error (unreadable, could not apply) or refused (failed check).",
		}, []string{"result"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "headgate_upstream_errors_total",
			Help: "Upstream failures, by kind: connect, timeout, corrupt (a body that does not decode), aborted (cut short mid-body).",
		}, []string{"kind"}),
		recordLimits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "headgate_head_search_limit_total",
			Help: "Compressed pages sent unchanged because their head search read more compressed bytes than the recording limit (4 x max_head_bytes).",
		}),
		idleConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "headgate_idle_connections",
			Help: "Idle keep-alive connections on the public port.",
		}),
		idleClosed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "headgate_idle_connections_closed_total",
			Help: "Idle keep-alive connections closed because more than server.max_idle_connections were idle (the oldest goes).",
		}),
		misdirected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "headgate_admin_misdirected_total",
			Help: "Requests the admin listener refused with 421: their Host is no IP literal, localhost or name in server.admin_hosts (DNS rebinding, or a name to add).",
		}),
	}
	m.expPages = newExperimentPages()
	planVec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_plan_cache_total",
		Help: "Rewritten-or-not HTML heads by what the plan cache did: hit (the same head), near (differing only where nothing headgate decides reads, as a CSRF token), miss (scanned), skipped (scanned without the cache: the target's heads kept missing).",
	}, []string{"result"})
	m.plans = map[rewrite.PlanUse]prometheus.Counter{}
	for _, u := range []rewrite.PlanUse{rewrite.PlanHit, rewrite.PlanNear, rewrite.PlanMiss, rewrite.PlanSkip} {
		m.plans[u] = planVec.WithLabelValues(string(u)) // the series exist from the start
	}
	for _, c := range []prometheus.Collector{m.requests, m.rewriteSeconds, m.tagsWritten, m.tagsRemoved,
		m.urlsDropped, m.reloads, m.upstreamErrors, m.recordLimits,
		m.idleConns, m.idleClosed, m.misdirected, planVec, m.expPages} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Make the series exist from the start, so dashboards and alerts see
	// zeros instead of gaps.
	for _, o := range []Outcome{Rewritten, Passthrough, SkippedTooLarge,
		SkippedEncoding, SkippedCharset, SkippedFragment, UnchangedTruncated, SkippedRule, Denied, BotDenied, Sitemap, Robots, LLMSTxt, UpstreamError, BadRequest, Shadow} {
		m.requests.WithLabelValues(string(o))
	}
	for _, r := range []string{"ok", "error", "refused"} {
		m.reloads.WithLabelValues(r)
	}
	return m, nil
}

// newRegistry is the default registry: Go and process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// countResult records what one rewrite did.
func (m *metrics) countResult(res *rewrite.Result) {
	m.rewriteSeconds.Observe(res.Duration.Seconds())
	if c := m.plans[res.Plan]; c != nil {
		c.Inc()
	}
	for _, c := range res.Changes {
		switch c.Action {
		case rewrite.Wrote:
			inc(&m.written, m.tagsWritten, c.Identity)
		case rewrite.Replaced:
			inc(&m.removed, m.tagsRemoved, c.Identity)
		case rewrite.Dropped:
			inc(&m.removed, m.tagsRemoved, c.Identity)
			if isURLDropReason(c.Reason) {
				inc(&m.dropped, m.urlsDropped, c.Reason)
			}
		}
	}
}

// countDropped records rule values the rules refused (Head.Dropped).
func (m *metrics) countDropped(ds []rules.Drop) {
	for _, d := range ds {
		inc(&m.dropped, m.urlsDropped, d.Reason)
	}
}

func isURLDropReason(r string) bool {
	switch r {
	case rules.DropControl, rules.DropSpace, rules.DropScheme, rules.DropOtherHost, rules.DropCrossOrigin, rules.DropUnparsable:
		return true
	}
	return false
}
