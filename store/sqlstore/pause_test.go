package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// pauseRaceRounds is how many times each race runs per dialect. Before the
// paused-group rows became lock points, PostgreSQL and MariaDB lost 11 to
// 46 of 50 rounds of each race.
const pauseRaceRounds = 50

// TestPauseRacesInsert runs, many times, a pause (or resume) of a group in
// one store and the insert of a trigger into that group in another store
// on the same database and scheduler (two pools, as two processes have),
// started together. Whichever commits first, the outcome must be one that
// running them one after the other gives: when the group is recorded
// paused after both, the new trigger is PAUSED; when nothing that covers
// it is recorded paused, it is WAITING.
func TestPauseRacesInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// sel selects the group of round i, whose trigger group is tg and
		// job group jg.
		sel func(tg, jg string) store.TriggerSelector
		// resume pauses the group first and races its resume.
		resume bool
		// newJob inserts the trigger with a new job of its own (JobWrite,
		// one statement on PostgreSQL) rather than into a stored job.
		newJob bool
	}{
		{"PauseGroup", func(tg, _ string) store.TriggerSelector { return store.TriggerSelector{Group: tg} }, false, false},
		{"PauseJobGroup", func(_, jg string) store.TriggerSelector { return store.TriggerSelector{JobGroup: jg} }, false, false},
		{"PauseAll", func(_, _ string) store.TriggerSelector { return store.TriggerSelector{All: true} }, false, false},
		{"ResumeGroup", func(tg, _ string) store.TriggerSelector { return store.TriggerSelector{Group: tg} }, true, false},
		{"ResumeJobGroup", func(_, jg string) store.TriggerSelector { return store.TriggerSelector{JobGroup: jg} }, true, false},
		{"ResumeAll", func(_, _ string) store.TriggerSelector { return store.TriggerSelector{All: true} }, true, false},
		{"PauseGroupNewJob", func(tg, _ string) store.TriggerSelector { return store.TriggerSelector{Group: tg} }, false, true},
		{"PauseJobGroupNewJob", func(_, jg string) store.TriggerSelector { return store.TriggerSelector{JobGroup: jg} }, false, true},
		{"ResumeAllNewJob", func(_, _ string) store.TriggerSelector { return store.TriggerSelector{All: true} }, true, true},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			open(t, url, nil) // migrate once, before the parallel tests
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					sched := schedName()
					pauser := open(t, url, &sqlstore.Options{SchedulerName: sched})
					inserter := open(t, url, &sqlstore.Options{SchedulerName: sched})
					ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
					defer cancel()
					lost := 0
					for i := range pauseRaceRounds {
						tg, jg := fmt.Sprintf("tg%02d", i), fmt.Sprintf("jg%02d", i)
						sel := tc.sel(tg, jg)
						// Odd rounds start with no trigger in the group, so that
						// the race may also create the group's paused-group rows.
						if !raceRound(ctx, t, pauser, inserter, tg, jg, sel, tc.resume, tc.newJob, i%2 == 0) {
							lost++
						}
					}
					if lost > 0 {
						t.Errorf("the trigger's state disagreed with the recorded pause in %d of %d rounds", lost, pauseRaceRounds)
					}
				})
			}
		})
	}
}

// raceRound runs one round of TestPauseRacesInsert and reports whether
// the outcome is consistent.
func raceRound(ctx context.Context, t *testing.T, pauser, inserter store.Store, tg, jg string,
	sel store.TriggerSelector, resume, newJob, withOld bool) bool {
	t.Helper()
	jk := store.Key{Group: jg, Name: "j"}
	if err := pauser.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: jk, Durable: true}}); err != nil {
		t.Fatalf("JobUpsert: %v", err)
	}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	trigger := func(name string) store.TriggerRecord {
		return store.TriggerRecord{Key: store.Key{Group: tg, Name: name}, JobKey: jk, Kind: "simple",
			Schedule: []byte(`{}`), StartTime: at, NextFireTime: at}
	}
	names := []string{"new"}
	if withOld {
		// A trigger already in the group gives the pause a row to update.
		if err := pauser.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: trigger("old")}); err != nil {
			t.Fatalf("TriggerInsert: %v", err)
		}
		names = append(names, "old")
	}
	if resume {
		if _, err := pauser.TriggersPause(ctx, &sel); err != nil {
			t.Fatalf("TriggersPause(%+v): %v", sel, err)
		}
	}

	start := make(chan struct{})
	var (
		wg                   sync.WaitGroup
		switchErr, insertErr error
	)
	wg.Go(func() {
		<-start
		if resume {
			_, switchErr = pauser.TriggersResume(ctx, &sel)
		} else {
			_, switchErr = pauser.TriggersPause(ctx, &sel)
		}
	})
	wg.Go(func() {
		<-start
		if !newJob {
			insertErr = inserter.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: trigger("new")})
			return
		}
		own := store.Key{Group: jg, Name: "new"}
		tr := trigger("new")
		tr.JobKey = own
		_, insertErr = inserter.JobWrite(ctx, &store.JobWriteParams{Job: store.JobRecord{Key: own}, Triggers: []store.TriggerRecord{tr}})
	})
	close(start)
	wg.Wait()
	if switchErr != nil || insertErr != nil {
		t.Fatalf("pause or resume: %v; insert: %v", switchErr, insertErr)
	}

	pg, err := pauser.PausedGroups(ctx)
	if err != nil {
		t.Fatalf("PausedGroups: %v", err)
	}
	paused := pg.All || slices.Contains(pg.TriggerGroups, tg) || slices.Contains(pg.JobGroups, jg)
	want := store.StateWaiting
	if paused {
		want = store.StatePaused
	}
	ok := true
	for _, name := range names {
		got, err := pauser.TriggerGet(ctx, store.Key{Group: tg, Name: name})
		if err != nil {
			t.Fatalf("TriggerGet: %v", err)
		}
		if got.State != want {
			t.Logf("after %+v (resume %v): trigger %s is %s with paused groups %+v; want %s",
				sel, resume, got.Key, got.State, *pg, want)
			ok = false
		}
	}
	if resume && paused {
		t.Errorf("after resuming %+v, paused groups are %+v", sel, *pg)
	}
	if !resume && !paused {
		t.Errorf("after pausing %+v, paused groups are %+v", sel, *pg)
	}
	// Leave nothing paused for the next round.
	if _, err := pauser.TriggersResume(ctx, &sel); err != nil {
		t.Fatalf("TriggersResume(%+v): %v", sel, err)
	}
	return ok
}
