package chime_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/schedule"
)

// Checkers for the trigger conformance files: simple.jsonl,
// calendar_interval.jsonl, daily_time_interval.jsonl and misfire.jsonl.

// confTime is an RFC 3339 instant or JSON null (the zero time).
type confTime struct{ time.Time }

func (c *confTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		c.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	c.Time = t
	return nil
}

type simpleDef struct {
	Start            confTime `json:"start"`
	End              confTime `json:"end"`
	RepeatCount      int      `json:"repeatCount"`
	RepeatIntervalMs int64    `json:"repeatIntervalMs"`
}

func (d simpleDef) trigger() *schedule.Trigger {
	return &schedule.Trigger{
		Schedule:  &schedule.Simple{RepeatCount: d.RepeatCount, RepeatInterval: time.Duration(d.RepeatIntervalMs) * time.Millisecond},
		StartTime: d.Start.Time,
		EndTime:   d.End.Time,
	}
}

type calendarIntervalDef struct {
	Unit                                   string   `json:"unit"`
	Interval                               int      `json:"interval"`
	TZ                                     string   `json:"tz"`
	Start                                  confTime `json:"start"`
	End                                    confTime `json:"end"`
	PreserveHourOfDayAcrossDaylightSavings bool     `json:"preserveHourOfDayAcrossDaylightSavings"`
	SkipDayIfHourDoesNotExist              bool     `json:"skipDayIfHourDoesNotExist"`
}

func (d calendarIntervalDef) trigger() (*schedule.Trigger, error) {
	loc, err := time.LoadLocation(d.TZ)
	if err != nil {
		return nil, err
	}
	return &schedule.Trigger{
		Schedule: &schedule.CalendarInterval{
			Unit:                                   schedule.Unit(d.Unit),
			Interval:                               d.Interval,
			Location:                               loc,
			PreserveHourOfDayAcrossDaylightSavings: d.PreserveHourOfDayAcrossDaylightSavings,
			SkipDayIfHourDoesNotExist:              d.SkipDayIfHourDoesNotExist,
		},
		StartTime: d.Start.Time,
		EndTime:   d.End.Time,
	}, nil
}

type dailyTimeIntervalDef struct {
	StartTimeOfDay string   `json:"startTimeOfDay"`
	EndTimeOfDay   *string  `json:"endTimeOfDay"`
	DaysOfWeek     []int    `json:"daysOfWeek"`
	Interval       int      `json:"interval"`
	Unit           string   `json:"unit"`
	RepeatCount    int      `json:"repeatCount"`
	TZ             string   `json:"tz"`
	Start          confTime `json:"start"`
	End            confTime `json:"end"`
}

func (d dailyTimeIntervalDef) trigger() (*schedule.Trigger, error) {
	loc, err := time.LoadLocation(d.TZ)
	if err != nil {
		return nil, err
	}
	start, err := schedule.ParseTimeOfDay(d.StartTimeOfDay)
	if err != nil {
		return nil, err
	}
	end := schedule.TimeOfDay{Hour: 23, Minute: 59, Second: 59}
	if d.EndTimeOfDay != nil {
		if end, err = schedule.ParseTimeOfDay(*d.EndTimeOfDay); err != nil {
			return nil, err
		}
	}
	var days []time.Weekday
	for _, n := range d.DaysOfWeek {
		days = append(days, time.Weekday(n-1)) // 1 = Sunday
	}
	return &schedule.Trigger{
		Schedule: &schedule.DailyTimeInterval{
			StartTimeOfDay: start,
			EndTimeOfDay:   end,
			DaysOfWeek:     schedule.NewWeekdays(days...),
			Interval:       d.Interval,
			Unit:           schedule.Unit(d.Unit),
			RepeatCount:    d.RepeatCount,
			Location:       loc,
		},
		StartTime: d.Start.Time,
		EndTime:   d.End.Time,
	}, nil
}

type cronTriggerDef struct {
	Expr  string   `json:"expr"`
	TZ    string   `json:"tz"`
	Start confTime `json:"start"`
	End   confTime `json:"end"`
}

func (d cronTriggerDef) trigger() (*schedule.Trigger, error) {
	c, err := schedule.NewCron(d.Expr, d.TZ)
	if err != nil {
		return nil, err
	}
	return &schedule.Trigger{Schedule: c, StartTime: d.Start.Time, EndTime: d.End.Time}, nil
}

// checkFireSeries compares the first len(want) fire times (at most limit) of
// a freshly scheduled trigger with want; a shorter want means the series
// must end there.
func checkFireSeries(id string, tr *schedule.Trigger, valid bool, want []confTime, limit int) error {
	err := tr.Validate()
	if !valid {
		if err == nil {
			return fmt.Errorf("%s: accepted an invalid trigger", id)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: rejected a valid trigger: %v", id, err)
	}
	tr.ComputeFirstFireTime(nil)
	return compareTimes(id, "fires", tr.Upcoming(nil, limit), want, limit)
}

func compareTimes(id, what string, got []time.Time, want []confTime, limit int) error {
	for i := range min(len(got), len(want)) {
		if !got[i].Equal(want[i].Time) {
			return fmt.Errorf("%s: %s[%d] = %s, want %s", id, what, i, fmtTime(got[i]), fmtTime(want[i].Time))
		}
	}
	if len(got) < len(want) {
		return fmt.Errorf("%s: %s ended after %d times, want %d (next %s)", id, what, len(got), len(want), fmtTime(want[len(got)].Time))
	}
	if len(got) > len(want) && len(want) < limit {
		return fmt.Errorf("%s: %s has extra time %s after %d", id, what, fmtTime(got[len(want)]), len(want))
	}
	return nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func checkSimpleCase(line []byte) error {
	var c struct {
		ID    string     `json:"id"`
		Valid bool       `json:"valid"`
		Fires []confTime `json:"fires"`
		simpleDef
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	return checkFireSeries(c.ID, c.trigger(), c.Valid, c.Fires, 30)
}

func checkCalendarIntervalCase(line []byte) error {
	var c struct {
		ID    string     `json:"id"`
		Valid bool       `json:"valid"`
		Fires []confTime `json:"fires"`
		calendarIntervalDef
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	tr, err := c.trigger()
	if err != nil {
		return fmt.Errorf("%s: %v", c.ID, err)
	}
	return checkFireSeries(c.ID, tr, c.Valid, c.Fires, 20)
}

func checkDailyTimeIntervalCase(line []byte) error {
	var c struct {
		ID    string     `json:"id"`
		Valid bool       `json:"valid"`
		Fires []confTime `json:"fires"`
		dailyTimeIntervalDef
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	tr, err := c.trigger()
	if err != nil {
		return fmt.Errorf("%s: %v", c.ID, err)
	}
	return checkFireSeries(c.ID, tr, c.Valid, c.Fires, 30)
}

func checkMisfireCase(line []byte) error {
	var c struct {
		ID                 string          `json:"id"`
		Now                confTime        `json:"now"`
		TriggerType        string          `json:"triggerType"`
		Trigger            json.RawMessage `json:"trigger"`
		MisfireInstruction string          `json:"misfireInstruction"`
		Calendar           json.RawMessage `json:"calendar"`
		State              struct {
			NextFireTime     confTime `json:"nextFireTime"`
			PreviousFireTime confTime `json:"previousFireTime"`
			StartTime        confTime `json:"startTime"`
			EndTime          confTime `json:"endTime"`
			RepeatCount      *int     `json:"repeatCount"`
			TimesTriggered   int      `json:"timesTriggered"`
		} `json:"state"`
		Valid        bool       `json:"valid"`
		NextFireTime confTime   `json:"nextFireTime"`
		Following    []confTime `json:"following"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	var tr *schedule.Trigger
	var err error
	switch c.TriggerType {
	case "simple":
		var d simpleDef
		if err = json.Unmarshal(c.Trigger, &d); err == nil {
			if c.State.RepeatCount != nil {
				d.RepeatCount = *c.State.RepeatCount
			}
			tr = d.trigger()
		}
	case "cron":
		var d cronTriggerDef
		if err = json.Unmarshal(c.Trigger, &d); err == nil {
			tr, err = d.trigger()
		}
	case "calendarInterval":
		var d calendarIntervalDef
		if err = json.Unmarshal(c.Trigger, &d); err == nil {
			tr, err = d.trigger()
		}
	case "dailyTimeInterval":
		var d dailyTimeIntervalDef
		if err = json.Unmarshal(c.Trigger, &d); err == nil {
			tr, err = d.trigger()
		}
	default:
		return fmt.Errorf("%s: unknown trigger type %q", c.ID, c.TriggerType)
	}
	if err != nil {
		return fmt.Errorf("%s: trigger: %v", c.ID, err)
	}
	tr.StartTime = c.State.StartTime.Time
	tr.EndTime = c.State.EndTime.Time
	tr.NextFireTime = c.State.NextFireTime.Time
	tr.PreviousFireTime = c.State.PreviousFireTime.Time
	tr.TimesTriggered = c.State.TimesTriggered
	tr.MisfireInstruction = schedule.MisfireInstruction(c.MisfireInstruction)

	var cal schedule.Calendar
	if len(c.Calendar) > 0 && strings.TrimSpace(string(c.Calendar)) != "null" {
		decoded, err := calendar.Unmarshal(c.Calendar)
		if err != nil {
			return fmt.Errorf("%s: calendar: %v", c.ID, err)
		}
		cal = decoded
	}

	err = tr.Validate()
	if !c.Valid {
		if err == nil {
			return fmt.Errorf("%s: accepted misfire instruction %q for a %s trigger", c.ID, c.MisfireInstruction, c.TriggerType)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: rejected a valid trigger: %v", c.ID, err)
	}
	tr.UpdateAfterMisfire(c.Now.Time, cal)
	if !tr.NextFireTime.Equal(c.NextFireTime.Time) {
		return fmt.Errorf("%s: %s: nextFireTime = %s, want %s", c.ID, c.MisfireInstruction, fmtTime(tr.NextFireTime), fmtTime(c.NextFireTime.Time))
	}
	return compareTimes(c.ID, "following", tr.Upcoming(cal, 5), c.Following, 5)
}
