package cron

import (
	"strconv"
	"strings"
)

// ParseQuartz parses a Quartz cron expression: 6 or 7 fields separated by
// spaces or tabs,
//
//	second minute hour day-of-month month day-of-week [year]
//
// Exactly one of day-of-month and day-of-week must be '?'. See the package
// documentation for the full syntax. ParseQuartz is stricter than Quartz:
// anything Quartz would silently ignore is an error naming the field.
func ParseQuartz(expr string) (*Expression, error) {
	fields := splitFields(trimBlank(expr))
	if len(fields) < 6 || len(fields) > 7 {
		return nil, &ParseError{Expr: expr, Value: expr, Reason: fieldCountReason(len(fields), "6 or 7")}
	}
	e := &Expression{dialect: dialectQuartz}
	var domText, dowText string
	for i, raw := range fields {
		text := upperASCII(raw)
		if err := e.parseQuartzField(i, text); err != nil {
			if err.value == "" {
				err.value = raw
			}
			return nil, err.toParseError(expr)
		}
		switch i {
		case fieldDayOfMonth:
			domText = text
		case fieldDayOfWeek:
			dowText = text
		}
	}
	if len(fields) == 6 {
		e.fields[fieldYear] = "*"
		e.years = allYears()
	}
	switch {
	case domText == "?" && dowText == "?":
		return nil, &ParseError{Expr: expr, Field: fieldNames[fieldDayOfWeek], Value: fields[fieldDayOfWeek],
			Reason: "day-of-month and day-of-week cannot both be '?'"}
	case domText != "?" && dowText != "?":
		return nil, &ParseError{Expr: expr, Field: fieldNames[fieldDayOfWeek], Value: fields[fieldDayOfWeek],
			Reason: "one of day-of-month and day-of-week must be '?'"}
	case domText == "?":
		e.rule = dayByWeek
	default:
		e.rule = dayByMonth
	}
	e.hasYear = e.fields[fieldYear] != "*"
	e.finish()
	return e, nil
}

func fieldCountReason(n int, want string) string {
	return "expected " + want + " fields, got " + strconv.Itoa(n)
}

func allYears() [4]uint64 {
	set := valueSet{base: MinYear}
	for y := MinYear; y <= MaxYear; y++ {
		set.add(y)
	}
	return set.words
}

// finish computes the canonical text and the derived facts of a parsed
// expression.
func (e *Expression) finish() {
	switch e.dialect {
	case dialectQuartz:
		parts := e.fields[:6]
		if e.hasYear {
			parts = e.fields[:]
		}
		e.text = strings.Join(parts, " ")
	}
	e.never = e.provablyNever()
}

// parseQuartzField parses field i (upper-cased text) into e.
func (e *Expression) parseQuartzField(i int, text string) *fieldError {
	spec := &quartzSpecs[i]
	fail := func(reason string) *fieldError {
		return &fieldError{field: spec.name, reason: reason}
	}
	items := strings.Split(text, ",")
	if i == fieldDayOfMonth || i == fieldDayOfWeek {
		special, err := e.parseDaySpecial(i, text, len(items) > 1)
		if err != nil {
			return err
		}
		if special {
			return nil
		}
	}
	set := valueSet{}
	if i == fieldYear {
		set.base = MinYear
	}
	canon := make([]string, 0, len(items))
	for _, item := range items {
		if item == "" {
			return fail("empty list item")
		}
		if reason := checkPlainChars(i, item); reason != "" {
			return fail(reason)
		}
		p, reason := parsePlainItem(spec, item)
		if reason != "" {
			return fail(reason)
		}
		p.expand(spec, &set)
		canon = append(canon, p.canonical())
	}
	e.fields[i] = strings.Join(canon, ",")
	switch i {
	case fieldSecond:
		e.seconds = set.low()
	case fieldMinute:
		e.minutes = set.low()
	case fieldHour:
		e.hours = set.low()
	case fieldDayOfMonth:
		e.daysOfMonth = set.low()
		e.monthDay = monthDaySet
	case fieldMonth:
		e.months = set.low()
	case fieldDayOfWeek:
		e.daysOfWeek = set.low()
		e.weekDay = weekDaySet
	case fieldYear:
		e.years = set.words
	}
	return nil
}

// checkPlainChars explains the special characters that are not allowed in
// a plain list item of field i. Names of months and days are skipped, so
// the L of JUL is not mistaken for the L option.
func checkPlainChars(i int, item string) string {
	spec := &quartzSpecs[i]
	dayField := i == fieldDayOfMonth || i == fieldDayOfWeek
	switch {
	case strings.Contains(item, "?"):
		if dayField {
			return "'?' must be the whole field"
		}
		return "'?' is only allowed in day-of-month and day-of-week"
	case strings.Contains(item, "#"):
		if i == fieldDayOfWeek {
			return "'#' must be the whole field, as in 6#3"
		}
		return "'#' is only allowed in day-of-week"
	}
	for _, run := range letterRuns(item) {
		if isName(spec, run) {
			continue
		}
		switch {
		case strings.Contains(run, "L"):
			if dayField {
				return "'L' must be the whole field"
			}
			return "'L' is only allowed in day-of-month and day-of-week"
		case strings.Contains(run, "W"):
			if i != fieldDayOfMonth {
				return "'W' is only allowed in day-of-month"
			}
			if item == "W" {
				return "'W' needs a day, as in 15W or LW"
			}
			return "'W' must be the whole field, with a single day, as in 15W"
		}
	}
	return ""
}

// letterRuns returns the maximal runs of letters A-Z in s.
func letterRuns(s string) []string {
	var runs []string
	start := -1
	for j := 0; j <= len(s); j++ {
		letter := j < len(s) && s[j] >= 'A' && s[j] <= 'Z'
		switch {
		case letter && start < 0:
			start = j
		case !letter && start >= 0:
			runs = append(runs, s[start:j])
			start = -1
		}
	}
	return runs
}

func isName(spec *fieldSpec, s string) bool {
	for _, n := range spec.names {
		if n == s {
			return true
		}
	}
	return false
}

// parseDaySpecial handles the whole-field forms of the day fields: '?',
// L, L-n, LW, L-nW, nW in day-of-month and L, nL, n#k in day-of-week. It
// reports whether text was one of them.
func (e *Expression) parseDaySpecial(i int, text string, isList bool) (bool, *fieldError) {
	spec := &quartzSpecs[i]
	fail := func(reason string) (bool, *fieldError) {
		return false, &fieldError{field: spec.name, reason: reason}
	}
	if text == "?" {
		e.fields[i] = "?"
		return true, nil
	}
	if isList {
		return false, nil
	}
	if i == fieldDayOfMonth {
		switch {
		case strings.HasPrefix(text, "L"):
			rest := text[1:]
			weekday := strings.HasSuffix(rest, "W")
			if weekday {
				rest = rest[:len(rest)-1]
			}
			offset := 0
			if rest != "" {
				digits, ok := strings.CutPrefix(rest, "-")
				if !ok {
					return fail("expected L, L-n, LW or L-nW")
				}
				n, isNum, big := parseNumber(digits)
				if !isNum {
					return fail("expected a number of days after 'L-'")
				}
				if big || n > 30 {
					return fail("offset from the last day must be between 0 and 30")
				}
				offset = n
			}
			e.lastOffset = offset
			e.monthDay = monthDayLast
			canon := "L"
			if rest != "" {
				canon += "-" + strconv.Itoa(offset)
			}
			if weekday {
				e.monthDay = monthDayLastWeekday
				canon += "W"
			}
			e.fields[i] = canon
			return true, nil
		case strings.HasSuffix(text, "W") && len(text) > 1:
			digits := text[:len(text)-1]
			n, isNum, big := parseNumber(digits)
			if !isNum {
				return false, nil // let the plain parser explain
			}
			if big || n < 1 || n > 31 {
				return fail("value out of range 1-31")
			}
			e.monthDay = monthDayNearest
			e.nearestDay = n
			e.fields[i] = strconv.Itoa(n) + "W"
			return true, nil
		}
		return false, nil
	}
	// Day of week.
	switch {
	case text == "L":
		// Quartz reads a lone L in day-of-week as Saturday, the last day
		// of the week.
		e.weekDay = weekDaySet
		e.daysOfWeek = 1 << 7
		e.fields[i] = "L"
		return true, nil
	case strings.Contains(text, "#"):
		dayText, nthText, _ := strings.Cut(text, "#")
		d, named, reason := parseValue(spec, dayText)
		if reason != "" {
			return fail(reason)
		}
		n, isNum, big := parseNumber(nthText)
		if !isNum || big || n < 1 || n > 5 {
			return fail("'#' must be followed by a number between 1 and 5")
		}
		e.weekDay = weekDayNth
		e.weekDayNum = d
		e.nth = n
		e.daysOfWeek = 1 << uint(d)
		e.fields[i] = canonicalValue(named, d, dayText) + "#" + strconv.Itoa(n)
		return true, nil
	case len(text) > 1 && strings.HasSuffix(text, "L"):
		dayText := text[:len(text)-1]
		d, named, reason := parseValue(spec, dayText)
		if reason != "" {
			if strings.ContainsAny(dayText, "*-/,") {
				return fail("'L' needs a single day, as in 6L or FRIL")
			}
			return fail(reason)
		}
		e.weekDay = weekDayLast
		e.weekDayNum = d
		e.daysOfWeek = 1 << uint(d)
		e.fields[i] = canonicalValue(named, d, dayText) + "L"
		return true, nil
	}
	return false, nil
}
