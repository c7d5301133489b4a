package server

import (
	"fmt"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
)

func TestCreateJobsCreatesAllOrNone(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		batch := func(names ...string) []api.Job {
			var jobs []api.Job
			for _, n := range names {
				j := httpJob(t, "g", n, "https://example.com/"+n)
				j.Triggers = []api.Trigger{{Name: n, Schedule: cronSchedule("0 0 2 * * ?")}}
				jobs = append(jobs, j)
			}
			return jobs
		}

		jobs := batch("a", "b", "c")
		jobs[2].Paused = true
		res, err := s.CreateJobs(ctx, "alice", jobs)
		if err != nil {
			t.Fatalf("CreateJobs: %v", err)
		}
		if len(res.Created) != 3 || res.Created[1].Name != "b" {
			t.Fatalf("CreateJobs created %+v, want a, b and c in order", res.Created)
		}
		for _, n := range []string{"a", "b", "c"} {
			got, err := s.GetJob(ctx, "g", n)
			if err != nil {
				t.Fatalf("GetJob(%s): %v", n, err)
			}
			if len(got.Triggers) != 1 || got.Paused != (n == "c") {
				t.Errorf("job %s: %d triggers, paused %v; want 1 trigger, paused only for c", n, len(got.Triggers), got.Paused)
			}
			entries, err := s.ListAudit(ctx, api.AuditQuery{Target: jobTarget(chime.NewJobKey("g", n))})
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			if len(entries.Entries) != 1 || entries.Entries[0].Actor != "alice" {
				t.Errorf("audit of job %s: %+v, want one entry by alice", n, entries.Entries)
			}
		}

		tests := []struct {
			name  string
			jobs  []api.Job
			code  api.ErrorCode
			field string
		}{
			{"JobKeyTaken", batch("d", "a"), api.CodeConflict, "jobs"},
			{"TriggerOfAnotherJob", func() []api.Job {
				jobs := batch("d", "e")
				jobs[1].Triggers[0].Name = "b" // the trigger of job b in group g
				return jobs
			}(), api.CodeConflict, "jobs"},
			{"SameKeyTwice", batch("d", "e", "d"), api.CodeInvalidArgument, "jobs[2].name"},
			{"SameTriggerNameTwiceInAGroup", func() []api.Job {
				jobs := batch("d", "e")
				jobs[1].Triggers[0].Name = "d"
				return jobs
			}(), api.CodeInvalidArgument, "jobs[1].triggers[0].name"},
			{"BadSchedule", func() []api.Job {
				jobs := batch("d", "e")
				jobs[1].Triggers[0].Schedule = cronSchedule("not cron")
				return jobs
			}(), api.CodeInvalidArgument, "jobs[1].triggers[0].schedule.expression"},
			{"MissingCalendar", func() []api.Job {
				jobs := batch("d", "e")
				jobs[1].Triggers[0].Calendar = "missing"
				return jobs
			}(), api.CodeInvalidArgument, "jobs[1].triggers[0].calendar"},
			{"Empty", nil, api.CodeInvalidArgument, "jobs"},
			{"TooMany", func() []api.Job {
				names := make([]string, api.MaxJobBatch+1)
				for i := range names {
					names[i] = fmt.Sprintf("x%d", i)
				}
				return batch(names...)
			}(), api.CodeInvalidArgument, "jobs"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.CreateJobs(ctx, "alice", tc.jobs)
				wantAPIError(t, err, tc.code, tc.field)
				for _, n := range []string{"d", "e"} {
					_, err := s.GetJob(ctx, "g", n)
					wantAPIError(t, err, api.CodeNotFound, "")
				}
			})
		}
	})
}
