package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/server/history"
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
	// fireBatch and fireTime measure the store calls that fire triggers:
	// how many firings each carried, and how long it took.
	fireBatch prometheus.Histogram
	fireTime  prometheus.Histogram
	// historyBatch counts the records of each history transaction of
	// the executions' starts and ends (see historyWriter).
	historyBatch prometheus.Histogram
	liveNodes    prometheus.Gauge
	running      prometheus.Gauge
	// jobs are the per-job series; nil when Config.DisableJobMetrics
	// turns them off.
	jobs *jobMetrics
}

// newMetrics creates the server's metrics, with the per-job series unless
// perJob is false.
func newMetrics(perJob bool) *metrics {
	build := ReadBuildInfo()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "chime_build_info",
		Help: "Always 1; its labels say which build this node runs.",
		ConstLabels: prometheus.Labels{
			"version": build.Version, "revision": build.Revision, "goversion": build.GoVersion,
		},
	})
	buildInfo.Set(1)
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
		fireBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "chime_store_fire_batch_size",
			Help: "Firings per store call that fired triggers: triggers due together fire in one transaction.",
			// 1 to 1,024, the engine's largest batch.
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		fireTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "chime_store_fire_duration_seconds",
			Help:    "How long each store call that fired a batch of triggers took.",
			Buckets: prometheus.ExponentialBuckets(.0005, 2, 14),
		}),
		historyBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "chime_history_batch_size",
			Help: "Records (an execution's start, end, or both) per history transaction: what runs together is recorded in one commit.",
			// 1 to 256, the history writer's largest batch.
			Buckets: prometheus.ExponentialBuckets(1, 2, 9),
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
	m.reg.MustRegister(m.fires, m.fireLag, m.executions, m.retries, m.misfires, m.claim, m.fireBatch, m.fireTime, m.historyBatch, m.liveNodes, m.running, buildInfo,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if perJob {
		m.jobs = newJobMetrics()
		m.reg.MustRegister(m.jobs.executions, m.jobs.lastSuccess)
	}
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
		{"chime_alerts_dropped_total", "Alerts dropped without delivery: decided while the server stopped, or impossible to encode.", func() uint64 { return a.stats().Dropped }},
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

// executed counts a finished execution of job, which ended at finished.
func (m *metrics) executed(job chime.JobKey, o history.Outcome, finished time.Time) {
	m.executions.WithLabelValues(string(o)).Inc()
	if m.jobs != nil {
		m.jobs.executed(job, o, finished, true)
	}
}

// attemptEnded counts the execution of attempt a, which ended at
// finished, as executed does, except that the last run of a job that
// goes with it (see attempt.passing) gets no per-job series when the
// job has none yet: a one-shot job created through the library, run by
// server nodes, would leave series that are stale at once and that the
// node holds until its next sweep (in W1b through the server, 50,000
// jobs' series tripled the node's garbage collection). The totals by
// outcome count it, and a new series' first count is not seen by
// Prometheus's rate or increase anyway.
func (m *metrics) attemptEnded(a *attempt, o history.Outcome, finished time.Time) {
	m.executions.WithLabelValues(string(o)).Inc()
	if m.jobs != nil {
		m.jobs.executed(a.job, o, finished, !a.passing)
	}
}

// jobDeleted removes the series of a deleted job.
func (m *metrics) jobDeleted(job chime.JobKey) {
	if m.jobs != nil {
		m.jobs.forget(job)
	}
}

// jobMetrics are the per-job series: executions by job and outcome, and
// each job's last success. Their cardinality is bounded by the jobs this
// node ran times the outcomes they had (at most the six outcomes of a
// finished execution, plus one last-success series per job), and the
// series of a job go when it is deleted.
type jobMetrics struct {
	executions  *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec

	// mu orders the updates of a job's series with their removal, so
	// that a sweep cannot remove a series as it is created.
	mu sync.Mutex
	// seen holds the jobs that have series, with their last success (zero
	// before the first).
	seen map[chime.JobKey]time.Time
}

// Labels of the per-job series. "job" is left to Prometheus, which sets it
// to the scrape job's name.
const (
	labelJobGroup = "job_group"
	labelJobName  = "job_name"
)

func newJobMetrics() *jobMetrics {
	return &jobMetrics{
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chime_job_executions_total",
			Help: "Executions of each job this node finished, by outcome.",
		}, []string{labelJobGroup, labelJobName, "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "chime_job_last_success_timestamp_seconds",
			Help: "When the last successful execution of each job on this node finished, in seconds since the Unix epoch.",
		}, []string{labelJobGroup, labelJobName}),
		seen: make(map[chime.JobKey]time.Time),
	}
}

// executed counts an execution of job, and records a success's time.
// Without create, a job that has no series yet gets none.
func (j *jobMetrics) executed(job chime.JobKey, o history.Outcome, finished time.Time, create bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.seen[job]; !ok && !create {
		return
	}
	j.executions.WithLabelValues(job.Group, job.Name, string(o)).Inc()
	last := j.seen[job]
	// Executions may finish out of order: the last success only moves
	// forward.
	if o == history.OutcomeSucceeded && finished.After(last) {
		last = finished
		j.lastSuccess.WithLabelValues(job.Group, job.Name).Set(float64(finished.UnixNano()) / 1e9)
	}
	j.seen[job] = last
}

// forget removes a job's series.
func (j *jobMetrics) forget(job chime.JobKey) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.forgetLocked(job)
}

func (j *jobMetrics) forgetLocked(job chime.JobKey) {
	labels := prometheus.Labels{labelJobGroup: job.Group, labelJobName: job.Name}
	j.executions.DeletePartialMatch(labels)
	j.lastSuccess.Delete(labels)
	delete(j.seen, job)
}

// tracked returns the jobs that have series.
func (j *jobMetrics) tracked() []chime.JobKey {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Collect(maps.Keys(j.seen))
}

// sweepJobMetrics removes the per-job series of the jobs that no longer
// exist: those deleted through another node, or with their last trigger.
// (DeleteJob removes those of the jobs deleted through this node at
// once.) Only jobs that had series before the jobs were listed can go, so
// that a job created meanwhile keeps its series.
func (s *Server) sweepJobMetrics(ctx context.Context) error {
	if s.metrics.jobs == nil {
		return nil
	}
	tracked := s.metrics.jobs.tracked()
	if len(tracked) == 0 {
		return nil
	}
	// Only the tracked jobs' keys are kept, however many jobs there are.
	exists := make(map[chime.JobKey]bool, len(tracked))
	for _, job := range tracked {
		exists[job] = false
	}
	err := s.eachJob(ctx, "", chime.MaxJobPageLimit, func(d *chime.JobDetail) error {
		if _, ok := exists[d.Key]; ok {
			exists[d.Key] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: listing jobs: %w", err)
	}
	for _, job := range tracked {
		if !exists[job] {
			s.metrics.jobs.forget(job)
		}
	}
	return nil
}

// TriggersAcquired times a claim of due triggers: the scheduler's
// chime.Metrics.
func (m *metrics) TriggersAcquired(_ int, took time.Duration) {
	m.claim.Observe(took.Seconds())
}

// TriggersFired times a store call that fired a batch of triggers and
// counts its firings: the scheduler's chime.Metrics.
func (m *metrics) TriggersFired(firings int, took time.Duration) {
	m.fireTime.Observe(took.Seconds())
	m.fireBatch.Observe(float64(firings))
}

// historyWritten counts the records of a history transaction that
// committed.
func (m *metrics) historyWritten(records int) {
	m.historyBatch.Observe(float64(records))
}
