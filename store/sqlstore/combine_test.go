package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestConcurrentNewJobsGetTheirOwnOutcome writes new jobs from many
// goroutines at once, as request handlers that create a job each do,
// while the store holds its writes back, so that they all meet in one
// batch. The store combines them into one transaction; each caller must
// still get its own outcome: a new job is stored, a taken key and a
// missing calendar are refused with the key or name, and no refusal
// undoes another caller's job. On PostgreSQL the statement log shows the
// jobs were combined: far fewer statements inserted jobs than there were
// jobs, refusals included.
func TestConcurrentNewJobsGetTheirOwnOutcome(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			var (
				s   *sqlstore.Store
				log *statementLog
			)
			if db.Name == "Postgres" {
				s, log = openCounted(t)
			} else {
				s = open(t, db.URL(t), nil)
			}
			ctx := t.Context()
			at := time.Now().Add(time.Hour)
			job := func(name, calendar string) *store.JobWriteParams {
				k := store.Key{Group: "g", Name: name}
				return &store.JobWriteParams{Job: store.JobRecord{Key: k, Type: "noop"}, Triggers: []store.TriggerRecord{{
					Key: k, JobKey: k, Kind: "simple", Schedule: []byte(`{}`), CalendarName: calendar, StartTime: at, NextFireTime: at,
				}}}
			}
			if _, err := s.JobWrite(ctx, job("taken", "")); err != nil {
				t.Fatalf("JobWrite: %v", err)
			}
			if log != nil {
				log.take()
			}
			const n = 64
			errs := make([]error, n)
			queued, release := sqlstore.HoldInserts(s)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					p := job(fmt.Sprintf("j%02d", i), "")
					switch i {
					case 13:
						p = job("taken", "")
					case 40:
						p = job(fmt.Sprintf("j%02d", i), "missing")
					}
					_, errs[i] = s.JobWrite(ctx, p)
				})
			}
			for deadline := time.Now().Add(time.Minute); queued() < n; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d writes queued after a minute", queued(), n)
				}
			}
			release()
			wg.Wait()
			stored := 0
			for i, err := range errs {
				name := fmt.Sprintf("j%02d", i)
				switch i {
				case 13:
					if !errors.Is(err, store.ErrJobExists) || !strings.Contains(err.Error(), "g.taken") {
						t.Errorf("writing the taken job g.taken: %v, want ErrJobExists naming it", err)
					}
					continue
				case 40:
					if !errors.Is(err, store.ErrCalendarNotFound) || !strings.Contains(err.Error(), `"missing"`) {
						t.Errorf("writing %s with a missing calendar: %v, want ErrCalendarNotFound naming it", name, err)
					}
					if _, err := s.JobGet(ctx, store.Key{Group: "g", Name: name}); !errors.Is(err, store.ErrJobNotFound) {
						t.Errorf("JobGet(%s) after its refused write: %v, want ErrJobNotFound", name, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("writing %s: %v", name, err)
					continue
				}
				if _, err := s.TriggerGet(ctx, store.Key{Group: "g", Name: name}); err != nil {
					t.Errorf("TriggerGet(%s): %v", name, err)
				}
				stored++
			}
			if want := n - 2; stored != want {
				t.Errorf("%d jobs stored, want %d", stored, want)
			}
			if log != nil {
				// Each statement that inserts jobs, alone (WITH p AS …) or
				// in a transaction (INSERT INTO …jobs), stores one or more.
				writes := 0
				for _, q := range log.take() {
					if strings.HasPrefix(q, "WITH p AS") || (strings.HasPrefix(q, "INSERT INTO ") && strings.Contains(q, "_jobs (")) {
						writes++
					}
				}
				t.Logf("%d jobs written by %d statements", n, writes)
				if writes > n/2 {
					t.Errorf("%d statements inserted jobs for %d writes: the writes were not combined", writes, n)
				}
			}
		})
	}
}

// TestQueuedNewJobWithdrawnWhenItsContextEnds checks that a new job
// waiting for an earlier write is withdrawn when its caller's context
// ends: the call returns the context's error and the job is not stored.
func TestQueuedNewJobWithdrawnWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	s := open(t, dbtest.SQLiteURL(t), nil)
	queued, release := sqlstore.HoldInserts(s)
	ctx, cancel := context.WithCancel(t.Context())
	k := store.Key{Group: "g", Name: "withdrawn"}
	done := make(chan error, 1)
	go func() {
		_, err := s.JobWrite(ctx, &store.JobWriteParams{Job: store.JobRecord{Key: k, Durable: true}})
		done <- err
	}()
	for queued() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("JobWrite with its context canceled while queued: %v, want context.Canceled", err)
	}
	if n := queued(); n != 0 {
		t.Errorf("%d writes queued after the only one was withdrawn", n)
	}
	release()
	if _, err := s.JobWrite(t.Context(), &store.JobWriteParams{Job: store.JobRecord{Key: store.Key{Group: "g", Name: "after"}, Durable: true}}); err != nil {
		t.Fatalf("JobWrite after the release: %v", err)
	}
	if _, err := s.JobGet(t.Context(), k); !errors.Is(err, store.ErrJobNotFound) {
		t.Errorf("JobGet of the withdrawn job: %v, want ErrJobNotFound", err)
	}
}
