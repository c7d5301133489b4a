package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/store"
)

// metrics are the server's Prometheus metrics, on a registry of its own.
type metrics struct {
	reg        *prometheus.Registry
	fires      prometheus.Counter
	fireLag    prometheus.Histogram
	executions *prometheus.CounterVec
	retries    prometheus.Counter
	misfires   prometheus.Counter
	claim      prometheus.Histogram
	liveNodes  prometheus.Gauge
	running    prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		fires: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chime_fires_total",
			Help: "Firings this node ran (scheduled, manual, retries and backfills).",
		}),
		fireLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "chime_fire_lag_seconds",
			Help:    "How late firings started after their scheduled fire time.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chime_executions_total",
			Help: "Executions this node finished, by outcome.",
		}, []string{"outcome"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chime_retries_total",
			Help: "Retries this node scheduled after a failed attempt.",
		}),
		misfires: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chime_misfires_total",
			Help: "Triggers this node found past their fire time, whose misfire instruction it applied.",
		}),
		claim: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "chime_claim_duration_seconds",
			Help:    "How long claiming due triggers from the database took.",
			Buckets: prometheus.ExponentialBuckets(.0005, 2, 14),
		}),
		liveNodes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chime_live_nodes",
			Help: "Nodes of the cluster holding a live lease, as this node last saw them.",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "chime_running_executions",
			Help: "Executions running on this node.",
		}),
	}
	m.reg.MustRegister(m.fires, m.fireLag, m.executions, m.retries, m.misfires, m.claim, m.liveNodes, m.running,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the metrics.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// watchScheduler exports the scheduler's clock offset.
func (m *metrics) watchScheduler(s *chime.Scheduler) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "chime_clock_offset_seconds",
		Help: "Estimated offset of the database's clock from this node's clock.",
	}, func() float64 { return s.ClockOffset().Seconds() }))
}

// watchAlerts exports what the alert notifiers did.
func (m *metrics) watchAlerts(a *alerter) {
	for _, c := range []struct {
		name, help string
		get        func() uint64
	}{
		{"chime_alerts_delivered_total", "Alert e-mails and webhook requests delivered.", func() uint64 { return a.stats().Delivered }},
		{"chime_alerts_failed_total", "Alert e-mails and webhook requests given up after their retries.", func() uint64 { return a.stats().Failed }},
		{"chime_alerts_suppressed_total", "Alerts the rate limit held back.", func() uint64 { return a.stats().Suppressed }},
		{"chime_alerts_dropped_total", "Alerts dropped because the queue was full.", func() uint64 { return a.stats().Dropped }},
	} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help},
			func() float64 { return float64(c.get()) }))
	}
}

// fired counts a firing and its lag.
func (m *metrics) fired(scheduled, fired time.Time) {
	m.fires.Inc()
	if !scheduled.IsZero() && !fired.IsZero() {
		m.fireLag.Observe(max(fired.Sub(scheduled), 0).Seconds())
	}
}

// executed counts a finished execution.
func (m *metrics) executed(o history.Outcome) {
	m.executions.WithLabelValues(string(o)).Inc()
}

// instrument returns st measuring how long claiming triggers takes.
func (m *metrics) instrument(st store.Store) store.Store {
	return &instrumentedStore{Store: st, claim: m.claim}
}

// instrumentedStore is a store.Store that times TriggersAcquire, and
// passes WatchTriggers on when the store can push.
type instrumentedStore struct {
	store.Store
	claim prometheus.Observer
}

// TriggersAcquire claims due triggers, timing the claim.
func (s *instrumentedStore) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	start := time.Now()
	out, err := s.Store.TriggersAcquire(ctx, p)
	if err == nil {
		s.claim.Observe(time.Since(start).Seconds())
	}
	return out, err
}

// WatchTriggers is the store's, or errors.ErrUnsupported when it has none.
func (s *instrumentedStore) WatchTriggers(ctx context.Context) (<-chan time.Time, error) {
	if w, ok := s.Store.(store.TriggerWatcher); ok {
		return w.WatchTriggers(ctx)
	}
	return nil, fmt.Errorf("server: the store cannot push wake-ups: %w", errors.ErrUnsupported)
}
