package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// BenchmarkAcquireFireComplete measures one engine round on each database
// holding 2,000 waiting triggers: acquire a batch of 100 due triggers, fire
// them (moving each to the back of the queue) and complete their
// executions, either one transaction per firing and per completion
// (TriggerFire, ExecutionComplete) or one per batch (TriggersFire,
// ExecutionsComplete). Reported per batch; divide ns/op by 100 for one
// firing.
func BenchmarkAcquireFireComplete(b *testing.B) {
	const (
		triggers = 2_000
		batch    = 100
	)
	for _, db := range dbtest.Databases() {
		for _, batched := range []bool{false, true} {
			name := db.Name + "/OneByOne"
			if batched {
				name = db.Name + "/Batched"
			}
			b.Run(name, func(b *testing.B) {
				ctx := b.Context()
				s := open(b, db.URL(b), &sqlstore.Options{SchedulerName: "bench"})
				job := store.Key{Group: "bench", Name: "job"}
				if err := s.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: job, Durable: true}}); err != nil {
					b.Fatal(err)
				}
				base := time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)
				for i := range triggers {
					tr := store.TriggerRecord{
						Key:          store.Key{Group: "bench", Name: fmt.Sprintf("t%05d", i)},
						JobKey:       job,
						Kind:         "simple",
						Schedule:     []byte(`{"repeatCount":-1,"repeatIntervalMs":1000}`),
						StartTime:    base,
						NextFireTime: base.Add(time.Duration(i) * time.Millisecond),
					}
					if err := s.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: tr}); err != nil {
						b.Fatal(err)
					}
				}
				n, err := s.NodeRegister(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				lease := store.Lease{NodeID: n.ID, Epoch: n.Epoch}
				far := base.AddDate(100, 0, 0)

				b.ReportAllocs()
				for b.Loop() {
					acq, err := s.TriggersAcquire(ctx, &store.TriggersAcquireParams{Lease: lease, NoLaterThan: far, Limit: batch})
					if err != nil || len(acq) != batch {
						b.Fatalf("TriggersAcquire = %d triggers, %v", len(acq), err)
					}
					firings := make([]store.TriggerFiring, len(acq))
					for i := range acq {
						tr := &acq[i]
						f := store.TriggerFiring{
							Trigger:   *tr,
							Execution: store.ExecutionRecord{ScheduledTime: tr.NextFireTime, FiredTime: tr.NextFireTime},
						}
						f.Trigger.PreviousFireTime = tr.NextFireTime
						f.Trigger.NextFireTime = tr.NextFireTime.Add(10 * time.Second)
						f.Trigger.TimesTriggered++
						firings[i] = f
					}
					completions := make([]store.ExecutionCompletion, len(acq))
					if batched {
						out, err := s.TriggersFire(ctx, &store.TriggersFireParams{Lease: lease, Firings: firings})
						if err != nil {
							b.Fatal(err)
						}
						for i, o := range out {
							if o.Err != nil {
								b.Fatal(o.Err)
							}
							completions[i] = store.ExecutionCompletion{ID: firings[i].Execution.ID, State: store.ExecutionSucceeded}
						}
						errs, err := s.ExecutionsComplete(ctx, &store.ExecutionsCompleteParams{Lease: lease, Completions: completions})
						if err != nil {
							b.Fatal(err)
						}
						for _, err := range errs {
							if err != nil {
								b.Fatal(err)
							}
						}
						continue
					}
					for i := range firings {
						p := store.TriggerFireParams{Lease: lease, Trigger: firings[i].Trigger, Execution: firings[i].Execution}
						if _, err := s.TriggerFire(ctx, &p); err != nil {
							b.Fatal(err)
						}
						err := s.ExecutionComplete(ctx, &store.ExecutionCompleteParams{Lease: lease, ID: p.Execution.ID, State: store.ExecutionSucceeded})
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
