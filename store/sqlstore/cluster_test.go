package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestSeveralStoresFireEveryInstantOnce runs three stores on one database
// and scheduler, each with its own connection pool as separate processes
// have, and two workers per store acquiring, firing and completing the
// same triggers. Every (trigger, fire time) must fire exactly once. On
// SQLite this exercises the busy timeout between pools.
func TestSeveralStoresFireEveryInstantOnce(t *testing.T) {
	t.Parallel()
	const (
		stores   = 3
		workers  = 2
		triggers = 30
		fires    = 4
		total    = triggers * fires
	)
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			sched := schedName()
			ss := make([]*sqlstore.Store, stores)
			for i := range ss {
				ss[i] = open(t, url, &sqlstore.Options{SchedulerName: sched, MaxOpenConns: 2})
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			free, single := store.Key{Group: "g", Name: "free"}, store.Key{Group: "g", Name: "single"}
			for _, j := range []store.JobRecord{{Key: free, Durable: true}, {Key: single, Durable: true, DisallowConcurrent: true}} {
				if err := ss[0].JobUpsert(ctx, &store.JobUpsertParams{Job: j}); err != nil {
					t.Fatalf("JobUpsert: %v", err)
				}
			}
			for i := range triggers {
				jk := free
				if i%5 == 0 {
					jk = single
				}
				tr := store.TriggerRecord{Key: store.Key{Group: "t", Name: fmt.Sprintf("%02d", i)}, JobKey: jk,
					Kind: "simple", Schedule: []byte(`{}`), StartTime: base, NextFireTime: base.Add(time.Duration(i%7) * time.Second)}
				if err := ss[i%stores].TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
					t.Fatalf("TriggerInsert: %v", err)
				}
			}

			var (
				mu       sync.Mutex
				fired    = make(map[string]string) // "trigger@time" -> worker
				done     int
				problems []error
			)
			work := func(s *sqlstore.Store, id string) error {
				n, err := s.NodeRegister(ctx, id)
				if err != nil {
					return err
				}
				l := store.Lease{NodeID: n.ID, Epoch: n.Epoch}
				for {
					mu.Lock()
					finished := done >= total
					mu.Unlock()
					if finished {
						return nil
					}
					if ctx.Err() != nil {
						return ctx.Err()
					}
					acq, err := s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: l, NoLaterThan: base.AddDate(1, 0, 0), Limit: 3})
					if err != nil {
						return fmt.Errorf("TriggersAcquire: %w", err)
					}
					if len(acq) == 0 {
						// Everything due is held by others or blocked: let them
						// progress rather than spin on the database.
						time.Sleep(2 * time.Millisecond)
						continue
					}
					for _, tr := range acq {
						p := &store.TriggerFireParams{Lease: l, Trigger: tr, Execution: store.ExecutionRecord{ScheduledTime: tr.NextFireTime}}
						p.Trigger.PreviousFireTime = tr.NextFireTime
						p.Trigger.TimesTriggered++
						p.Trigger.NextFireTime = tr.NextFireTime.Add(time.Minute)
						if p.Trigger.TimesTriggered >= fires {
							p.Trigger.NextFireTime = time.Time{}
						}
						res, err := s.TriggerFire(ctx, p)
						if err != nil {
							return fmt.Errorf("TriggerFire(%s): %w", tr.Key, err)
						}
						if res.Blocked {
							continue
						}
						instant := fmt.Sprintf("%s@%d", tr.Key, tr.NextFireTime.UnixNano())
						mu.Lock()
						if other, ok := fired[instant]; ok {
							problems = append(problems, fmt.Errorf("%s fired by %s and %s", instant, other, id))
						}
						fired[instant] = id
						done++
						mu.Unlock()
						err = s.ExecutionComplete(ctx, &store.ExecutionCompleteParams{Lease: l, ID: p.Execution.ID,
							State: store.ExecutionSucceeded, Instruction: store.InstructionNoop})
						if err != nil {
							return fmt.Errorf("ExecutionComplete: %w", err)
						}
					}
				}
			}
			var wg sync.WaitGroup
			for i, s := range ss {
				for w := range workers {
					wg.Go(func() {
						if err := work(s, fmt.Sprintf("node-%d-%d", i, w)); err != nil {
							mu.Lock()
							problems = append(problems, err)
							mu.Unlock()
							cancel()
						}
					})
				}
			}
			wg.Wait()
			for _, err := range problems {
				if !errors.Is(err, context.Canceled) {
					t.Error(err)
				}
			}
			if len(fired) != total {
				t.Errorf("%d instants fired, want %d", len(fired), total)
			}
			es, err := ss[1].ExecutionList(t.Context(), &store.ExecutionListParams{})
			if err != nil || len(es) != total {
				t.Errorf("%d executions recorded (%v), want %d", len(es), err, total)
			}
		})
	}
}
