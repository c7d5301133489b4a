// Package ics reads the dates of the events of an iCalendar file (RFC
// 5545), such as a public-holidays file exported by Google Calendar or
// Thunderbird, for a holiday calendar.
//
// [Dates] decodes the file with github.com/emersion/go-ical and expands
// recurrence rules with github.com/teambition/rrule-go. Before decoding it
// checks the file's structure line by line itself, so that a malformed
// file is refused with an [*Error] naming the line and property at fault,
// which the decoder does not report.
//
// The package is pure: time is an input (Options.Now), and nothing is
// read but the text given.
package ics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/calendar"
)

// Limits of Dates.
const (
	// MaxDates bounds the dates a file may yield.
	MaxDates = 20_000
	// maxOccurrences bounds the occurrences one recurring event may
	// expand to, whatever their dates.
	maxOccurrences = 100_000
)

// Error is a problem with the file: at Line (1-based, 0 when the problem
// is the file as a whole), in Property when one is at fault.
type Error struct {
	Line     int
	Property string
	Msg      string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Property != "" {
		b.WriteString(e.Property + ": ")
	}
	b.WriteString(clipMessage(e.Msg))
	return b.String()
}

// maxMessage bounds the bytes of an Error's message, so that a value quoted
// from a huge line does not make the error huge.
const maxMessage = 200

// clipMessage cuts msg to maxMessage bytes at a rune boundary and marks the
// cut with "…".
func clipMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// Options say how Dates reads a file.
type Options struct {
	// Location is the zone in which timed events and floating times get
	// their dates. nil means the file's X-WR-TIMEZONE, else UTC.
	Location *time.Location
	// Now is the current instant; Years counts from its year. Required.
	Now time.Time
	// Years is the recurrence horizon: a recurring event's occurrences
	// that start before the first day of year Now.Year()+Years (in
	// Location) are kept; 1 keeps this year's. Required, at least 1.
	Years int
}

// Result is what Dates read.
type Result struct {
	// Name is the file's X-WR-CALNAME, empty when it has none.
	Name string
	// Location is the zone the dates were read in.
	Location *time.Location
	// Dates are the dates the events cover, in order, each once.
	Dates []calendar.Date
	// Events counts the events read, cancelled ones left out.
	Events int
}

// Dates returns the dates the events of an iCalendar file cover:
//
//   - an all-day event (DTSTART;VALUE=DATE) its dates from DTSTART up to
//     DTEND, which is exclusive, or for DURATION days; one day without
//     either;
//   - a timed event the dates in Location of the instants from DTSTART up
//     to (not including) DTEND or DTSTART+DURATION; its start date without
//     either;
//   - a recurring event (RRULE, any FREQ with COUNT, UNTIL, INTERVAL and
//     BY… parts; RDATE) the dates of each occurrence that starts before
//     the horizon (see Options.Years), less those EXDATE lists or that a
//     RECURRENCE-ID event replaces.
//
// Events with STATUS:CANCELLED are skipped. A file without events, or
// with a malformed line, property or value, is refused with an *Error.
//
// A rule no date satisfies (BYMONTH=2;BYMONTHDAY=30) makes the expansion
// look for one up to the year 9999, a fraction of a second per event; ctx
// bounds the whole: when it ends, Dates returns its error.
func Dates(ctx context.Context, text string, opts Options) (*Result, error) {
	if opts.Years < 1 {
		return nil, fmt.Errorf("ics: Options.Years %d: want at least 1", opts.Years)
	}
	if opts.Now.IsZero() {
		return nil, errors.New("ics: Options.Now is required")
	}
	lines, err := scan(text)
	if err != nil {
		return nil, err
	}
	cal, err := decode(text)
	if err != nil {
		return nil, err
	}
	r := &Result{Location: opts.Location}
	r.Name, _ = cal.Props.Text("X-WR-CALNAME")
	if r.Location == nil {
		r.Location = time.UTC
		if tz, _ := cal.Props.Text("X-WR-TIMEZONE"); tz != "" {
			loc, err := wire.LoadZone(tz)
			if err != nil {
				return nil, &Error{Line: lines.calendarProp("X-WR-TIMEZONE"), Property: "X-WR-TIMEZONE",
					Msg: fmt.Sprintf("%q is not a known IANA time zone; give time_zone instead", tz)}
			}
			r.Location = loc
		}
	}
	rd := &reader{
		loc:   r.Location,
		until: time.Date(opts.Now.In(r.Location).Year()+opts.Years, time.January, 1, 0, 0, 0, 0, r.Location),
		dates: make(map[calendar.Date]struct{}),
	}

	// Read every event first: overrides (RECURRENCE-ID) remove
	// occurrences from the series of their UID.
	var events []*event
	for i, child := range cal.Children {
		if child.Name != ical.CompEvent {
			continue
		}
		ev, err := rd.event(child, lines.children[i])
		if err != nil {
			return nil, err
		}
		if ev != nil {
			events = append(events, ev)
		}
	}
	if len(events) == 0 {
		return nil, &Error{Msg: "the file has no events (no VEVENT that is not cancelled)"}
	}
	overridden := make(map[string][]moment)
	for _, ev := range events {
		if ev.recurrenceID != nil {
			overridden[ev.uid] = append(overridden[ev.uid], *ev.recurrenceID)
		}
	}
	for _, ev := range events {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ics: expanding recurrences: %w", err)
		}
		var skip []moment
		if ev.recurrenceID == nil {
			skip = overridden[ev.uid]
		}
		if err := rd.add(ev, skip); err != nil {
			return nil, err
		}
	}
	r.Events = len(events)
	for d := range rd.dates {
		r.Dates = append(r.Dates, d)
	}
	slices.SortFunc(r.Dates, func(a, b calendar.Date) int {
		return cmp.Or(cmp.Compare(a.Year, b.Year), cmp.Compare(a.Month, b.Month), cmp.Compare(a.Day, b.Day))
	})
	return r, nil
}

// decode decodes a text scan accepted. The decoder panics on some
// malformed lines that scan refuses first; should one get through, the
// panic is an *Error, not a crash of the server.
func decode(text string) (cal *ical.Calendar, err error) {
	defer func() {
		if p := recover(); p != nil {
			cal, err = nil, &Error{Msg: fmt.Sprintf("malformed file: %v", p)}
		}
	}()
	cal, err = ical.NewDecoder(strings.NewReader(text)).Decode()
	if err != nil {
		return nil, &Error{Msg: strings.TrimPrefix(err.Error(), "ical: ")}
	}
	return cal, nil
}

// moment is a DTSTART, DTEND, RDATE, EXDATE or RECURRENCE-ID value: a
// date (t at midnight UTC) or an instant.
type moment struct {
	t      time.Time
	isDate bool
}

// date returns the moment's date: a date's own, an instant's in loc.
func (m moment) date(loc *time.Location) calendar.Date {
	if m.isDate {
		return calendar.DateOf(m.t)
	}
	return calendar.DateOf(m.t.In(loc))
}

// matches reports whether an occurrence starting at m is the one an
// EXDATE or RECURRENCE-ID x names: the same instant, or the same date
// when either is a date.
func (m moment) matches(x moment, loc *time.Location) bool {
	if m.isDate || x.isDate {
		return m.date(loc) == x.date(loc)
	}
	return m.t.Equal(x.t)
}

// event is one VEVENT, read.
type event struct {
	line         int // its BEGIN line
	what         string
	uid          string
	start        moment
	length       time.Duration // from start to end; whole days for a date
	rule         *rrule.RRule
	ruleLine     int
	rdates       []moment
	exdates      []moment
	recurrenceID *moment
}

// reader holds what reading the events shares.
type reader struct {
	loc   *time.Location
	until time.Time
	dates map[calendar.Date]struct{}
}

// event reads a VEVENT; nil for a cancelled one.
func (rd *reader) event(c *ical.Component, ln *component) (*event, error) {
	ev := &event{line: ln.begin}
	ev.uid, _ = c.Props.Text(ical.PropUID)
	summary, _ := c.Props.Text(ical.PropSummary)
	ev.what = fmt.Sprintf("event at line %d", ln.begin)
	if summary != "" {
		ev.what = fmt.Sprintf("event %q at line %d", summary, ln.begin)
	}
	if status, _ := c.Props.Text(ical.PropStatus); strings.EqualFold(status, "CANCELLED") {
		return nil, nil
	}
	fail := func(prop string, format string, args ...any) error {
		return &Error{Line: ln.line(prop, ev.line), Property: prop, Msg: fmt.Sprintf(format, args...)}
	}
	startProp := c.Props.Get(ical.PropDateTimeStart)
	if startProp == nil {
		return nil, &Error{Line: ev.line, Property: "VEVENT", Msg: ev.what + " has no DTSTART"}
	}
	var err error
	if ev.start, err = rd.moment(startProp); err != nil {
		return nil, fail(ical.PropDateTimeStart, "%v", err)
	}
	switch endProp, durProp := c.Props.Get(ical.PropDateTimeEnd), c.Props.Get(ical.PropDuration); {
	case endProp != nil && durProp != nil:
		return nil, fail(ical.PropDuration, "%s has both DTEND and DURATION; RFC 5545 allows one", ev.what)
	case endProp != nil:
		end, err := rd.moment(endProp)
		if err != nil {
			return nil, fail(ical.PropDateTimeEnd, "%v", err)
		}
		if end.isDate != ev.start.isDate {
			return nil, fail(ical.PropDateTimeEnd, "is a date and DTSTART a date-time, or the reverse; both must be of one kind")
		}
		if ev.length = end.t.Sub(ev.start.t); ev.length < 0 {
			return nil, fail(ical.PropDateTimeEnd, "%s is before DTSTART %s", endProp.Value, startProp.Value)
		}
	case durProp != nil:
		d, err := durProp.Duration()
		if err != nil {
			return nil, fail(ical.PropDuration, "%q: %s", durProp.Value, strings.TrimPrefix(err.Error(), "ical: "))
		}
		if d < 0 {
			return nil, fail(ical.PropDuration, "%q is negative", durProp.Value)
		}
		ev.length = d
	case ev.start.isDate:
		ev.length = 24 * time.Hour
	}
	if ev.start.isDate {
		// A date event covers whole days; PT12H covers its start date.
		ev.length = max(ev.length.Truncate(24*time.Hour), 24*time.Hour)
	}
	if ev.length > 366*24*time.Hour {
		return nil, fail(ical.PropDateTimeEnd, "%s lasts %d days; at most 366 are allowed", ev.what, ev.length/(24*time.Hour))
	}

	if p := c.Props.Get(ical.PropRecurrenceRule); p != nil {
		ev.ruleLine = ln.line(ical.PropRecurrenceRule, ev.line)
		opt, err := rrule.StrToROptionInLocation(p.Value, rd.loc)
		if err != nil {
			return nil, fail(ical.PropRecurrenceRule, "%q: %v", p.Value, err)
		}
		if opt.Freq > rrule.DAILY {
			return nil, fail(ical.PropRecurrenceRule, "%q: FREQ=%s repeats within a day; a holiday calendar takes YEARLY, MONTHLY, WEEKLY or DAILY rules",
				p.Value, opt.Freq)
		}
		opt.Dtstart = ev.start.t
		if ev.start.isDate && !opt.Until.IsZero() {
			// UNTIL is a date for a date event: keep its day.
			opt.Until = time.Date(opt.Until.Year(), opt.Until.Month(), opt.Until.Day(), 0, 0, 0, 0, time.UTC)
		}
		if ev.rule, err = rrule.NewRRule(*opt); err != nil {
			return nil, fail(ical.PropRecurrenceRule, "%q: %v", p.Value, err)
		}
	}
	for name, list := range map[string]*[]moment{ical.PropRecurrenceDates: &ev.rdates, ical.PropExceptionDates: &ev.exdates} {
		for i, p := range c.Props.Values(name) {
			ms, err := rd.moments(&p)
			if err != nil {
				return nil, &Error{Line: ln.lineN(name, i, ev.line), Property: name, Msg: err.Error()}
			}
			*list = append(*list, ms...)
		}
	}
	if p := c.Props.Get(ical.PropRecurrenceID); p != nil {
		m, err := rd.moment(p)
		if err != nil {
			return nil, fail(ical.PropRecurrenceID, "%v", err)
		}
		if ev.uid == "" {
			return nil, fail(ical.PropRecurrenceID, "%s replaces an occurrence but has no UID naming its series", ev.what)
		}
		ev.recurrenceID = &m
	}
	return ev, nil
}

// add records the dates of an event's occurrences, less those skipped.
func (rd *reader) add(ev *event, skip []moment) error {
	starts := []moment{ev.start}
	if ev.rule != nil {
		starts = starts[:0]
		until := rd.until
		if ev.start.isDate { // dates are midnight UTC
			until = time.Date(until.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
		}
		next := ev.rule.Iterator()
		for n := 0; ; n++ {
			t, ok := next()
			if !ok || !t.Before(until) {
				break
			}
			if n == maxOccurrences {
				return &Error{Line: ev.ruleLine, Property: ical.PropRecurrenceRule,
					Msg: fmt.Sprintf("%s recurs more than %d times before %s", ev.what, maxOccurrences, rd.until.Format(time.DateOnly))}
			}
			starts = append(starts, moment{t: t, isDate: ev.start.isDate})
		}
	}
	starts = append(starts, ev.rdates...)
	for _, s := range starts {
		if slices.ContainsFunc(ev.exdates, func(x moment) bool { return s.matches(x, rd.loc) }) ||
			slices.ContainsFunc(skip, func(x moment) bool { return s.matches(x, rd.loc) }) {
			continue
		}
		if err := rd.cover(ev, s); err != nil {
			return err
		}
	}
	return nil
}

// cover records the dates of one occurrence starting at s.
func (rd *reader) cover(ev *event, s moment) error {
	put := func(d calendar.Date) error {
		rd.dates[d] = struct{}{}
		if len(rd.dates) > MaxDates {
			return &Error{Line: ev.line, Property: "VEVENT", Msg: fmt.Sprintf("the file yields more than %d dates", MaxDates)}
		}
		return nil
	}
	if s.isDate {
		for d := time.Duration(0); d < ev.length; d += 24 * time.Hour {
			if err := put(calendar.DateOf(s.t.Add(d))); err != nil {
				return err
			}
		}
		return nil
	}
	first := s.t.In(rd.loc)
	last := first
	if ev.length > 0 {
		last = s.t.Add(ev.length - time.Nanosecond).In(rd.loc)
	}
	for day := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC); ; day = day.AddDate(0, 0, 1) {
		if err := put(calendar.DateOf(day)); err != nil {
			return err
		}
		if calendar.DateOf(day) == calendar.DateOf(last) {
			return nil
		}
	}
}

// moment reads a one-valued date or date-time property.
func (rd *reader) moment(p *ical.Prop) (moment, error) {
	ms, err := rd.moments(p)
	if err != nil {
		return moment{}, err
	}
	if len(ms) != 1 {
		return moment{}, fmt.Errorf("%q: want one value", p.Value)
	}
	return ms[0], nil
}

// moments reads a date or date-time property's comma-separated values:
// VALUE=DATE (or 8 digits) is a date; a date-time ending in Z is UTC, one
// with TZID in that zone, a floating one in the reader's zone.
func (rd *reader) moments(p *ical.Prop) ([]moment, error) {
	valueType := strings.ToUpper(p.Params.Get(ical.ParamValue))
	loc := rd.loc
	if tzid := p.Params.Get(ical.PropTimezoneID); tzid != "" {
		l, err := wire.LoadZone(strings.Trim(tzid, "/"))
		if err != nil {
			return nil, fmt.Errorf("TZID %q is not a known IANA time zone", tzid)
		}
		loc = l
	}
	var out []moment
	for v := range strings.SplitSeq(p.Value, ",") {
		v = strings.TrimSpace(v)
		var (
			m   moment
			err error
		)
		switch {
		case valueType == "PERIOD":
			return nil, fmt.Errorf("%q: PERIOD values are not supported", p.Value)
		case valueType == "DATE" || (valueType == "" && len(v) == 8):
			m.isDate = true
			m.t, err = time.Parse("20060102", v)
		case strings.HasSuffix(v, "Z"):
			m.t, err = time.Parse("20060102T150405Z", v)
		default:
			m.t, err = time.ParseInLocation("20060102T150405", v, loc)
		}
		if err != nil || v == "" {
			if valueType == "DATE" || len(v) == 8 {
				return nil, fmt.Errorf("%q is not a date like 20241225", v)
			}
			return nil, fmt.Errorf("%q is not a date-time like 20241225T090000Z", v)
		}
		out = append(out, m)
	}
	return out, nil
}
