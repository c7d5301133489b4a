package chime_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// BenchmarkCreateJobs measures creating one-shot jobs, each with one
// trigger, on an SQLite file: one ScheduleJob per job, and ScheduleJobs
// in batches of 1,000. One op is one job created. docs/performance.md
// ("Creating jobs") has the figures, and the database CPU per job that
// chime-bench measures on PostgreSQL and MariaDB.
func BenchmarkCreateJobs(b *testing.B) {
	for _, mode := range []string{"ScheduleJob", "ScheduleJobs"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "chime.db"), &sqlstore.Options{Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			s, err := chime.New(chime.Config{Store: st, Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Stop(ctx)
			due := time.Now().Add(time.Hour)
			job := func(i int) chime.JobToSchedule {
				name := fmt.Sprintf("j%d", i)
				return chime.JobToSchedule{
					Job:      chime.JobDetail{Key: chime.NewJobKey("bench", name), Type: "noop"},
					Triggers: []chime.Trigger{{Key: chime.NewTriggerKey("bench", name), Schedule: &schedule.Simple{}, StartTime: due}},
				}
			}
			const batch = 1000
			b.ReportAllocs()
			b.ResetTimer()
			begin := time.Now()
			if mode == "ScheduleJob" {
				for i := range b.N {
					j := job(i)
					if err := s.ScheduleJob(ctx, j.Job, j.Triggers, nil); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				jobs := make([]chime.JobToSchedule, 0, batch)
				for i := range b.N {
					jobs = append(jobs, job(i))
					if len(jobs) == batch || i == b.N-1 {
						if err := s.ScheduleJobs(ctx, jobs); err != nil {
							b.Fatal(err)
						}
						jobs = jobs[:0]
					}
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "jobs/s")
		})
	}
}
