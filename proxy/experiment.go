package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headgate/headgate/rules"
)

// newExperimentPages is headgate_experiment_pages{experiment, group}
// (SPEC §21): page responses served under an experiment's match, by group.
// It only rises, as a counter does, but it is declared a gauge so that its
// name is §21's in every exposition: in OpenMetrics (which /metrics
// negotiates, and Prometheus asks for first) a counter's samples are
// written with "_total" appended, so a counter named
// headgate_experiment_pages would reach Prometheus as ..._total. rate()
// and increase() apply to it as to a counter (it restarts at 0 with the
// process, which both handle). The number of distinct pages per group is
// the export's (`headgate experiment export`), which lists them.
func newExperimentPages() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "headgate_experiment_pages",
		Help: "Page responses served under an experiment's match, by experiment and group (control or variant); only rises (use rate or increase).",
	}, []string{"experiment", "group"})
}

// experimentPage counts a page response of an experiment. Responses
// headgate answered itself (a deny, a redirect, a 400) are no page of the
// test. The series are looked up once per experiment name (a map under
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
			c = &[2]prometheus.Gauge{
				m.expPages.WithLabelValues(name, rules.GroupControl),
				m.expPages.WithLabelValues(name, rules.GroupVariant),
			}
			if m.expCounters == nil {
				m.expCounters = map[string]*[2]prometheus.Gauge{}
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
