package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// BenchmarkAcquireFire measures one engine round on each database holding
// 2,000 waiting triggers: acquire a batch of 100 due triggers and fire
// each (one transaction per fire), moving it to the back of the queue.
// Reported per batch; divide ns/op by 100 for one firing.
func BenchmarkAcquireFire(b *testing.B) {
	const (
		triggers = 2_000
		batch    = 100
	)
	for _, db := range dbtest.Databases() {
		b.Run(db.Name, func(b *testing.B) {
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
				for i := range acq {
					tr := &acq[i]
					p := store.TriggerFireParams{
						Lease:     lease,
						Trigger:   *tr,
						Execution: store.ExecutionRecord{ScheduledTime: tr.NextFireTime, FiredTime: tr.NextFireTime},
					}
					p.Trigger.PreviousFireTime = tr.NextFireTime
					p.Trigger.NextFireTime = tr.NextFireTime.Add(10 * time.Second)
					p.Trigger.TimesTriggered++
					if _, err := s.TriggerFire(ctx, &p); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
