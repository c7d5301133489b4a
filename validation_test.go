package chime_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// TestScheduleJobNamesTheRefusedFieldOfTheThirdTrigger checks that
// ScheduleJob refuses a job whose third trigger is invalid with a
// *ValidationError whose path names triggers[2] and the field, the path
// the server's API answers with in its own names, and that nothing is
// written: the job stored before stays as it was.
func TestScheduleJobNamesTheRefusedFieldOfTheThirdTrigger(t *testing.T) {
	t.Parallel()
	cron := func(name, expr string) chime.Trigger {
		c, err := schedule.NewCron(expr, "UTC")
		if err != nil {
			t.Fatalf("NewCron(%q): %v", expr, err)
		}
		return chime.Trigger{Key: chime.NewTriggerKey("reports", name), Schedule: c}
	}
	with := func(tr chime.Trigger, edit func(*chime.Trigger)) chime.Trigger {
		edit(&tr)
		return tr
	}
	job := chime.JobDetail{Key: chime.NewJobKey("reports", "nightly"), Type: "record", Description: "nightly report", Durable: true}
	stored := []chime.Trigger{cron("a", "0 0 1 * * ?"), cron("b", "0 0 2 * * ?"), cron("c", "0 0 3 * * ?")}
	tests := []struct {
		name  string
		third chime.Trigger
		field string
		is    error
	}{
		{"cron not built by NewCron", with(cron("c", "0 0 3 * * ?"), func(tr *chime.Trigger) { tr.Schedule = &schedule.Cron{} }),
			"triggers[2].Schedule.expression", nil},
		{"cron that never fires", cron("c", "0 0 0 30 2 ?"), "triggers[2].Schedule", chime.ErrWillNeverFire},
		{"priority out of range", with(cron("c", "0 0 3 * * ?"), func(tr *chime.Trigger) { tr.Priority = 1 << 31 }), "triggers[2].Priority", nil},
		{"misfire of another kind", with(cron("c", "0 0 3 * * ?"), func(tr *chime.Trigger) { tr.MisfireInstruction = schedule.MisfireFireNow }),
			"triggers[2].MisfireInstruction", nil},
		{"end before start", with(cron("c", "0 0 3 * * ?"), func(tr *chime.Trigger) {
			tr.StartTime = time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
			tr.EndTime = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		}), "triggers[2].EndTime", nil},
		{"missing calendar", with(cron("c", "0 0 3 * * ?"), func(tr *chime.Trigger) { tr.CalendarName = "holidays" }),
			"triggers[2].CalendarName", chime.ErrCalendarNotFound},
	}
	for name, newStore := range limitStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newScheduler(t, chime.Config{Store: newStore(t)})
			if err := s.ScheduleJob(ctx, job, stored, nil); err != nil {
				t.Fatalf("ScheduleJob: %v", err)
			}
			before, err := s.Job(ctx, job.Key)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					changed := job
					changed.Description = "changed"
					err := s.ScheduleJob(ctx, changed, []chime.Trigger{stored[0], stored[1], tc.third}, &chime.ScheduleJobOptions{Replace: true})
					var ve *chime.ValidationError
					if !errors.As(err, &ve) || ve.Field != tc.field || (tc.is != nil && !errors.Is(err, tc.is)) {
						t.Fatalf("ScheduleJob: err = %v, want a ValidationError on %s (matching %v)", err, tc.field, tc.is)
					}
					after, err := s.Job(ctx, job.Key)
					if err != nil {
						t.Fatal(err)
					}
					if after.Description != before.Description || after.Version != before.Version {
						t.Fatalf("the refused ScheduleJob changed the job: description %q version %d, was %q version %d",
							after.Description, after.Version, before.Description, before.Version)
					}
				})
			}
		})
	}
}

// TestValidationErrorPaths checks how a ValidationError's path is
// composed with Under and read back with Steps, and that its message
// names the field and the problem.
func TestValidationErrorPaths(t *testing.T) {
	t.Parallel()
	ve := &chime.ValidationError{Field: "expression", Reason: "cannot parse \"x\""}
	placed := ve.Under("Schedule").Under("triggers[2]").Under("jobs[1]")
	if placed.Field != "jobs[1].triggers[2].Schedule.expression" || ve.Field != "expression" {
		t.Fatalf("Under: %q (the original became %q)", placed.Field, ve.Field)
	}
	if got, want := placed.Error(), `chime: jobs[1].triggers[2].Schedule.expression: cannot parse "x"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	want := []chime.PathStep{{Name: "jobs"}, {Index: 1, IsIndex: true}, {Name: "triggers"}, {Index: 2, IsIndex: true}, {Name: "Schedule"}, {Name: "expression"}}
	if got := placed.Steps(); !reflect.DeepEqual(got, want) {
		t.Errorf("Steps() = %+v, want %+v", got, want)
	}
	if got := (&chime.ValidationError{Reason: "r"}).Under("triggers").Field; got != "triggers" {
		t.Errorf("Under an empty path = %q, want triggers", got)
	}
	if got := (&chime.ValidationError{Field: "Key", Reason: "r"}).Under("").Field; got != "Key" {
		t.Errorf("Under an empty parent = %q, want Key", got)
	}
}
