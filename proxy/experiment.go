package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/rules"
)

// newExperimentPages is headgate_experiment_pages_total{experiment, group}
// (SPEC §21): page responses served under an experiment's match, by group.
// A counter, not the gauge §21 sketches: "pages served per group" only
// grows, and a rate over it (or its increase since the test's start) says
// what a gauge of distinct pages would need a set of every URL for; the
// number of distinct pages per group is the export's (`headgate
// experiment export`), which lists them.
func newExperimentPages() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_experiment_pages_total",
		Help: "Page responses served under an experiment's match, by experiment and group (control or variant).",
	}, []string{"experiment", "group"})
}

// experimentPage counts a page response of an experiment. Responses
// headgate answered itself (a deny, a redirect, a 400) are no page of the
// test. The counters are looked up once per experiment name (a map under
// a read lock: a name's series outlive reloads, as the vector's do).
func (m *metrics) experimentPage(mt *rules.Match, o Outcome) {
	if mt == nil || o.AnsweredItself() {
		return
	}
	name, group := mt.Experiment()
	if name == "" {
		return
	}
	m.expMu.RLock()
	c := m.expCounters[name]
	m.expMu.RUnlock()
	if c == nil {
		m.expMu.Lock()
		if c = m.expCounters[name]; c == nil {
			c = &[2]prometheus.Counter{
				m.expPages.WithLabelValues(name, rules.GroupControl),
				m.expPages.WithLabelValues(name, rules.GroupVariant),
			}
			if m.expCounters == nil {
				m.expCounters = map[string]*[2]prometheus.Counter{}
			}
			m.expCounters[name] = c
		}
		m.expMu.Unlock()
	}
	i := 0
	if group == rules.GroupVariant {
		i = 1
	}
	c[i].Inc()
}
