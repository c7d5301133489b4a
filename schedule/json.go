package schedule

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// wireSchedule is the JSON form of every schedule kind; Kind selects which
// fields apply.
type wireSchedule struct {
	Kind Kind `json:"kind"`

	// cron
	Expression string `json:"expression,omitempty"`

	// simple
	RepeatIntervalMs *int64 `json:"repeat_interval_ms,omitempty"`

	// calendar_interval and daily_time_interval
	Unit     Unit `json:"unit,omitempty"`
	Interval *int `json:"interval,omitempty"`

	// calendar_interval
	PreserveHourOfDay         bool `json:"preserve_hour_of_day_across_daylight_savings,omitempty"`
	SkipDayIfHourDoesNotExist bool `json:"skip_day_if_hour_does_not_exist,omitempty"`

	// daily_time_interval
	StartTimeOfDay *TimeOfDay `json:"start_time_of_day,omitempty"`
	EndTimeOfDay   *TimeOfDay `json:"end_time_of_day,omitempty"`
	DaysOfWeek     []string   `json:"days_of_week,omitempty"`

	// simple and daily_time_interval
	RepeatCount *int `json:"repeat_count,omitempty"`

	// fixed_delay
	DelayMs *int64 `json:"delay_ms,omitempty"`

	// cron, calendar_interval and daily_time_interval
	TimeZone string `json:"time_zone,omitempty"`
}

// Marshal encodes a schedule as JSON with a "kind" discriminator, for
// example {"kind":"cron","expression":"0 0 12 ? * MON-FRI","time_zone":"Europe/Paris"}.
// Durations are whole milliseconds, days of week English names, times of
// day "HH:MM:SS".
func Marshal(s Schedule) ([]byte, error) {
	if s == nil {
		return nil, invalid("schedule", "missing")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	w := wireSchedule{Kind: s.Kind()}
	switch v := s.(type) {
	case *Cron:
		w.Expression = v.Expression()
		w.TimeZone = v.Location().String()
	case *Simple:
		ms := v.RepeatInterval.Milliseconds()
		w.RepeatIntervalMs = &ms
		w.RepeatCount = &v.RepeatCount
	case *CalendarInterval:
		w.Unit = v.Unit
		w.Interval = &v.Interval
		w.TimeZone = v.location().String()
		w.PreserveHourOfDay = v.PreserveHourOfDayAcrossDaylightSavings
		w.SkipDayIfHourDoesNotExist = v.SkipDayIfHourDoesNotExist
	case *DailyTimeInterval:
		w.Unit = v.Unit
		w.Interval = &v.Interval
		w.TimeZone = v.location().String()
		w.StartTimeOfDay = &v.StartTimeOfDay
		w.EndTimeOfDay = &v.EndTimeOfDay
		for _, d := range v.DaysOfWeek.Days() {
			w.DaysOfWeek = append(w.DaysOfWeek, d.String())
		}
		w.RepeatCount = &v.RepeatCount
	case *FixedDelay:
		ms := v.Delay.Milliseconds()
		w.DelayMs = &ms
	default:
		return nil, fmt.Errorf("schedule: cannot marshal %T", s)
	}
	return json.Marshal(w)
}

// Unmarshal decodes a schedule encoded by Marshal and validates it. Unknown
// fields are rejected; errors are *ValidationError naming the field where
// the input is well-formed JSON.
func Unmarshal(data []byte) (Schedule, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var w wireSchedule
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("schedule: decode: %w", err)
	}
	var s Schedule
	switch w.Kind {
	case KindCron:
		c, err := NewCron(w.Expression, w.TimeZone)
		if err != nil {
			return nil, err
		}
		s = c
	case KindSimple:
		// As in Quartz, a simple schedule fires once unless told to
		// repeat, and needs an interval only when it repeats.
		simple := &Simple{}
		if w.RepeatCount != nil {
			simple.RepeatCount = *w.RepeatCount
		}
		switch {
		case w.RepeatIntervalMs != nil:
			simple.RepeatInterval = time.Duration(*w.RepeatIntervalMs) * time.Millisecond
		case simple.RepeatCount != 0:
			return nil, invalid("repeat_interval_ms", "missing: a schedule that repeats needs an interval")
		}
		s = simple
	case KindCalendarInterval:
		loc, err := loadLocation("time_zone", w.TimeZone)
		if err != nil {
			return nil, err
		}
		if w.Interval == nil {
			return nil, invalid("interval", "missing")
		}
		s = &CalendarInterval{
			Unit:                                   w.Unit,
			Interval:                               *w.Interval,
			Location:                               loc,
			PreserveHourOfDayAcrossDaylightSavings: w.PreserveHourOfDay,
			SkipDayIfHourDoesNotExist:              w.SkipDayIfHourDoesNotExist,
		}
	case KindDailyTimeInterval:
		loc, err := loadLocation("time_zone", w.TimeZone)
		if err != nil {
			return nil, err
		}
		switch {
		case w.Interval == nil:
			return nil, invalid("interval", "missing")
		case w.StartTimeOfDay == nil:
			return nil, invalid("start_time_of_day", "missing")
		case w.EndTimeOfDay == nil:
			return nil, invalid("end_time_of_day", "missing")
		case w.RepeatCount == nil:
			return nil, invalid("repeat_count", "missing")
		}
		days, err := parseWeekdays(w.DaysOfWeek)
		if err != nil {
			return nil, err
		}
		s = &DailyTimeInterval{
			StartTimeOfDay: *w.StartTimeOfDay,
			EndTimeOfDay:   *w.EndTimeOfDay,
			DaysOfWeek:     days,
			Interval:       *w.Interval,
			Unit:           w.Unit,
			RepeatCount:    *w.RepeatCount,
			Location:       loc,
		}
	case KindFixedDelay:
		if w.DelayMs == nil {
			return nil, invalid("delay_ms", "missing")
		}
		s = &FixedDelay{Delay: time.Duration(*w.DelayMs) * time.Millisecond}
	default:
		return nil, invalid("kind", "%q is not one of cron, simple, calendar_interval, daily_time_interval, fixed_delay", string(w.Kind))
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func parseWeekdays(names []string) (Weekdays, error) {
	var w Weekdays
	for _, name := range names {
		found := false
		for d := time.Sunday; d <= time.Saturday; d++ {
			if strings.EqualFold(name, d.String()) {
				w |= 1 << d
				found = true
				break
			}
		}
		if !found {
			return 0, invalid("days_of_week", "%q is not a day of the week", name)
		}
	}
	return w, nil
}
