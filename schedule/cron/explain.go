package cron

import (
	"fmt"
	"strconv"
	"strings"
)

// Explain parses expr with Parse and describes it in plain English.
func Explain(expr string) (string, error) {
	e, err := Parse(expr)
	if err != nil {
		return "", err
	}
	return e.Explain(), nil
}

var (
	monthLongNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayLongNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	ordinals     = []string{"", "first", "second", "third", "fourth", "fifth"}
)

// vocab says how to talk about the values of one field.
type vocab struct {
	one, many string           // "minute", "minutes"; empty for named values
	name      func(int) string // renders a value
}

var (
	secondVocab = vocab{one: "second", many: "seconds", name: strconv.Itoa}
	minuteVocab = vocab{one: "minute", many: "minutes", name: strconv.Itoa}
	hourVocab   = vocab{one: "hour", many: "hours", name: strconv.Itoa}
	dayVocab    = vocab{one: "day", many: "days", name: strconv.Itoa}
	yearVocab   = vocab{one: "year", many: "years", name: strconv.Itoa}
	monthVocab  = vocab{name: func(m int) string { return monthLongNames[(m+11)%12] }}
	// Quartz numbers days of the week 1 = Sunday; the standard dialect 0
	// or 7 = Sunday. v%7 covers the standard one, (v+6)%7 the Quartz one.
	quartzWeekVocab   = vocab{name: func(d int) string { return dayLongNames[(d+6)%7] }}
	standardWeekVocab = vocab{name: func(d int) string { return dayLongNames[d%7] }}
)

// Explain describes the schedule in plain English, for example "At 02:00,
// on the last weekday of every month".
func (e *Expression) Explain() string {
	switch e.dialect {
	case dialectEvery:
		return "Every " + e.every.String() + ", counted from the previous fire time"
	case dialectDescriptor:
		fallthrough
	case dialectStandard:
		return e.explainFields(standardSpecs[:], true)
	default:
		return e.explainFields(quartzSpecs[:], false)
	}
}

// explainFields describes the fields. specs is in the dialect's order.
func (e *Expression) explainFields(specs []fieldSpec, standard bool) string {
	var secSpec, minSpec, hourSpec, domSpec, monSpec, dowSpec *fieldSpec
	if standard {
		secSpec = &quartzSpecs[fieldSecond]
		minSpec, hourSpec, domSpec, monSpec, dowSpec = &specs[0], &specs[1], &specs[2], &specs[3], &specs[4]
	} else {
		secSpec, minSpec, hourSpec, domSpec, monSpec, dowSpec = &specs[0], &specs[1], &specs[2], &specs[3], &specs[4], &specs[5]
	}
	weekVocab := quartzWeekVocab
	if standard {
		weekVocab = standardWeekVocab
	}

	out := e.explainTime(secSpec, minSpec, hourSpec)

	dayPhrase := e.explainDays(domSpec, dowSpec, weekVocab)
	monthsAll := e.fields[fieldMonth] == "*"
	const ofMonth = " of the month"
	if strings.HasSuffix(dayPhrase, ofMonth) {
		dayPhrase = strings.TrimSuffix(dayPhrase, ofMonth)
		if monthsAll {
			dayPhrase += " of every month"
		} else {
			dayPhrase += " of " + describeField(e.fields[fieldMonth], monSpec, monthVocab)
		}
		out += ", " + dayPhrase
	} else {
		fixedTime := len(out) > 3 && out[3] >= '0' && out[3] <= '9'
		if dayPhrase != "every day" || !monthsAll || fixedTime {
			out += ", " + dayPhrase
		}
		if !monthsAll {
			out += ", in " + describeField(e.fields[fieldMonth], monSpec, monthVocab)
		}
	}
	if e.hasYear {
		out += ", in " + describeField(e.fields[fieldYear], &quartzSpecs[fieldYear], yearVocab)
	}
	return out
}

// explainTime describes the second, minute and hour fields.
func (e *Expression) explainTime(secSpec, minSpec, hourSpec *fieldSpec) string {
	secText, minText, hourText := e.fields[fieldSecond], e.fields[fieldMinute], e.fields[fieldHour]
	sec, secSingle := singleValue(secText)
	minute, minSingle := singleValue(minText)
	if secSingle && minSingle {
		if hours, ok := singleValues(hourText); ok && len(hours) <= 6 {
			times := make([]string, len(hours))
			for i, h := range hours {
				times[i] = fmt.Sprintf("%02d:%02d", h, minute)
				if sec != 0 {
					times[i] += fmt.Sprintf(":%02d", sec)
				}
			}
			return "At " + joinAnd(times)
		}
	}
	var parts []string
	switch {
	case secText == "*":
		parts = append(parts, "every second")
	case !(secSingle && sec == 0):
		parts = append(parts, atPrefix(describeField(secText, secSpec, secondVocab)))
	}
	switch {
	case minText == "*":
		if secSingle {
			parts = append(parts, "every minute")
		}
	default:
		parts = append(parts, atPrefix(describeField(minText, minSpec, minuteVocab)))
	}
	switch {
	case hourText == "*":
		if minText != "*" && minText != "*/1" && !strings.HasPrefix(minText, "*/") {
			parts = append(parts, "every hour")
		}
	default:
		parts = append(parts, describeHours(hourText, hourSpec))
	}
	return capitalize(strings.Join(parts, ", "))
}

// describeHours describes an hour field as wall-clock windows where it can.
func describeHours(text string, spec *fieldSpec) string {
	items := parseItems(text, spec)
	var windows []string
	for _, p := range items {
		switch {
		case p.star || p.step > 0:
			return atPrefix(describeField(text, spec, hourVocab))
		case p.hasRange:
			windows = append(windows, fmt.Sprintf("%02d:00 and %02d:59", p.lo, p.hi))
		default:
			windows = append(windows, fmt.Sprintf("%02d:00 and %02d:59", p.lo, p.lo))
		}
	}
	return "between " + strings.Join(windows, ", between ")
}

// explainDays describes the day-of-month and day-of-week fields.
func (e *Expression) explainDays(domSpec, dowSpec *fieldSpec, weekVocab vocab) string {
	domText, dowText := e.fields[fieldDayOfMonth], e.fields[fieldDayOfWeek]
	byMonth := func() string {
		switch e.monthDay {
		case monthDayLast:
			if e.lastOffset == 0 {
				return "on the last day of the month"
			}
			return daysBeforeLast(e.lastOffset) + " of the month"
		case monthDayLastWeekday:
			if e.lastOffset == 0 {
				return "on the last weekday of the month"
			}
			return "on the weekday nearest " + daysBeforeLast(e.lastOffset) + " of the month"
		case monthDayNearest:
			return "on the weekday nearest day " + strconv.Itoa(e.nearestDay) + " of the month"
		}
		if domText == "*" {
			return "every day"
		}
		d := describeField(domText, domSpec, dayVocab)
		if !strings.HasPrefix(d, "every ") {
			d = "on " + d
		}
		return d + " of the month"
	}
	byWeek := func() string {
		switch e.weekDay {
		case weekDayLast:
			return "on the last " + quartzWeekVocab.name(e.weekDayNum) + " of the month"
		case weekDayNth:
			return "on the " + ordinals[e.nth] + " " + quartzWeekVocab.name(e.weekDayNum) + " of the month"
		}
		if dowText == "*" {
			return "every day"
		}
		if dowText == "L" {
			return "on Saturday"
		}
		return "on " + describeField(dowText, dowSpec, weekVocab)
	}
	switch e.rule {
	case dayByMonth:
		return byMonth()
	case dayByWeek:
		return byWeek()
	case dayEither:
		return strings.TrimSuffix(byMonth(), " of the month") + " of the month or " + byWeek()
	default: // dayBoth
		switch {
		case domText == "*" && dowText == "*":
			return "every day"
		case dowText == "*":
			return byMonth()
		case domText == "*":
			return byWeek()
		}
		return byWeek() + ", if it is also " + strings.TrimPrefix(byMonth(), "on ")
	}
}

func daysBeforeLast(n int) string {
	if n == 1 {
		return "1 day before the last day"
	}
	return strconv.Itoa(n) + " days before the last day"
}

// parseItems parses a canonical field text back into its items.
func parseItems(text string, spec *fieldSpec) []plainItem {
	parts := strings.Split(text, ",")
	items := make([]plainItem, 0, len(parts))
	for _, part := range parts {
		p, reason := parsePlainItem(spec, part)
		if reason != "" {
			continue
		}
		items = append(items, p)
	}
	return items
}

// describeField describes a plain list field: "minutes 0, 15 and 30",
// "every 2 hours from hour 1 through 23", "Monday through Friday".
func describeField(text string, spec *fieldSpec, v vocab) string {
	items := parseItems(text, spec)
	var singles, parts []string
	for _, p := range items {
		if !p.star && !p.hasRange && p.step == 0 {
			singles = append(singles, v.name(p.lo))
			continue
		}
		parts = append(parts, describeItem(p, spec, v))
	}
	if len(singles) > 0 {
		var s string
		switch {
		case v.one == "":
			s = joinAnd(singles)
		case len(singles) == 1:
			s = v.one + " " + singles[0]
		default:
			s = v.many + " " + joinAnd(singles)
		}
		parts = append([]string{s}, parts...)
	}
	return joinAnd(parts)
}

func describeItem(p plainItem, spec *fieldSpec, v vocab) string {
	unit := func(n int) string {
		if v.one == "" {
			if n == 1 {
				return "value"
			}
			return "values"
		}
		if n == 1 {
			return v.one
		}
		return v.many
	}
	every := "every " + unit(1)
	if p.step > 1 {
		every = "every " + strconv.Itoa(p.step) + " " + unit(p.step)
	}
	lo, hi := v.name(p.lo), v.name(p.hi)
	from := lo
	if v.one != "" {
		from = v.one + " " + lo
	}
	switch {
	case p.star:
		return every
	case p.hasRange && p.step == 0:
		if v.one == "" {
			return lo + " through " + hi
		}
		return v.many + " " + lo + " through " + hi
	case p.hasRange:
		return every + " from " + from + " through " + hi
	default: // start with a step
		return every + " from " + from + " through " + v.name(spec.max)
	}
}

// singleValue reports whether a canonical field is one number.
func singleValue(text string) (int, bool) {
	n, ok, big := parseNumber(text)
	return n, ok && !big
}

// singleValues reports whether a canonical field is a list of numbers.
func singleValues(text string) ([]int, bool) {
	var out []int
	for _, part := range strings.Split(text, ",") {
		n, ok := singleValue(part)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func atPrefix(s string) string {
	if strings.HasPrefix(s, "every ") {
		return s
	}
	return "at " + s
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
