package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/internal/tz"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/schedule"
)

// Schedule kinds of the API. Once is the API's name for a simple schedule
// that does not repeat.
const (
	KindCron              = "cron"
	KindOnce              = "once"
	KindSimple            = "simple"
	KindCalendarInterval  = "calendar_interval"
	KindDailyTimeInterval = "daily_time_interval"
	KindFixedDelay        = "fixed_delay"
)

// kinds lists the schedule kinds for messages.
const kinds = "cron, once, simple, calendar_interval, daily_time_interval or fixed_delay"

// The JSON of each schedule kind, as EncodeSchedule writes it.
type (
	cronJSON struct {
		Kind       string `json:"kind"`
		Expression string `json:"expression"`
		TimeZone   string `json:"time_zone"`
	}
	onceJSON struct {
		Kind string `json:"kind"`
	}
	simpleJSON struct {
		Kind        string `json:"kind"`
		Interval    string `json:"interval"`
		RepeatCount *int   `json:"repeat_count,omitempty"`
	}
	calendarIntervalJSON struct {
		Kind                                   string `json:"kind"`
		Interval                               int    `json:"interval"`
		Unit                                   string `json:"unit"`
		TimeZone                               string `json:"time_zone"`
		PreserveHourOfDayAcrossDaylightSavings bool   `json:"preserve_hour_of_day_across_daylight_savings,omitempty"`
		SkipDayIfHourDoesNotExist              bool   `json:"skip_day_if_hour_does_not_exist,omitempty"`
	}
	dailyTimeIntervalJSON struct {
		Kind           string   `json:"kind"`
		Interval       string   `json:"interval"`
		StartTimeOfDay string   `json:"start_time_of_day"`
		EndTimeOfDay   string   `json:"end_time_of_day"`
		DaysOfWeek     []string `json:"days_of_week"`
		RepeatCount    *int     `json:"repeat_count,omitempty"`
		TimeZone       string   `json:"time_zone"`
	}
	fixedDelayJSON struct {
		Kind  string `json:"kind"`
		Delay string `json:"delay"`
	}
)

// EncodeSchedule returns the API's JSON form of s. A simple schedule that
// does not repeat is {"kind":"once"}.
func EncodeSchedule(s schedule.Schedule) (json.RawMessage, error) {
	if s == nil {
		return nil, errors.New("wire: nil schedule")
	}
	var v any
	switch s := s.(type) {
	case *schedule.Cron:
		v = cronJSON{Kind: KindCron, Expression: s.Expression(), TimeZone: s.Location().String()}
	case *schedule.Simple:
		if s.RepeatCount == 0 {
			v = onceJSON{Kind: KindOnce}
			break
		}
		v = simpleJSON{Kind: KindSimple, Interval: jobs.FormatDuration(s.RepeatInterval), RepeatCount: repeatCount(s.RepeatCount)}
	case *schedule.CalendarInterval:
		v = calendarIntervalJSON{
			Kind: KindCalendarInterval, Interval: s.Interval, Unit: strings.ToLower(string(s.Unit)),
			TimeZone:                               zoneName(s.Location),
			PreserveHourOfDayAcrossDaylightSavings: s.PreserveHourOfDayAcrossDaylightSavings,
			SkipDayIfHourDoesNotExist:              s.SkipDayIfHourDoesNotExist,
		}
	case *schedule.DailyTimeInterval:
		days := []string{}
		for _, d := range s.DaysOfWeek.Days() {
			days = append(days, strings.ToLower(d.String()))
		}
		v = dailyTimeIntervalJSON{
			Kind: KindDailyTimeInterval, Interval: jobs.FormatDuration(time.Duration(s.Interval) * unitDuration(s.Unit)),
			StartTimeOfDay: s.StartTimeOfDay.String(), EndTimeOfDay: s.EndTimeOfDay.String(),
			DaysOfWeek: days, RepeatCount: repeatCount(s.RepeatCount), TimeZone: zoneName(s.Location),
		}
	case *schedule.FixedDelay:
		v = fixedDelayJSON{Kind: KindFixedDelay, Delay: jobs.FormatDuration(s.Delay)}
	default:
		return nil, fmt.Errorf("wire: cannot encode a schedule of type %T", s)
	}
	return json.Marshal(v)
}

// repeatCount is the repeat_count field of n repeats: absent for ever.
func repeatCount(n int) *int {
	if n == schedule.RepeatForever {
		return nil
	}
	return &n
}

// zoneName names loc, nil being UTC.
func zoneName(loc *time.Location) string {
	if loc == nil {
		return time.UTC.String()
	}
	return loc.String()
}

// unitDuration is the length of a second, minute or hour unit.
func unitDuration(u schedule.Unit) time.Duration {
	switch u {
	case schedule.UnitMinute:
		return time.Minute
	case schedule.UnitHour:
		return time.Hour
	}
	return time.Second
}

// DecodeSchedule decodes and validates a schedule in the API's JSON form;
// path is where it sits in the request ("triggers[0].schedule") and
// prefixes the fields that errors and warnings name. Every error is an
// *api.Error with code invalid_argument.
func DecodeSchedule(data []byte, path string) (schedule.Schedule, []Warning, error) {
	o, err := readObject(data, path)
	if err != nil {
		return nil, nil, err
	}
	kind, ok, err := o.str("kind", kinds)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		return nil, nil, invalidf(o.field("kind"), "is required: %s", kinds)
	}
	var (
		s   schedule.Schedule
		old deprecated
	)
	switch kind {
	case KindCron:
		s, err = decodeCron(o)
	case KindOnce:
		s, err = &schedule.Simple{}, o.only("a once schedule", "kind")
	case KindSimple:
		s, err = decodeSimple(o, &old)
	case KindCalendarInterval:
		s, err = decodeCalendarInterval(o, &old)
	case KindDailyTimeInterval:
		s, err = decodeDailyTimeInterval(o, &old)
	case KindFixedDelay:
		s, err = decodeFixedDelay(o)
	default:
		return nil, nil, invalidf(o.field("kind"), "%q is not a schedule kind; want %s", kind, kinds)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, nil, validationErr(o, err)
	}
	now, err := EncodeSchedule(s)
	if err != nil {
		return nil, nil, err
	}
	return s, old.warning(path, now), nil
}

// ScheduleField returns the name in the API's schedule objects of a
// field as package schedule's errors name it.
func ScheduleField(name string) string {
	if name == "repeat_interval" {
		return "interval"
	}
	return name
}

// validationErr translates an error of package schedule into the API's
// field names.
func validationErr(o *object, err error) error {
	var ve *schedule.ValidationError
	if !errors.As(err, &ve) {
		return invalidf(o.path, "%v", err)
	}
	field := ScheduleField(ve.Field)
	msg := ve.Reason
	if ve.Err != nil {
		msg += ": " + ve.Err.Error()
	}
	return invalidf(o.field(field), "%s", msg)
}

// zone reads the optional time_zone field; absent is UTC.
func zone(o *object) (*time.Location, error) {
	name, _, err := o.str("time_zone", `an IANA time zone such as "Europe/Berlin"`)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return time.UTC, nil
	}
	loc, err := LoadZone(name)
	if err != nil {
		return nil, invalidf(o.field("time_zone"), "%v", err)
	}
	return loc, nil
}

// LoadZone returns the IANA time zone called name, by the rule of every
// time zone chime takes by name: "", "Local" and unknown names are
// refused. The error's text is the reason, naming the value.
func LoadZone(name string) (*time.Location, error) { return tz.Load(name) }

func decodeCron(o *object) (schedule.Schedule, error) {
	if err := o.only("a cron schedule", "kind", "expression", "time_zone"); err != nil {
		return nil, err
	}
	expr, ok, err := o.str("expression", `a cron expression such as "0 30 2 ? * MON-FRI"`)
	switch {
	case err != nil:
		return nil, err
	case !ok || expr == "":
		return nil, invalidf(o.field("expression"), `is required, such as "0 30 2 ? * MON-FRI"`)
	}
	loc, err := zone(o)
	if err != nil {
		return nil, err
	}
	c, err := schedule.NewCronInLocation(expr, loc)
	if err != nil {
		return nil, validationErr(o, err)
	}
	return c, nil
}

// duration reads a field holding a Go duration string.
func duration(o *object, name string) (time.Duration, bool, error) {
	const hint = `a duration such as "90s" or "1h30m"`
	s, ok, err := o.str(name, hint)
	if err != nil || !ok {
		return 0, ok, err
	}
	d, perr := time.ParseDuration(s)
	switch {
	case perr != nil:
		return 0, true, invalidf(o.field(name), "%q is not %s", s, hint)
	case d <= 0:
		return 0, true, invalidf(o.field(name), "%s is not positive", s)
	}
	return d, true, nil
}

// repeats reads the optional repeat_count: absent repeats for ever.
func repeats(o *object, old *deprecated) (int, error) {
	n, ok, err := o.int("repeat_count", "how many times to fire after the first")
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return schedule.RepeatForever, nil
	case n == schedule.RepeatForever:
		old.add("repeat_count -1 for ever: leave repeat_count out")
		return n, nil
	case n < 0:
		return 0, invalidf(o.field("repeat_count"), "%d is negative; leave repeat_count out to repeat for ever", n)
	}
	return n, nil
}

func decodeSimple(o *object, old *deprecated) (schedule.Schedule, error) {
	if o.has("repeat_interval_ms") {
		if o.has("interval") {
			return nil, invalidf(o.field("repeat_interval_ms"), "is the deprecated spelling of interval, which is given too; leave it out")
		}
		return decodeOldSimple(o, old)
	}
	if err := o.only("a simple schedule", "kind", "interval", "repeat_count"); err != nil {
		return nil, err
	}
	d, ok, err := duration(o, "interval")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalidf(o.field("interval"), `is required, a duration such as "5m"; a trigger that fires once is {"kind":"once"}`)
	case d%time.Millisecond != 0:
		return nil, invalidf(o.field("interval"), "%s is not a whole number of milliseconds", d)
	}
	n, err := repeats(o, old)
	if err != nil {
		return nil, err
	}
	return &schedule.Simple{RepeatCount: n, RepeatInterval: d}, nil
}

// decodeOldSimple reads the previous release's simple schedule, with its
// meaning: repeat_count 0 (or absent) fires once, -1 repeats for ever.
func decodeOldSimple(o *object, old *deprecated) (schedule.Schedule, error) {
	if err := o.only("a simple schedule", "kind", "repeat_interval_ms", "repeat_count"); err != nil {
		return nil, err
	}
	old.add("repeat_interval_ms")
	ms, _, err := o.int("repeat_interval_ms", "milliseconds")
	if err != nil {
		return nil, err
	}
	n, _, err := o.int("repeat_count", "how many times to fire after the first")
	if err != nil {
		return nil, err
	}
	if n == 0 {
		old.add("no repeat_count: fires once")
	}
	return &schedule.Simple{RepeatCount: n, RepeatInterval: time.Duration(ms) * time.Millisecond}, nil
}

// decodeFixedDelay reads {"kind":"fixed_delay","delay":"30s"}: run again
// a delay after the last run ended.
func decodeFixedDelay(o *object) (schedule.Schedule, error) {
	if err := o.only("a fixed_delay schedule", "kind", "delay"); err != nil {
		return nil, err
	}
	d, ok, err := duration(o, "delay")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalidf(o.field("delay"), `is required, a duration such as "30s": the time from the end of a run to the start of the next`)
	case d%time.Millisecond != 0:
		return nil, invalidf(o.field("delay"), "%s is not a whole number of milliseconds", d)
	}
	return &schedule.FixedDelay{Delay: d}, nil
}

// unit reads a unit field: lower case, or the old upper case.
func unit(o *object, old *deprecated, allowed ...schedule.Unit) (schedule.Unit, error) {
	names := make([]string, len(allowed))
	for i, u := range allowed {
		names[i] = strings.ToLower(string(u))
	}
	want := strings.Join(names, ", ")
	s, ok, err := o.str("unit", want)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", invalidf(o.field("unit"), "is required: %s", want)
	}
	for _, u := range allowed {
		switch s {
		case strings.ToLower(string(u)):
			return u, nil
		case string(u):
			old.add("unit %q: write %q", s, strings.ToLower(s))
			return u, nil
		}
	}
	return "", invalidf(o.field("unit"), "%q is not a unit; want %s", s, want)
}

func decodeCalendarInterval(o *object, old *deprecated) (schedule.Schedule, error) {
	if err := o.only("a calendar_interval schedule", "kind", "interval", "unit", "time_zone",
		"preserve_hour_of_day_across_daylight_savings", "skip_day_if_hour_does_not_exist"); err != nil {
		return nil, err
	}
	n, ok, err := o.int("interval", `how many units, such as 1 with "unit": "month"`)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalidf(o.field("interval"), `is required: how many units, such as 1 with "unit": "month"`)
	}
	u, err := unit(o, old, schedule.UnitSecond, schedule.UnitMinute, schedule.UnitHour, schedule.UnitDay,
		schedule.UnitWeek, schedule.UnitMonth, schedule.UnitYear)
	if err != nil {
		return nil, err
	}
	loc, err := zone(o)
	if err != nil {
		return nil, err
	}
	s := &schedule.CalendarInterval{Unit: u, Interval: n, Location: loc}
	if s.PreserveHourOfDayAcrossDaylightSavings, err = o.bool("preserve_hour_of_day_across_daylight_savings"); err != nil {
		return nil, err
	}
	if s.SkipDayIfHourDoesNotExist, err = o.bool("skip_day_if_hour_does_not_exist"); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeDailyTimeInterval(o *object, old *deprecated) (schedule.Schedule, error) {
	if err := o.only("a daily_time_interval schedule", "kind", "interval", "unit", "start_time_of_day",
		"end_time_of_day", "days_of_week", "repeat_count", "time_zone"); err != nil {
		return nil, err
	}
	s := &schedule.DailyTimeInterval{}
	var err error
	if raw, ok := o.fields["interval"]; ok && o.has("unit") && bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return nil, invalidf(o.field("unit"), "is not a field of a daily_time_interval schedule whose interval is a duration; leave it out")
	}
	if o.has("unit") {
		// The previous release's form: a count of units.
		n, _, ierr := o.int("interval", "how many units")
		if ierr != nil {
			return nil, ierr
		}
		if s.Unit, err = unit(o, old, schedule.UnitSecond, schedule.UnitMinute, schedule.UnitHour); err != nil {
			return nil, err
		}
		old.add("interval with unit: write interval as a duration")
		s.Interval = n
	} else {
		d, ok, derr := duration(o, "interval")
		switch {
		case derr != nil:
			return nil, derr
		case !ok:
			return nil, invalidf(o.field("interval"), `is required, a duration such as "15m"`)
		case d%time.Second != 0:
			return nil, invalidf(o.field("interval"), "%s is not a whole number of seconds", d)
		case d > 24*time.Hour:
			return nil, invalidf(o.field("interval"), "%s is longer than a day", d)
		}
		s.Unit, s.Interval = schedule.UnitSecond, int(d/time.Second)
		switch {
		case d%time.Hour == 0:
			s.Unit, s.Interval = schedule.UnitHour, int(d/time.Hour)
		case d%time.Minute == 0:
			s.Unit, s.Interval = schedule.UnitMinute, int(d/time.Minute)
		}
	}
	for _, f := range []struct {
		name string
		tod  *schedule.TimeOfDay
	}{{"start_time_of_day", &s.StartTimeOfDay}, {"end_time_of_day", &s.EndTimeOfDay}} {
		v, ok, err := o.str(f.name, `a time of day such as "09:00:00"`)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, invalidf(o.field(f.name), `is required, a time of day such as "09:00:00"`)
		}
		if *f.tod, err = schedule.ParseTimeOfDay(v); err != nil {
			return nil, invalidf(o.field(f.name), `%q is not a time of day such as "09:00:00"`, v)
		}
	}
	if s.DaysOfWeek, err = weekdays(o, old); err != nil {
		return nil, err
	}
	if s.RepeatCount, err = repeats(o, old); err != nil {
		return nil, err
	}
	if s.Location, err = zone(o); err != nil {
		return nil, err
	}
	return s, nil
}

// weekdays reads days_of_week: lower-case English names; absent is every
// day.
func weekdays(o *object, old *deprecated) (schedule.Weekdays, error) {
	const hint = `lower-case day names such as ["monday", "friday"]`
	names, ok, err := o.strings("days_of_week", hint)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return schedule.EveryDay, nil
	case len(names) == 0:
		return 0, invalidf(o.field("days_of_week"), "names no day; leave it out for every day")
	}
	var w schedule.Weekdays
	capitalised := false
	for i, name := range names {
		found := false
		for d := time.Sunday; d <= time.Saturday; d++ {
			if strings.EqualFold(name, d.String()) {
				w |= schedule.NewWeekdays(d)
				found = true
				capitalised = capitalised || name != strings.ToLower(name)
			}
		}
		if !found {
			return 0, invalidf(fmt.Sprintf("%s[%d]", o.field("days_of_week"), i), "%q is not a day of the week; want %s", name, hint)
		}
	}
	if capitalised {
		old.add("capitalised days_of_week: write them in lower case")
	}
	return w, nil
}
