package chime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// These tests run inside testing/synctest bubbles: time is fake and only
// moves when every goroutine in the bubble is blocked, so a firing that
// should happen at an instant is observed exactly at that instant, and
// time.Sleep advances the clock instead of waiting.

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// fire is one observed execution.
type fire struct {
	Job       string
	Trigger   string
	Scheduled time.Time
	At        time.Time
	Refire    int
	Recover   bool
	Data      chime.JobData
}

// recorder is a job type that records its executions.
type recorder struct {
	mu    sync.Mutex
	fires []fire
	run   func(ctx context.Context, jc *chime.JobContext) error
}

func (r *recorder) Execute(ctx context.Context, jc *chime.JobContext) error {
	f := fire{Job: jc.Job.Key.Name, Scheduled: jc.ScheduledFireTime, At: time.Now(), Refire: jc.RefireCount, Recover: jc.Recovering, Data: jc.MergedData}
	if jc.Trigger != nil {
		f.Trigger = jc.Trigger.Key.Name
	}
	r.mu.Lock()
	r.fires = append(r.fires, f)
	run := r.run
	r.mu.Unlock()
	if run != nil {
		return run(ctx, jc)
	}
	return nil
}

func (r *recorder) all() []fire {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.fires)
}

func newScheduler(t *testing.T, cfg chime.Config) (*chime.Scheduler, *recorder) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	s, err := chime.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &recorder{}
	if err := s.Register("record", rec); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return s, rec
}

func start(t *testing.T, s *chime.Scheduler) {
	t.Helper()
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

func stop(t *testing.T, s *chime.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// offBoundary moves the bubble's clock, which starts on a whole minute, off
// the cron boundaries, so that a cron trigger's first fire time is not the
// instant it is scheduled at. It moves by more than a second because cron
// triggers, as in Quartz, drop the milliseconds of their start time.
func offBoundary() { time.Sleep(1500 * time.Millisecond) }

func mustCron(t *testing.T, expr string) *schedule.Cron {
	t.Helper()
	c, err := schedule.NewCron(expr, "UTC")
	if err != nil {
		t.Fatalf("NewCron(%q): %v", expr, err)
	}
	return c
}

func job(name string) chime.JobDetail {
	return chime.JobDetail{Key: chime.NewJobKey("", name), Type: "record"}
}

func trig(name string, s schedule.Schedule) chime.Trigger {
	return chime.Trigger{Key: chime.NewTriggerKey("", name), Schedule: s}
}

func scheduleJob(t *testing.T, s *chime.Scheduler, j chime.JobDetail, triggers ...chime.Trigger) {
	t.Helper()
	if err := s.ScheduleJob(context.Background(), j, triggers, nil); err != nil {
		t.Fatalf("ScheduleJob(%s): %v", j.Key, err)
	}
}

func TestCronTriggerFiresAtItsInstants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		offBoundary()
		s, rec := newScheduler(t, chime.Config{})
		scheduleJob(t, s, job("tick"), trig("every10s", mustCron(t, "*/10 * * * * ?")))
		start(t, s)
		begin := time.Now()
		time.Sleep(35 * time.Second)
		stop(t, s)

		fires := rec.all()
		if len(fires) != 3 {
			t.Fatalf("got %d fires in 35s of a 10s cron, want 3: %v", len(fires), fires)
		}
		for i, f := range fires {
			if f.Scheduled.Second()%10 != 0 || f.Scheduled.Nanosecond() != 0 {
				t.Errorf("fire %d scheduled at %s, not on a 10s boundary", i, f.Scheduled)
			}
			if !f.At.Equal(f.Scheduled) {
				t.Errorf("fire %d ran at %s, scheduled %s: lag %s", i, f.At, f.Scheduled, f.At.Sub(f.Scheduled))
			}
			if !f.Scheduled.After(begin) {
				t.Errorf("fire %d scheduled at %s, before the scheduler started at %s", i, f.Scheduled, begin)
			}
		}
	})
}

func TestTriggerAddedWhileLoopSleepsFiresAtItsInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A one-hour idle wait: only the wake-up can make the loop notice.
		s, rec := newScheduler(t, chime.Config{IdleWait: time.Hour, LookAhead: time.Hour})
		j := job("late")
		j.Durable = true
		if err := s.AddJob(context.Background(), j, nil); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		time.Sleep(10 * time.Second)
		due := time.Now().Add(1500 * time.Millisecond)
		tr := trig("soon", &schedule.Simple{RepeatCount: 0})
		tr.JobKey = j.Key
		tr.StartTime = due
		if _, err := s.Schedule(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		stop(t, s)
		fires := rec.all()
		if len(fires) != 1 {
			t.Fatalf("got %d fires, want 1", len(fires))
		}
		if !fires[0].At.Equal(due) {
			t.Errorf("fired at %s, want exactly %s", fires[0].At, due)
		}
	})
}

func TestPriorityBreaksTiesAtTheSameInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{Workers: 1})
		due := time.Now().Add(5 * time.Second)
		for i, p := range []int{1, 9, 5} {
			tr := trig(fmt.Sprintf("p%d", p), &schedule.Simple{})
			tr.StartTime = due
			tr.Priority = p
			scheduleJob(t, s, job(fmt.Sprintf("job%d", i)), tr)
		}
		start(t, s)
		time.Sleep(10 * time.Second)
		stop(t, s)
		var order []string
		for _, f := range rec.all() {
			order = append(order, f.Trigger)
		}
		if want := []string{"p9", "p5", "p1"}; !slices.Equal(order, want) {
			t.Errorf("fire order %v, want %v", order, want)
		}
	})
}

func TestPauseAndResume(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		pause  func(s *chime.Scheduler) error
		resume func(s *chime.Scheduler) error
	}{
		{"trigger",
			func(s *chime.Scheduler) error { return s.PauseTrigger(ctx, chime.NewTriggerKey("g", "t")) },
			func(s *chime.Scheduler) error { return s.ResumeTrigger(ctx, chime.NewTriggerKey("g", "t")) }},
		{"job",
			func(s *chime.Scheduler) error { return s.PauseJob(ctx, chime.NewJobKey("", "paused")) },
			func(s *chime.Scheduler) error { return s.ResumeJob(ctx, chime.NewJobKey("", "paused")) }},
		{"trigger group",
			func(s *chime.Scheduler) error { return s.PauseTriggerGroup(ctx, "g") },
			func(s *chime.Scheduler) error { return s.ResumeTriggerGroup(ctx, "g") }},
		{"job group",
			func(s *chime.Scheduler) error { return s.PauseJobGroup(ctx, chime.DefaultGroup) },
			func(s *chime.Scheduler) error { return s.ResumeJobGroup(ctx, chime.DefaultGroup) }},
		{"all",
			func(s *chime.Scheduler) error { return s.PauseAll(ctx) },
			func(s *chime.Scheduler) error { return s.ResumeAll(ctx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s, rec := newScheduler(t, chime.Config{})
				tr := chime.Trigger{Key: chime.NewTriggerKey("g", "t"), Schedule: mustCron(t, "* * * * * ?")}
				scheduleJob(t, s, job("paused"), tr)
				start(t, s)
				time.Sleep(2500 * time.Millisecond)
				if err := tt.pause(s); err != nil {
					t.Fatal(err)
				}
				info, err := s.Trigger(ctx, tr.Key)
				if err != nil {
					t.Fatal(err)
				}
				if info.State != chime.TriggerPaused {
					t.Errorf("state after pause = %s, want PAUSED", info.State)
				}
				before := len(rec.all())
				time.Sleep(10 * time.Second)
				if got := len(rec.all()); got != before {
					t.Errorf("paused trigger fired %d times", got-before)
				}
				if err := tt.resume(s); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3500 * time.Millisecond)
				stop(t, s)
				if got := len(rec.all()) - before; got < 3 {
					t.Errorf("resumed trigger fired %d times in 3.5s of a 1s cron, want >= 3", got)
				}
			})
		})
	}
}

func TestPausedGroupStaysPausedForTriggersAddedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		if err := s.PauseTriggerGroup(ctx, "nightly"); err != nil {
			t.Fatal(err)
		}
		tr := chime.Trigger{Key: chime.NewTriggerKey("nightly", "later"), Schedule: mustCron(t, "* * * * * ?")}
		scheduleJob(t, s, job("j"), tr)
		info, err := s.Trigger(ctx, tr.Key)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != chime.TriggerPaused {
			t.Fatalf("trigger added to a paused group is %s, want PAUSED", info.State)
		}
		groups, err := s.PausedTriggerGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(groups, "nightly") {
			t.Errorf("paused groups %v lack nightly", groups)
		}
		start(t, s)
		time.Sleep(5 * time.Second)
		if n := len(rec.all()); n != 0 {
			t.Errorf("trigger in a paused group fired %d times", n)
		}
		if err := s.ResumeTriggerGroup(ctx, "nightly"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		stop(t, s)
		if n := len(rec.all()); n < 2 {
			t.Errorf("resumed group fired %d times, want >= 2", n)
		}
	})
}

func TestJobOutcomes(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		run       func(ctx context.Context, jc *chime.JobContext) error
		wantRuns  int
		wantState chime.TriggerState
		wantErr   func(error) bool
		gone      bool // trigger deleted
	}{
		{
			name:      "success keeps firing",
			run:       func(context.Context, *chime.JobContext) error { return nil },
			wantRuns:  3,
			wantState: chime.TriggerNormal,
			wantErr:   func(err error) bool { return err == nil },
		},
		{
			name:      "plain error keeps firing",
			run:       func(context.Context, *chime.JobContext) error { return errBoom },
			wantRuns:  3,
			wantState: chime.TriggerNormal,
			wantErr:   func(err error) bool { return errors.Is(err, errBoom) },
		},
		{
			name: "refire immediately runs again with a refire count",
			run: func(_ context.Context, jc *chime.JobContext) error {
				if jc.RefireCount < 2 {
					return chime.RefireImmediately(errBoom)
				}
				return chime.UnscheduleFiringTrigger(nil)
			},
			wantRuns:  3, // one firing, refired twice
			wantState: chime.TriggerComplete,
			wantErr:   func(err error) bool { return err != nil },
		},
		{
			name:      "unschedule firing trigger",
			run:       func(context.Context, *chime.JobContext) error { return chime.UnscheduleFiringTrigger(errBoom) },
			wantRuns:  1,
			wantState: chime.TriggerComplete,
			wantErr:   func(err error) bool { return errors.Is(err, errBoom) },
		},
		{
			name:      "unschedule all triggers",
			run:       func(context.Context, *chime.JobContext) error { return chime.UnscheduleAllTriggers(nil) },
			wantRuns:  1,
			wantState: chime.TriggerComplete,
			wantErr:   func(err error) bool { return err != nil },
		},
		{
			name:      "panic is recovered and recorded as a failure",
			run:       func(context.Context, *chime.JobContext) error { panic("kaboom") },
			wantRuns:  3,
			wantState: chime.TriggerNormal,
			wantErr: func(err error) bool {
				var pe *chime.PanicError
				return errors.As(err, &pe) && pe.Value == "kaboom"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				offBoundary()
				s, rec := newScheduler(t, chime.Config{})
				rec.run = tt.run
				var mu sync.Mutex
				var errs []error
				s.AddJobListener(chime.JobListener{Name: "errs", WasExecuted: func(_ context.Context, _ *chime.JobContext, err error) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}})
				tr := trig("t", mustCron(t, "*/10 * * * * ?"))
				scheduleJob(t, s, job("j"), tr)
				start(t, s)
				time.Sleep(30 * time.Second)
				stop(t, s)
				if got := len(rec.all()); got != tt.wantRuns {
					t.Errorf("job ran %d times, want %d", got, tt.wantRuns)
				}
				info, err := s.Trigger(ctx, tr.Key)
				if err != nil {
					t.Fatal(err)
				}
				if info.State != tt.wantState {
					t.Errorf("trigger state %s, want %s", info.State, tt.wantState)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(errs) == 0 || !tt.wantErr(errs[0]) {
					t.Errorf("listener saw errors %v", errs)
				}
			})
		})
	}
}

func TestOneShotTriggerIsDeletedWithItsNonDurableJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		tr := trig("once", &schedule.Simple{})
		tr.StartTime = time.Now().Add(time.Second)
		scheduleJob(t, s, job("once"), tr)
		start(t, s)
		time.Sleep(3 * time.Second)
		stop(t, s)
		if n := len(rec.all()); n != 1 {
			t.Fatalf("ran %d times, want 1", n)
		}
		if _, err := s.Trigger(ctx, tr.Key); !errors.Is(err, chime.ErrTriggerNotFound) {
			t.Errorf("finished one-shot trigger: err = %v, want ErrTriggerNotFound", err)
		}
		if _, err := s.Job(ctx, chime.NewJobKey("", "once")); !errors.Is(err, chime.ErrJobNotFound) {
			t.Errorf("non-durable job without triggers: err = %v, want ErrJobNotFound", err)
		}
	})
}

func TestListenersAndVeto(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		var mu sync.Mutex
		var events []string
		note := func(format string, args ...any) {
			mu.Lock()
			events = append(events, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		s.AddTriggerListener(chime.TriggerListener{
			Name:    "veto-b",
			Matcher: chime.GroupEquals[chime.TriggerKey]("b"),
			Fired:   func(_ context.Context, jc *chime.JobContext) { note("fired %s", jc.Trigger.Key) },
			VetoExecution: func(context.Context, *chime.JobContext) bool {
				return true
			},
		})
		s.AddTriggerListener(chime.TriggerListener{
			Name:      "completed-a",
			Matcher:   chime.KeyEquals(chime.NewTriggerKey("a", "t")),
			Completed: func(_ context.Context, jc *chime.JobContext, _ error) { note("completed %s", jc.Trigger.Key) },
		})
		s.AddJobListener(chime.JobListener{
			Name:            "jobs",
			ToBeExecuted:    func(_ context.Context, jc *chime.JobContext) { note("to be executed %s", jc.Job.Key) },
			ExecutionVetoed: func(_ context.Context, jc *chime.JobContext) { note("vetoed %s", jc.Job.Key) },
			WasExecuted:     func(_ context.Context, jc *chime.JobContext, _ error) { note("executed %s", jc.Job.Key) },
		})
		slow := make(chan struct{})
		s.AddSchedulerListener("slow", func(context.Context, chime.SchedulerEvent) { <-slow })
		at := time.Now().Add(2 * time.Second)
		ta := chime.Trigger{Key: chime.NewTriggerKey("a", "t"), Schedule: &schedule.Simple{}, StartTime: at}
		tb := chime.Trigger{Key: chime.NewTriggerKey("b", "t"), Schedule: &schedule.Simple{}, StartTime: at}
		scheduleJob(t, s, job("ja"), ta)
		scheduleJob(t, s, job("jb"), tb)
		start(t, s)
		time.Sleep(5 * time.Second)
		// The scheduler listener is still blocked, yet the jobs fired.
		if got := rec.all(); len(got) != 1 || got[0].Job != "ja" {
			t.Errorf("fires %v, want only ja (jb vetoed)", got)
		}
		close(slow)
		stop(t, s)
		mu.Lock()
		defer mu.Unlock()
		want := []string{"fired b.t", "vetoed DEFAULT.jb", "to be executed DEFAULT.ja", "executed DEFAULT.ja", "completed a.t"}
		if slices.Contains(events, "completed b.t") {
			t.Errorf("events %q: a vetoed firing completed", events)
		}
		for _, w := range want {
			if !slices.Contains(events, w) {
				t.Errorf("events %q lack %q", events, w)
			}
		}
	})
}

func TestSchedulerEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, _ := newScheduler(t, chime.Config{})
		var mu sync.Mutex
		var got []chime.EventType
		s.AddSchedulerListener("all", func(_ context.Context, ev chime.SchedulerEvent) {
			mu.Lock()
			got = append(got, ev.Type)
			mu.Unlock()
		})
		start(t, s)
		tr := trig("t", mustCron(t, "0 0 * * * ?"))
		scheduleJob(t, s, job("j"), tr)
		if err := s.PauseTrigger(ctx, tr.Key); err != nil {
			t.Fatal(err)
		}
		if err := s.ResumeTrigger(ctx, tr.Key); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteJob(ctx, chime.NewJobKey("", "j")); err != nil {
			t.Fatal(err)
		}
		scheduleJob(t, s, job("k"), trig("u", mustCron(t, "0 0 * * * ?")))
		if err := s.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if jobs, err := s.Jobs(ctx, ""); err != nil || len(jobs) != 0 {
			t.Errorf("after Clear: jobs %v, err %v", jobs, err)
		}
		s.Standby()
		stop(t, s)
		want := []chime.EventType{
			chime.EventSchedulerStarting, chime.EventSchedulerStarted, chime.EventJobAdded, chime.EventJobScheduled,
			chime.EventTriggerPaused, chime.EventTriggerResumed, chime.EventJobDeleted,
			chime.EventJobAdded, chime.EventJobScheduled, chime.EventSchedulingDataCleared, chime.EventSchedulerInStandbyMode,
			chime.EventSchedulerShuttingDown, chime.EventSchedulerShutdown,
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("events\n got %v\nwant %v", got, want)
		}
	})
}

func TestStopWaitsForRunningJobsThenCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		var cause error
		done := make(chan struct{})
		rec.run = func(ctx context.Context, _ *chime.JobContext) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			close(done)
			return ctx.Err()
		}
		tr := trig("t", &schedule.Simple{})
		tr.StartTime = time.Now().Add(time.Second)
		scheduleJob(t, s, job("stubborn"), tr)
		start(t, s)
		time.Sleep(2 * time.Second)
		if n := len(s.ExecutingJobs()); n != 1 {
			t.Fatalf("executing jobs = %d, want 1", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		begin := time.Now()
		err := s.Stop(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want deadline exceeded", err)
		}
		if waited := time.Since(begin); waited != 10*time.Second {
			t.Errorf("Stop waited %s, want the full 10s", waited)
		}
		<-done
		if !errors.Is(cause, chime.ErrStopped) {
			t.Errorf("job context cause = %v, want ErrStopped", cause)
		}
	})
}

func TestStopLetsJobsFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		finished := false
		rec.run = func(ctx context.Context, _ *chime.JobContext) error {
			time.Sleep(3 * time.Second)
			finished = ctx.Err() == nil
			return nil
		}
		tr := trig("t", &schedule.Simple{})
		tr.StartTime = time.Now().Add(time.Second)
		scheduleJob(t, s, job("slow"), tr)
		start(t, s)
		time.Sleep(2 * time.Second)
		stop(t, s)
		if !finished {
			t.Error("Stop cancelled a job although its context allowed it to finish")
		}
	})
}

func TestInterruptAndTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		causes := make(chan error, 2)
		rec.run = func(ctx context.Context, _ *chime.JobContext) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
		at := time.Now().Add(time.Second)
		ti := trig("interrupted", &schedule.Simple{})
		ti.StartTime = at
		scheduleJob(t, s, job("interrupted"), ti)
		jt := job("timed")
		jt.Timeout = 5 * time.Second
		tt := trig("timed", &schedule.Simple{})
		tt.StartTime = at
		scheduleJob(t, s, jt, tt)
		start(t, s)
		time.Sleep(2 * time.Second)
		if n := s.InterruptJob(chime.NewJobKey("", "interrupted")); n != 1 {
			t.Errorf("InterruptJob cancelled %d executions, want 1", n)
		}
		if err := <-causes; !errors.Is(err, chime.ErrInterrupted) {
			t.Errorf("interrupted job's cause = %v, want ErrInterrupted", err)
		}
		if err := <-causes; !errors.Is(err, chime.ErrTimeout) {
			t.Errorf("timed-out job's cause = %v, want ErrTimeout", err)
		}
		if elapsed := time.Since(at); elapsed != 5*time.Second {
			t.Errorf("timeout hit after %s, want 5s", elapsed)
		}
		stop(t, s)
	})
}

func TestDisallowConcurrentExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := newScheduler(t, chime.Config{})
		var mu sync.Mutex
		running, maxRunning := 0, 0
		rec.run = func(context.Context, *chime.JobContext) error {
			mu.Lock()
			running++
			maxRunning = max(maxRunning, running)
			mu.Unlock()
			time.Sleep(3 * time.Second)
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}
		j := job("exclusive")
		j.DisallowConcurrentExecution = true
		t1 := trig("a", mustCron(t, "*/2 * * * * ?"))
		t2 := trig("b", mustCron(t, "*/2 * * * * ?"))
		scheduleJob(t, s, j, t1, t2)
		start(t, s)
		time.Sleep(20 * time.Second)
		stop(t, s)
		if maxRunning != 1 {
			t.Errorf("at most %d executions ran at once, want 1", maxRunning)
		}
		if n := len(rec.all()); n < 5 {
			t.Errorf("only %d executions in 20s of 3s runs", n)
		}
	})
}

func TestPersistJobDataAfterExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		rec.run = func(_ context.Context, jc *chime.JobContext) error {
			n, _ := jc.Job.Data.Int("count")
			jc.Job.Data["count"] = n + 1
			return nil
		}
		j := job("counter")
		j.PersistJobDataAfterExecution = true
		j.Data = chime.JobData{"count": 0}
		scheduleJob(t, s, j, trig("t", mustCron(t, "* * * * * ?")))
		start(t, s)
		time.Sleep(5500 * time.Millisecond)
		stop(t, s)
		d, err := s.Job(ctx, j.Key)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := d.Data.Int("count")
		if !ok || got != int64(len(rec.all())) || got < 5 {
			t.Errorf("stored count = %v (ok %v) after %d runs", got, ok, len(rec.all()))
		}
	})
}

func TestTriggerJobNowWithData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		j := job("manual")
		j.Durable = true
		j.Data = chime.JobData{"who": "job", "keep": "yes"}
		if err := s.AddJob(ctx, j, nil); err != nil {
			t.Fatal(err)
		}
		start(t, s)
		time.Sleep(time.Second)
		at := time.Now()
		if _, err := s.TriggerJob(ctx, j.Key, chime.JobData{"who": "operator"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		stop(t, s)
		fires := rec.all()
		if len(fires) != 1 {
			t.Fatalf("fired %d times, want 1", len(fires))
		}
		if !fires[0].At.Equal(at) {
			t.Errorf("fired at %s, want immediately at %s", fires[0].At, at)
		}
		if who, _ := fires[0].Data.String("who"); who != "operator" {
			t.Errorf("merged who = %q, want the trigger's value", who)
		}
		if keep, _ := fires[0].Data.String("keep"); keep != "yes" {
			t.Errorf("merged keep = %q, want the job's value", keep)
		}
		if _, err := s.Job(ctx, j.Key); err != nil {
			t.Errorf("durable job gone after a manual run: %v", err)
		}
	})
}

func TestMisfireInstructionsApplyAfterDowntime(t *testing.T) {
	tests := []struct {
		instruction schedule.MisfireInstruction
		wantRuns    int // within the first second after start
	}{
		{schedule.MisfireDoNothing, 0},
		{schedule.MisfireFireOnceNow, 1},
		{schedule.MisfireIgnore, 5}, // every missed hour fires
	}
	for _, tt := range tests {
		t.Run(string(tt.instruction), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				st := memstore.New(nil)
				s, rec := newScheduler(t, chime.Config{Store: st})
				var misfired []string
				var mu sync.Mutex
				s.AddTriggerListener(chime.TriggerListener{Name: "m", Misfired: func(_ context.Context, info chime.TriggerInfo) {
					mu.Lock()
					misfired = append(misfired, info.Key.Name)
					mu.Unlock()
				}})
				// The bubble's clock starts on the hour; move off it so that
				// exactly five hourly fire times lie in the past.
				time.Sleep(30 * time.Minute)
				tr := trig("hourly", mustCron(t, "0 0 * * * ?"))
				tr.MisfireInstruction = tt.instruction
				tr.StartTime = time.Now().Add(-5*time.Hour - 10*time.Minute)
				scheduleJob(t, s, job("j"), tr)
				start(t, s)
				time.Sleep(time.Second)
				runs := len(rec.all())
				stop(t, s)
				if runs != tt.wantRuns {
					t.Errorf("ran %d times after the downtime, want %d", runs, tt.wantRuns)
				}
				info, err := s.Trigger(ctx, tr.Key)
				if err != nil {
					t.Fatal(err)
				}
				if !info.NextFireTime.After(time.Now().Add(-time.Second)) {
					t.Errorf("next fire time %s still in the past", info.NextFireTime)
				}
				mu.Lock()
				defer mu.Unlock()
				if tt.instruction != schedule.MisfireIgnore && !slices.Contains(misfired, "hourly") {
					t.Errorf("Misfired listener not called")
				}
			})
		})
	}
}

// TestMetadataAndOrigin checks that a job's and a trigger's metadata
// are stored apart from their data maps: returned by Job and Triggers,
// seen by the running job in JobContext.Job and JobContext.Trigger, and
// never merged into MergedData.
func TestMetadataAndOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, rec := newScheduler(t, chime.Config{})
		type seen struct {
			jobMeta, triggerMeta string
			origin               chime.TriggerOrigin
			merged               chime.JobData
		}
		var mu sync.Mutex
		var runs []seen
		rec.run = func(ctx context.Context, jc *chime.JobContext) error {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, seen{string(jc.Job.Metadata), string(jc.Trigger.Metadata), jc.Trigger.Origin, jc.MergedData})
			return nil
		}
		j := job("meta")
		j.Durable = true
		j.Data = chime.JobData{"chime:server": "plain data"}
		j.Metadata = json.RawMessage(`{"settings":1}`)
		tr := trig("backfill", &schedule.Simple{})
		tr.Origin = chime.OriginBackfill
		tr.Metadata = json.RawMessage(`{"facts":2}`)
		tr.Data = chime.JobData{"t": "x"}
		scheduleJob(t, s, j, tr)

		got, err := s.Job(ctx, j.Key)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Metadata) != `{"settings":1}` || got.Data["chime:server"] != "plain data" {
			t.Errorf("Job = metadata %s data %v, want each as stored", got.Metadata, got.Data)
		}
		infos, err := s.Triggers(ctx, &chime.TriggerFilter{JobKey: &j.Key})
		if err != nil || len(infos) != 1 {
			t.Fatalf("Triggers = %v, %v; want the one trigger", infos, err)
		}
		if infos[0].Origin != chime.OriginBackfill || string(infos[0].Metadata) != `{"facts":2}` {
			t.Errorf("trigger origin %q metadata %s, want backfill and {\"facts\":2}", infos[0].Origin, infos[0].Metadata)
		}

		start(t, s)
		time.Sleep(time.Second)
		if _, err := s.TriggerJob(ctx, j.Key, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		stop(t, s)
		want := []seen{
			{`{"settings":1}`, `{"facts":2}`, chime.OriginBackfill, chime.JobData{"chime:server": "plain data", "t": "x"}},
			{`{"settings":1}`, "", chime.OriginManual, chime.JobData{"chime:server": "plain data"}},
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(runs) != fmt.Sprint(want) {
			t.Errorf("runs saw\n%v\nwant\n%v", runs, want)
		}

		plain := trig("plain", &schedule.Simple{})
		plain.JobKey = j.Key
		if _, err := s.Schedule(ctx, plain); err != nil {
			t.Fatal(err)
		}
		info, err := s.Trigger(ctx, plain.Key)
		if err != nil || info.Origin != chime.OriginSchedule || info.Metadata != nil {
			t.Errorf("Trigger(plain) = %+v, %v; want origin schedule and no metadata", info, err)
		}
	})
}

func TestValidationErrorsNameTheField(t *testing.T) {
	s, _ := newScheduler(t, chime.Config{})
	ctx := context.Background()
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"job without name", func() error {
			return s.ScheduleJob(ctx, chime.JobDetail{Type: "record"}, []chime.Trigger{trig("t", &schedule.Simple{})}, nil)
		}, "JobDetail.Key.Name"},
		{"job without type", func() error {
			return s.ScheduleJob(ctx, chime.JobDetail{Key: chime.NewJobKey("", "j")}, []chime.Trigger{trig("t", &schedule.Simple{})}, nil)
		}, "JobDetail.Type"},
		{"non-durable job alone", func() error { return s.AddJob(ctx, job("j"), nil) }, "JobDetail.Durable"},
		{"trigger without schedule", func() error {
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{{Key: chime.NewTriggerKey("", "t")}}, nil)
		}, "triggers[0].Schedule"},
		{"data not JSON", func() error {
			j := job("j")
			j.Data = chime.JobData{"ch": make(chan int)}
			return s.ScheduleJob(ctx, j, []chime.Trigger{trig("t", &schedule.Simple{})}, nil)
		}, "JobDetail.Data"},
		{"data too large", func() error {
			j := job("j")
			j.Data = chime.JobData{"blob": strings.Repeat("x", 1<<20)}
			return s.ScheduleJob(ctx, j, []chime.Trigger{trig("t", &schedule.Simple{})}, nil)
		}, "JobDetail.Data"},
		{"trigger data too large", func() error {
			tr := trig("t", &schedule.Simple{})
			tr.Data = chime.JobData{"blob": strings.Repeat("x", 1<<20)}
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{tr}, nil)
		}, "triggers[0].Data"},
		{"unknown calendar", func() error {
			tr := trig("t", &schedule.Simple{})
			tr.CalendarName = "nope"
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{tr}, nil)
		}, "triggers[0].CalendarName"},
		{"job metadata not JSON", func() error {
			j := job("j")
			j.Metadata = json.RawMessage(`{"a":`)
			return s.ScheduleJob(ctx, j, []chime.Trigger{trig("t", &schedule.Simple{})}, nil)
		}, "JobDetail.Metadata"},
		{"trigger metadata too large", func() error {
			tr := trig("t", &schedule.Simple{})
			tr.Metadata = json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{tr}, nil)
		}, "triggers[0].Metadata"},
		{"unknown origin", func() error {
			tr := trig("t", &schedule.Simple{})
			tr.Origin = "cron"
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{tr}, nil)
		}, "triggers[0].Origin"},
		{"priority beyond 32 bits", func() error {
			ok, tooHigh := trig("t1", &schedule.Simple{}), trig("t2", &schedule.Simple{})
			tooHigh.Priority = 1 << 31
			return s.ScheduleJob(ctx, job("j"), []chime.Trigger{ok, tooHigh}, nil)
		}, "triggers[1].Priority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ve *chime.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("err = %v, want a ValidationError on %s", err, tt.field)
			}
		})
	}
	jobs, err := s.Jobs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("rejected calls stored %d jobs", len(jobs))
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestScheduleJobRefusesTakenKeysAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := newScheduler(t, chime.Config{})
	defer s.Stop(ctx)
	scheduleJob(t, s, job("j"), trig("t", mustCron(t, "0 0 * * * ?")))
	err := s.ScheduleJob(ctx, job("other"), []chime.Trigger{trig("t", mustCron(t, "0 0 * * * ?"))}, nil)
	if !errors.Is(err, chime.ErrTriggerExists) {
		t.Fatalf("err = %v, want ErrTriggerExists", err)
	}
	if _, err := s.Job(ctx, chime.NewJobKey("", "other")); !errors.Is(err, chime.ErrJobNotFound) {
		t.Errorf("refused ScheduleJob stored its job: %v", err)
	}
}

// TestScheduleJobIsOneStep checks that ScheduleJob stores a job, deletes
// and stores its triggers and pauses them all at once or not at all, and
// that listeners hear of it after it is stored.
func TestScheduleJobIsOneStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, _ := newScheduler(t, chime.Config{})
		var mu sync.Mutex
		var events []string
		s.AddSchedulerListener("job j", func(_ context.Context, ev chime.SchedulerEvent) {
			// An unscheduling event names the trigger only.
			if ev.JobKey.Name != "j" && ev.Type != chime.EventJobUnscheduled {
				return
			}
			mu.Lock()
			events = append(events, strings.TrimSpace(fmt.Sprintf("%s %s %s", ev.Type, ev.JobKey.Name, ev.TriggerKey.Name)))
			mu.Unlock()
		})
		start(t, s)
		hourly := func(name string) chime.Trigger { return trig(name, mustCron(t, "0 0 * * * ?")) }
		j := job("j")
		j.Durable = true
		scheduleJob(t, s, j, hourly("old"), hourly("kept"))
		scheduleJob(t, s, job("other"), hourly("taken"))
		read, err := s.Job(ctx, j.Key)
		if err != nil {
			t.Fatalf("Job: %v", err)
		}
		states := func() map[string]chime.TriggerState {
			t.Helper()
			all, err := s.Triggers(ctx, nil)
			if err != nil {
				t.Fatalf("Triggers: %v", err)
			}
			out := make(map[string]chime.TriggerState)
			for _, ti := range all {
				out[ti.JobKey.Name+"/"+ti.Key.Name] = ti.State
			}
			return out
		}
		before := states()

		// A new job whose last trigger's key is taken: nothing of it is
		// stored, not its first triggers, not the pause.
		err = s.ScheduleJob(ctx, job("new"), []chime.Trigger{hourly("n1"), hourly("n2"), hourly("taken")},
			&chime.ScheduleJobOptions{Pause: chime.PauseTriggers})
		if !errors.Is(err, chime.ErrTriggerExists) {
			t.Fatalf("ScheduleJob with a taken trigger key: err = %v, want ErrTriggerExists", err)
		}
		if _, err := s.Job(ctx, chime.NewJobKey("", "new")); !errors.Is(err, chime.ErrJobNotFound) {
			t.Errorf("the refused ScheduleJob stored its job: %v", err)
		}
		// A stale version: the deletion and the pause do not happen.
		err = s.ScheduleJob(ctx, *read, []chime.Trigger{hourly("added")}, &chime.ScheduleJobOptions{
			IfVersion: read.Version + 1, Unschedule: []chime.TriggerKey{hourly("old").Key}, Pause: chime.PauseTriggers,
		})
		if !errors.Is(err, chime.ErrVersionMismatch) {
			t.Fatalf("ScheduleJob with a stale version: err = %v, want ErrVersionMismatch", err)
		}
		if got := states(); !maps.Equal(got, before) {
			t.Errorf("refused writes changed the triggers: %v, want %v", got, before)
		}

		err = s.ScheduleJob(ctx, *read, []chime.Trigger{hourly("added")}, &chime.ScheduleJobOptions{
			IfVersion: read.Version, Unschedule: []chime.TriggerKey{hourly("old").Key}, Pause: chime.PauseTriggers,
		})
		if err != nil {
			t.Fatalf("ScheduleJob: %v", err)
		}
		wantStates := map[string]chime.TriggerState{"j/kept": chime.TriggerPaused, "j/added": chime.TriggerPaused, "other/taken": chime.TriggerNormal}
		if got := states(); !maps.Equal(got, wantStates) {
			t.Errorf("triggers after the write = %v, want %v", got, wantStates)
		}
		err = s.ScheduleJob(ctx, j, nil, &chime.ScheduleJobOptions{Replace: true, Pause: chime.ResumeTriggers})
		if err != nil {
			t.Fatalf("ScheduleJob resuming: %v", err)
		}
		wantStates = map[string]chime.TriggerState{"j/kept": chime.TriggerNormal, "j/added": chime.TriggerNormal, "other/taken": chime.TriggerNormal}
		if got := states(); !maps.Equal(got, wantStates) {
			t.Errorf("triggers after resuming = %v, want %v", got, wantStates)
		}
		stop(t, s)
		mu.Lock()
		defer mu.Unlock()
		want := []string{
			"JOB_ADDED j", "JOB_SCHEDULED j old", "JOB_SCHEDULED j kept", // the first write
			"JOB_ADDED j", "JOB_UNSCHEDULED  old", "JOB_SCHEDULED j added", "JOB_PAUSED j",
			"JOB_ADDED j", "JOB_RESUMED j",
		}
		if !slices.Equal(events, want) {
			t.Errorf("events of job j\n got %q\nwant %q", events, want)
		}
	})
}

// TestScheduleJobRefusesInvalidOptions checks the options ScheduleJob
// validates before it stores anything.
func TestScheduleJobRefusesInvalidOptions(t *testing.T) {
	ctx := context.Background()
	s, _ := newScheduler(t, chime.Config{})
	defer s.Stop(ctx)
	hourly := trig("t", mustCron(t, "0 0 * * * ?"))
	tests := []struct {
		name     string
		triggers []chime.Trigger
		opts     *chime.ScheduleJobOptions
		field    string
	}{
		{"unknown pause change", []chime.Trigger{hourly}, &chime.ScheduleJobOptions{Pause: "later"}, "ScheduleJobOptions.Pause"},
		{"one trigger key twice", []chime.Trigger{hourly, hourly}, nil, "triggers[1].Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ScheduleJob(ctx, job("j"), tt.triggers, tt.opts)
			var ve *chime.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("err = %v, want a ValidationError on %s", err, tt.field)
			}
		})
	}
	if jobs, err := s.Jobs(ctx, ""); err != nil || len(jobs) != 0 {
		t.Errorf("refused calls stored %v (err %v)", jobs, err)
	}
}

func TestIfVersionUpdatesOnlyTheVersionRead(t *testing.T) {
	ctx := context.Background()
	s, _ := newScheduler(t, chime.Config{})
	defer s.Stop(ctx)
	j := job("j")
	j.Description = "first"
	scheduleJob(t, s, j, trig("t", mustCron(t, "0 0 * * * ?")))
	read, err := s.Job(ctx, j.Key)
	if err != nil {
		t.Fatalf("Job: %v", err)
	}
	if read.Version <= 0 {
		t.Fatalf("Version of a stored job = %d, want > 0", read.Version)
	}

	update := *read
	update.Description = "second"
	every2h := trig("t", mustCron(t, "0 0 */2 * * ?"))
	if err := s.ScheduleJob(ctx, update, []chime.Trigger{every2h}, &chime.ScheduleJobOptions{IfVersion: read.Version}); err != nil {
		t.Fatalf("ScheduleJob expecting the version read: %v", err)
	}
	after, err := s.Job(ctx, j.Key)
	if err != nil {
		t.Fatalf("Job: %v", err)
	}
	if after.Description != "second" || after.Version <= read.Version {
		t.Errorf("job after the update = %q version %d, want %q and a version above %d", after.Description, after.Version, "second", read.Version)
	}

	stale := *read
	stale.Description = "stale"
	hourly := trig("t", mustCron(t, "0 0 * * * ?"))
	err = s.ScheduleJob(ctx, stale, []chime.Trigger{hourly}, &chime.ScheduleJobOptions{IfVersion: read.Version})
	if !errors.Is(err, chime.ErrVersionMismatch) {
		t.Fatalf("ScheduleJob with a stale version: err = %v, want ErrVersionMismatch", err)
	}
	stale.Durable = true
	err = s.AddJob(ctx, stale, &chime.AddJobOptions{IfVersion: read.Version})
	if !errors.Is(err, chime.ErrVersionMismatch) {
		t.Fatalf("AddJob with a stale version: err = %v, want ErrVersionMismatch", err)
	}
	now, err := s.Job(ctx, j.Key)
	if err != nil {
		t.Fatalf("Job: %v", err)
	}
	if now.Description != "second" || now.Version != after.Version {
		t.Errorf("refused writes changed the job: %q version %d", now.Description, now.Version)
	}
	info, err := s.Trigger(ctx, every2h.Key)
	if err != nil {
		t.Fatalf("Trigger: %v", err)
	}
	if got := info.Schedule.(*schedule.Cron).Expression(); got != "0 0 */2 * * ?" {
		t.Errorf("refused write changed the trigger's schedule to %q", got)
	}
	err = s.AddJob(ctx, chime.JobDetail{Key: chime.NewJobKey("", "gone"), Type: "record", Durable: true}, &chime.AddJobOptions{IfVersion: 1})
	if !errors.Is(err, chime.ErrJobNotFound) {
		t.Errorf("AddJob expecting a version of a missing job: err = %v, want ErrJobNotFound", err)
	}
}

func TestRescheduleAndUnschedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		offBoundary()
		s, rec := newScheduler(t, chime.Config{})
		j := job("j")
		j.Durable = true
		scheduleJob(t, s, j, trig("t", mustCron(t, "0 0 0 * * ?")))
		start(t, s)
		next, err := s.Reschedule(ctx, chime.NewTriggerKey("", "t"), chime.Trigger{Schedule: mustCron(t, "*/5 * * * * ?")})
		if err != nil {
			t.Fatal(err)
		}
		if next.Second()%5 != 0 || next.After(time.Now().Add(5*time.Second)) {
			t.Errorf("first fire time after reschedule %s", next)
		}
		time.Sleep(11 * time.Second)
		if n := len(rec.all()); n != 2 {
			t.Errorf("rescheduled trigger fired %d times in 11s, want 2", n)
		}
		ok, err := s.Unschedule(ctx, chime.NewTriggerKey("", "t"))
		if err != nil || !ok {
			t.Fatalf("Unschedule = %v, %v", ok, err)
		}
		time.Sleep(11 * time.Second)
		stop(t, s)
		if n := len(rec.all()); n != 2 {
			t.Errorf("unscheduled trigger kept firing: %d fires", n)
		}
		if _, err := s.Job(ctx, j.Key); err != nil {
			t.Errorf("durable job lost with its trigger: %v", err)
		}
	})
}

// skewedClock is a node clock that is off by a fixed amount.
type skewedClock struct {
	skew time.Duration
}

func (c skewedClock) Now() time.Time { return time.Now().Add(c.skew) }

func (c skewedClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

func TestSkewedNodeClockStillFiresOnTime(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Minute, -5 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				// The store keeps true time; the node's clock is off.
				offBoundary()
				s, rec := newScheduler(t, chime.Config{Clock: skewedClock{skew}})
				start(t, s)
				if off := s.ClockOffset(); off != -skew {
					t.Errorf("ClockOffset = %s, want %s", off, -skew)
				}
				scheduleJob(t, s, job("j"), trig("t", mustCron(t, "*/10 * * * * ?")))
				time.Sleep(31 * time.Second)
				stop(t, s)
				fires := rec.all()
				if len(fires) != 3 {
					t.Fatalf("fired %d times in 31s of a 10s cron, want 3", len(fires))
				}
				for _, f := range fires {
					if !f.At.Equal(f.Scheduled) {
						t.Errorf("fired at true time %s for %s", f.At, f.Scheduled)
					}
				}
			})
		})
	}
}

// faultyStore is a store whose node can be cut off, as if it crashed or
// lost its network: every call fails once cut.
type faultyStore struct {
	store.Store
	mu  sync.Mutex
	cut bool
}

var errCut = errors.New("connection refused")

func (f *faultyStore) down() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return errCut
	}
	return nil
}

func (f *faultyStore) NodeCheckIn(ctx context.Context, l store.Lease) (time.Time, error) {
	if err := f.down(); err != nil {
		return time.Time{}, err
	}
	return f.Store.NodeCheckIn(ctx, l)
}

func (f *faultyStore) TriggersAcquire(ctx context.Context, p *store.TriggersAcquireParams) ([]store.TriggerRecord, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.TriggersAcquire(ctx, p)
}

func (f *faultyStore) TriggersAcquireFire(ctx context.Context, p *store.TriggersAcquireFireParams) (*store.TriggersAcquireFireResult, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.TriggersAcquireFire(ctx, p)
}

func (f *faultyStore) ExecutionsComplete(ctx context.Context, p *store.ExecutionsCompleteParams) ([]error, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.ExecutionsComplete(ctx, p)
}

func (f *faultyStore) ExecutionsAcquireRecoverable(ctx context.Context, p *store.ExecutionsAcquireRecoverableParams) ([]store.RecoverableExecution, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.ExecutionsAcquireRecoverable(ctx, p)
}

func (f *faultyStore) ExecutionsRelease(ctx context.Context, p *store.ExecutionsReleaseParams) ([]error, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.ExecutionsRelease(ctx, p)
}

func (f *faultyStore) NodesRecover(ctx context.Context, p *store.NodesRecoverParams) ([]store.NodeRecovery, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	return f.Store.NodesRecover(ctx, p)
}

func (f *faultyStore) NodeUnregister(ctx context.Context, l store.Lease) error {
	if err := f.down(); err != nil {
		return err
	}
	return f.Store.NodeUnregister(ctx, l)
}

func TestLostNodeJobsAreRecoveredAndFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		shared := memstore.New(nil)
		cutStore := &faultyStore{Store: shared}
		a, recA := newScheduler(t, chime.Config{Store: cutStore, NodeID: "a", CheckInInterval: time.Second})
		b, recB := newScheduler(t, chime.Config{Store: shared, NodeID: "b", CheckInInterval: time.Second})

		causeA := make(chan error, 2)
		recA.run = func(ctx context.Context, _ *chime.JobContext) error {
			<-ctx.Done()
			causeA <- context.Cause(ctx)
			return ctx.Err()
		}
		at := time.Now().Add(time.Second)
		recovering := job("recovering")
		recovering.RequestsRecovery = true
		tr := trig("r", &schedule.Simple{})
		tr.StartTime = at
		scheduleJob(t, a, recovering, tr)
		plain := job("plain")
		tp := trig("p", &schedule.Simple{})
		tp.StartTime = at
		scheduleJob(t, a, plain, tp)

		start(t, a) // only a runs: it takes both jobs
		time.Sleep(2 * time.Second)
		if n := len(a.ExecutingJobs()); n != 2 {
			t.Fatalf("node a runs %d jobs, want 2", n)
		}
		start(t, b)
		cutStore.mu.Lock()
		cutStore.cut = true
		cutAt := time.Now()
		cutStore.mu.Unlock()

		time.Sleep(10 * time.Second)
		// Node a noticed it could not renew its lease and cancelled its jobs.
		for range 2 {
			if err := <-causeA; !errors.Is(err, chime.ErrLeaseLost) {
				t.Errorf("job cancelled on a with cause %v, want ErrLeaseLost", err)
			}
		}
		fires := recB.all()
		if len(fires) != 1 {
			t.Fatalf("node b ran %d jobs, want 1 (the recovering one): %v", len(fires), fires)
		}
		f := fires[0]
		if f.Job != "recovering" || !f.Recover || !f.Scheduled.Equal(at) {
			t.Errorf("recovered run %+v, want job recovering, Recovering, scheduled %s", f, at)
		}
		if took := f.At.Sub(cutAt); took > 6*time.Second {
			t.Errorf("recovery took %s, more than DeadAfter plus a check-in", took)
		}
		t.Logf("recovery after %s", f.At.Sub(cutAt))
		execs, err := shared.ExecutionList(ctx, &store.ExecutionListParams{JobKey: &store.Key{Group: chime.DefaultGroup, Name: "plain"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(execs) != 1 || execs[0].State != store.ExecutionFailed || execs[0].Error != "node lost" {
			t.Errorf("plain job's executions %+v, want one FAILED with node lost", execs)
		}
		stop(t, b)
		cutStore.mu.Lock()
		cutStore.cut = false
		cutStore.mu.Unlock()
		stop(t, a)
	})
}

func TestSeveralNodesFireEachInstantExactlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := memstore.New(nil)
		rec := &recorder{}
		var nodes []*chime.Scheduler
		for i := range 3 {
			s, err := chime.New(chime.Config{Store: shared, NodeID: fmt.Sprintf("n%d", i), Logger: quietLogger, Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Register("record", rec); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		const triggers = 200
		for i := range triggers {
			scheduleJob(t, nodes[i%3], job(fmt.Sprintf("j%d", i)), trig(fmt.Sprintf("t%d", i), mustCron(t, fmt.Sprintf("%d/3 * * * * ?", i%3))))
		}
		for _, n := range nodes {
			start(t, n)
		}
		begin := time.Now()
		time.Sleep(30 * time.Second)
		for _, n := range nodes {
			stop(t, n)
		}
		end := time.Now()
		seen := map[string]int{}
		for _, f := range rec.all() {
			seen[f.Trigger+"@"+f.Scheduled.Format(time.RFC3339)]++
		}
		dups, misses := 0, 0
		for k, n := range seen {
			if n > 1 {
				dups++
				t.Errorf("%s fired %d times", k, n)
			}
		}
		for i := range triggers {
			expr := mustCron(t, fmt.Sprintf("%d/3 * * * * ?", i%3))
			tr := schedule.Trigger{Schedule: expr, StartTime: begin}
			for at := tr.FireTimeAfter(begin); at.Before(end.Add(-time.Second)); at = tr.FireTimeAfter(at) {
				if seen[fmt.Sprintf("t%d@%s", i, at.Format(time.RFC3339))] == 0 {
					misses++
				}
			}
		}
		t.Logf("fires=%d distinct=%d duplicates=%d misses=%d", len(rec.all()), len(seen), dups, misses)
		if misses > 0 {
			t.Errorf("%d scheduled instants never fired", misses)
		}
	})
}

func TestStoreFailuresAreReportedAsSchedulerErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{Store: memstore.New(nil)}
		s, _ := newScheduler(t, chime.Config{Store: st})
		errs := make(chan error, 100)
		s.AddSchedulerListener("errors", func(_ context.Context, ev chime.SchedulerEvent) {
			if ev.Type == chime.EventSchedulerError {
				errs <- ev.Err
			}
		})
		start(t, s)
		st.mu.Lock()
		st.cut = true
		st.mu.Unlock()
		time.Sleep(2 * time.Second)
		st.mu.Lock()
		st.cut = false
		st.mu.Unlock()
		stop(t, s)
		select {
		case err := <-errs:
			if !errors.Is(err, errCut) {
				t.Errorf("scheduler error %v does not wrap the store's error", err)
			}
		default:
			t.Error("no scheduler error event while the store was unreachable")
		}
	})
}

func TestStandbyPausesFiringUntilStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		offBoundary()
		s, rec := newScheduler(t, chime.Config{})
		scheduleJob(t, s, job("j"), trig("t", mustCron(t, "* * * * * ?")))
		start(t, s)
		time.Sleep(3 * time.Second)
		s.Standby()
		if s.IsStarted() {
			t.Error("IsStarted after Standby")
		}
		before := len(rec.all())
		time.Sleep(30 * time.Second)
		if got := len(rec.all()); got != before {
			t.Errorf("fired %d times in standby", got-before)
		}
		start(t, s)
		time.Sleep(500 * time.Millisecond)
		// The trigger missed 30 fire times, under the misfire threshold:
		// the smart policy fires them.
		stop(t, s)
		if got := len(rec.all()) - before; got < 1 {
			t.Errorf("fired %d times after Start, want at least 1", got)
		}
		if err := s.Start(context.Background()); !errors.Is(err, chime.ErrStopped) {
			t.Errorf("Start after Stop = %v, want ErrStopped", err)
		}
	})
}

func TestStoppingNodeHandsItsClaimsToAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := memstore.New(nil)
		// A long look-ahead: node a claims the trigger well before it is due.
		a, recA := newScheduler(t, chime.Config{Store: shared, NodeID: "a", LookAhead: time.Minute})
		b, recB := newScheduler(t, chime.Config{Store: shared, NodeID: "b"})
		due := time.Now().Add(10 * time.Second)
		tr := trig("t", &schedule.Simple{})
		tr.StartTime = due
		scheduleJob(t, a, job("j"), tr)
		start(t, a)
		time.Sleep(time.Second) // a acquires the trigger
		start(t, b)
		stop(t, a) // releases its claim
		time.Sleep(15 * time.Second)
		stop(t, b)
		if n := len(recA.all()); n != 0 {
			t.Errorf("stopped node fired %d times", n)
		}
		fires := recB.all()
		if len(fires) != 1 || !fires[0].At.Equal(due) {
			t.Errorf("node b fires %v, want one at %s", fires, due)
		}
	})
}

func TestNoDuplicateFiresUnderChurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		shared := memstore.New(nil)
		rec := &recorder{}
		var nodes []*chime.Scheduler
		for i := range 3 {
			s, err := chime.New(chime.Config{Store: shared, NodeID: fmt.Sprintf("n%d", i), Logger: quietLogger, Workers: 3, LookAhead: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Register("record", rec); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, s)
		}
		const triggers = 60
		for i := range triggers {
			scheduleJob(t, nodes[0], job(fmt.Sprintf("j%d", i)), trig(fmt.Sprintf("t%d", i), mustCron(t, "*/2 * * * * ?")))
		}
		for _, n := range nodes {
			start(t, n)
		}
		// Operators keep pausing, resuming and rescheduling triggers (with
		// the same schedule, so fire times repeat) on every node while
		// they fire.
		for round := range 40 {
			n := nodes[round%3]
			key := chime.NewTriggerKey("", fmt.Sprintf("t%d", round%triggers))
			switch round % 3 {
			case 0:
				if err := n.PauseTrigger(ctx, key); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := n.ResumeTrigger(ctx, chime.NewTriggerKey("", fmt.Sprintf("t%d", (round-1)%triggers))); err != nil {
					t.Fatal(err)
				}
			case 2:
				if _, err := n.Reschedule(ctx, key, chime.Trigger{Schedule: mustCron(t, "*/2 * * * * ?")}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(700 * time.Millisecond)
		}
		for _, n := range nodes {
			stop(t, n)
		}
		seen := map[string]int{}
		for _, f := range rec.all() {
			seen[f.Trigger+"@"+f.Scheduled.Format(time.RFC3339)]++
		}
		dups := 0
		for k, n := range seen {
			if n > 1 {
				dups++
				t.Errorf("%s fired %d times", k, n)
			}
		}
		t.Logf("fires=%d distinct=%d duplicates=%d", len(rec.all()), len(seen), dups)
		if len(seen) < triggers*10 {
			t.Errorf("only %d distinct firings in 28s of %d two-second triggers", len(seen), triggers)
		}
	})
}

func TestMisfireThresholdIsConfigurable(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration
		wantRuns  int
	}{
		{"30s late is within the default 60s: fires", 0, 1},
		{"30s late is past a 10s threshold: the one-shot trigger has no next time to move to", 10 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s, rec := newScheduler(t, chime.Config{MisfireThreshold: tt.threshold})
				tr := trig("late", &schedule.Simple{})
				tr.StartTime = time.Now().Add(-30 * time.Second)
				tr.MisfireInstruction = schedule.MisfireRescheduleNextWithRemainingCount
				scheduleJob(t, s, job("j"), tr)
				start(t, s)
				time.Sleep(time.Second)
				stop(t, s)
				if got := len(rec.all()); got != tt.wantRuns {
					t.Errorf("ran %d times, want %d", got, tt.wantRuns)
				}
			})
		})
	}
}
