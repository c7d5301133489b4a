package chime_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
)

// calendarCase is one line of calendars.jsonl.
type calendarCase struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Calendar json.RawMessage `json:"calendar"`
	Valid    bool            `json:"valid"`
	Probes   []struct {
		T        time.Time `json:"t"`
		Included bool      `json:"included"`
	} `json:"probes"`
	Trigger *calendarCaseTrigger `json:"trigger"`
	Fires   []time.Time          `json:"fires"`
}

// calendarCaseTrigger is the trigger of a "trigger" case: a cron trigger
// (type, expr, tz) or a simple one (repeatCount, repeatIntervalMs).
type calendarCaseTrigger struct {
	Type             string     `json:"type"`
	Expr             string     `json:"expr"`
	TZ               string     `json:"tz"`
	Start            time.Time  `json:"start"`
	End              *time.Time `json:"end"`
	RepeatCount      int        `json:"repeatCount"`
	RepeatIntervalMs int64      `json:"repeatIntervalMs"`
}

// checkCalendarCase checks one calendars.jsonl case: an invalid definition
// must be refused; a probe case compares Includes at every probe (and that
// NextIncluded agrees with it); a trigger case compares the first fire times
// of a cron or simple trigger that uses the calendar.
func checkCalendarCase(line []byte) error {
	var c calendarCase
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	cal, err := calendar.Unmarshal(c.Calendar)
	if !c.Valid {
		if err == nil {
			return fmt.Errorf("%s: calendar %s accepted, want an error", c.ID, c.Calendar)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: calendar %s refused: %w", c.ID, c.Calendar, err)
	}
	switch c.Kind {
	case "probe":
		return checkCalendarProbes(c, cal)
	case "trigger":
		return checkCalendarTrigger(c, cal)
	default:
		return fmt.Errorf("%s: unknown kind %q", c.ID, c.Kind)
	}
}

// checkCalendarProbes compares Includes with each probe, and checks that
// NextIncluded returns the probe itself exactly when it is included and a
// later included instant otherwise.
func checkCalendarProbes(c calendarCase, cal calendar.Calendar) error {
	if len(c.Probes) == 0 {
		return fmt.Errorf("%s: probe case without probes", c.ID)
	}
	for _, p := range c.Probes {
		t := p.T.UTC()
		if got := cal.Includes(t); got != p.Included {
			return fmt.Errorf("%s: Includes(%s) = %v, want %v", c.ID, t.Format(time.RFC3339Nano), got, p.Included)
		}
		next := cal.NextIncluded(t)
		switch {
		case p.Included && !next.Equal(t):
			return fmt.Errorf("%s: NextIncluded(%s) = %s, want the probe itself", c.ID, t.Format(time.RFC3339Nano), next.Format(time.RFC3339Nano))
		case !p.Included && !next.IsZero() && (!next.After(t) || !cal.Includes(next)):
			return fmt.Errorf("%s: NextIncluded(%s) = %s, want a later included instant", c.ID, t.Format(time.RFC3339Nano), next.Format(time.RFC3339Nano))
		}
	}
	return nil
}

// checkCalendarTrigger builds the case's trigger, applies the calendar and
// compares its first fire times with the case's.
func checkCalendarTrigger(c calendarCase, cal calendar.Calendar) error {
	if c.Trigger == nil {
		return fmt.Errorf("%s: trigger case without trigger", c.ID)
	}
	tr := &schedule.Trigger{StartTime: c.Trigger.Start}
	if c.Trigger.End != nil {
		tr.EndTime = *c.Trigger.End
	}
	switch c.Trigger.Type {
	case "cron":
		s, err := schedule.NewCron(c.Trigger.Expr, c.Trigger.TZ)
		if err != nil {
			return fmt.Errorf("%s: cron trigger %q in %s: %w", c.ID, c.Trigger.Expr, c.Trigger.TZ, err)
		}
		tr.Schedule = s
	case "simple":
		tr.Schedule = &schedule.Simple{
			RepeatCount:    c.Trigger.RepeatCount,
			RepeatInterval: time.Duration(c.Trigger.RepeatIntervalMs) * time.Millisecond,
		}
	default:
		return fmt.Errorf("%s: unknown trigger type %q", c.ID, c.Trigger.Type)
	}
	if err := tr.Validate(); err != nil {
		return fmt.Errorf("%s: trigger refused: %w", c.ID, err)
	}
	const want = 20
	var got []time.Time
	for ft := tr.ComputeFirstFireTime(cal); !ft.IsZero() && len(got) < want; ft = tr.NextFireTime {
		got = append(got, ft)
		tr.Triggered(cal)
	}
	return compareCalendarFires(c.ID, c.Fires, got, want)
}

// compareCalendarFires describes the first difference between two lists of
// fire times, where want may be shorter than limit because the series ends.
func compareCalendarFires(id string, want, got []time.Time, limit int) error {
	for i := range min(len(want), len(got)) {
		if !want[i].Equal(got[i]) {
			return fmt.Errorf("%s: fire %d = %s, want %s", id, i, got[i].UTC().Format(time.RFC3339Nano), want[i].UTC().Format(time.RFC3339Nano))
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Errorf("%s: %d fires, want %d (next wanted %s)", id, len(got), len(want), want[len(got)].UTC().Format(time.RFC3339Nano))
	case len(got) > len(want) && len(want) < limit:
		return fmt.Errorf("%s: fire %s after the series ended", id, got[len(want)].UTC().Format(time.RFC3339Nano))
	}
	return nil
}
