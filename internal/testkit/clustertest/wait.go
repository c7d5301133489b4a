package clustertest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// pollInterval is how often WaitFor looks again.
const pollInterval = 100 * time.Millisecond

// WaitFor polls cond until it reports done, and fails the test when timeout
// passes first, with cond's last description of what it still waits for.
// An error from cond fails the test at once.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() (done bool, waitingFor string, err error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, waiting, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not done after %s: %s", what, timeout, waiting)
		}
		// Polling: the condition lives in files written by other
		// processes, or in the store, which signal nothing.
		time.Sleep(pollInterval)
	}
}

// MemoryLog collects the records of jobs that run in the test process. It is
// safe for concurrent use.
type MemoryLog struct {
	mu      sync.Mutex
	records []firelog.Record
}

// Add appends a record.
func (l *MemoryLog) Add(r firelog.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r)
}

// Records returns a copy of the records so far.
func (l *MemoryLog) Records() []firelog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records)
}

// RecordJob returns the in-process twin of testnode's "record" job for a
// node: it adds one fire record, stamped with the true clock.
func (l *MemoryLog) RecordJob(node string) chime.Job {
	return chime.JobFunc(func(_ context.Context, jc *chime.JobContext) error {
		key := jc.Job.Key.String()
		if jc.Trigger != nil {
			key = jc.Trigger.Key.String()
		}
		l.Add(firelog.Record{
			Trigger:    key,
			Scheduled:  jc.ScheduledFireTime,
			Actual:     time.Now(),
			Node:       node,
			Recovering: jc.Recovering,
			Event:      firelog.EventFire,
		})
		return nil
	})
}
