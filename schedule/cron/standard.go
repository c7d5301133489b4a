package cron

import (
	"strings"
	"time"
)

// Standard-dialect field specs, in standard order (minute hour
// day-of-month month day-of-week). Day-of-week numbers 0 and 7 are Sunday.
var standardSpecs = [5]fieldSpec{
	{name: "minute", min: 0, max: 59, maxStep: 59, wrap: true},
	{name: "hour", min: 0, max: 23, maxStep: 23, wrap: true},
	{name: "day-of-month", min: 1, max: 31, maxStep: 31, wrap: true},
	{name: "month", min: 1, max: 12, maxStep: 12, names: monthNames, nameBase: 1, wrap: true},
	{name: "day-of-week", min: 0, max: 7, maxStep: 7, names: dayNames, nameBase: 0, wrap: true},
}

// descriptors maps each descriptor to its canonical name and the standard
// expression it stands for.
var descriptors = map[string]struct{ canonical, expr string }{
	"@yearly":   {"@yearly", "0 0 1 1 *"},
	"@annually": {"@yearly", "0 0 1 1 *"},
	"@monthly":  {"@monthly", "0 0 1 * *"},
	"@weekly":   {"@weekly", "0 0 * * 0"},
	"@daily":    {"@daily", "0 0 * * *"},
	"@midnight": {"@daily", "0 0 * * *"},
	"@hourly":   {"@hourly", "0 * * * *"},
}

// ParseStandard parses a standard (Vixie) cron expression of 5 fields,
//
//	minute hour day-of-month month day-of-week
//
// or a descriptor: @yearly (@annually), @monthly, @weekly, @daily
// (@midnight), @hourly, or @every <duration>. Fire times fall on second 0.
// Day-of-week 0 and 7 are Sunday. When both day fields are restricted (
// neither starts with '*'), a day matches if either field matches, as in
// Vixie cron; otherwise both must match. '?' is accepted as '*' in the day
// fields. L, W and # are Quartz-only.
func ParseStandard(expr string) (*Expression, error) {
	trimmed := trimBlank(expr)
	if strings.HasPrefix(trimmed, "@") {
		return parseDescriptor(expr, trimmed)
	}
	fields := splitFields(trimmed)
	if len(fields) != 5 {
		return nil, &ParseError{Expr: expr, Value: expr, Reason: fieldCountReason(len(fields), "5")}
	}
	e := &Expression{dialect: dialectStandard, seconds: 1, years: allYears()}
	canon := make([]string, 5)
	star := [5]bool{}
	for i, raw := range fields {
		text := upperASCII(raw)
		c, isStar, ferr := e.parseStandardField(i, text)
		if ferr != nil {
			ferr.value = raw
			return nil, ferr.toParseError(expr)
		}
		canon[i] = c
		star[i] = isStar
	}
	if star[2] || star[4] {
		e.rule = dayBoth
	} else {
		e.rule = dayEither
	}
	e.text = strings.Join(canon, " ")
	e.fields = [7]string{"0", canon[0], canon[1], canon[2], canon[3], canon[4], "*"}
	e.finish()
	return e, nil
}

// parseStandardField parses field i of a standard expression. It returns
// the canonical text and whether the field starts with '*' (Vixie's rule
// for combining the day fields).
func (e *Expression) parseStandardField(i int, text string) (string, bool, *fieldError) {
	spec := &standardSpecs[i]
	fail := func(reason string) (string, bool, *fieldError) {
		return "", false, &fieldError{field: spec.name, reason: reason}
	}
	if (i == 2 || i == 4) && text == "?" {
		text = "*"
	}
	items := strings.Split(text, ",")
	set := valueSet{base: 0}
	canon := make([]string, 0, len(items))
	for _, item := range items {
		if item == "" {
			return fail("empty list item")
		}
		if strings.ContainsAny(item, "?#") {
			return fail("'?' and '#' are not supported in a standard expression")
		}
		for _, run := range letterRuns(item) {
			if !isName(spec, run) && strings.ContainsAny(run, "LW") {
				return fail("L and W are not supported in a standard expression; use a Quartz expression")
			}
		}
		p, reason := parsePlainItem(spec, item)
		if reason != "" {
			return fail(reason)
		}
		if i == 4 {
			expandWeekdays(p, &set)
		} else {
			p.expand(spec, &set)
		}
		canon = append(canon, p.canonical())
	}
	switch i {
	case 0:
		e.minutes = set.low()
	case 1:
		e.hours = set.low()
	case 2:
		e.daysOfMonth = set.low()
	case 3:
		e.months = set.low()
	case 4:
		e.daysOfWeek = set.low()
	}
	return strings.Join(canon, ","), strings.HasPrefix(text, "*"), nil
}

// expandWeekdays adds a standard day-of-week item (0..7, 0 and 7 Sunday)
// to set in Quartz numbering (1 = Sunday … 7 = Saturday).
func expandWeekdays(p plainItem, set *valueSet) {
	step := max(p.step, 1)
	lo, hi := p.lo, p.hi
	if lo == 7 && p.hasRange && hi < 7 {
		lo = 0 // 7-1 reads as SUN-MON
	}
	if hi < lo {
		hi += 7
	}
	for v := lo; v <= hi; v += step {
		set.add(v%7 + 1)
		if step > hi-v {
			break
		}
	}
}

func parseDescriptor(expr, trimmed string) (*Expression, error) {
	fields := splitFields(trimmed)
	name := strings.ToLower(fields[0])
	if name == "@every" {
		if len(fields) != 2 {
			return nil, &ParseError{Expr: expr, Value: expr, Reason: "@every takes one duration, as in @every 1h30m"}
		}
		d, err := time.ParseDuration(fields[1])
		if err != nil {
			return nil, &ParseError{Expr: expr, Value: expr, Reason: "invalid duration " + quote(fields[1])}
		}
		if d < time.Second || d%time.Second != 0 {
			return nil, &ParseError{Expr: expr, Value: expr, Reason: "@every needs a whole number of seconds, at least 1s"}
		}
		return &Expression{dialect: dialectEvery, every: d, text: "@every " + d.String()}, nil
	}
	desc, ok := descriptors[name]
	if !ok {
		return nil, &ParseError{Expr: expr, Value: expr, Reason: "unknown descriptor " + quote(fields[0])}
	}
	if len(fields) != 1 {
		return nil, &ParseError{Expr: expr, Value: expr, Reason: "unexpected text after " + desc.canonical}
	}
	e, err := ParseStandard(desc.expr)
	if err != nil {
		panic("cron: bad built-in descriptor: " + err.Error())
	}
	e.dialect = dialectDescriptor
	e.text = desc.canonical
	return e, nil
}
