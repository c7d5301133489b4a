package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// randomQuartz builds a random valid Quartz expression.
func randomQuartz(r *rand.Rand) string {
	item := func(lo, hi int) string {
		a, b := lo+r.IntN(hi-lo+1), lo+r.IntN(hi-lo+1)
		step := 1 + r.IntN(max(1, (hi-lo)/3))
		switch r.IntN(6) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", step)
		case 2:
			return fmt.Sprint(a)
		case 3:
			return fmt.Sprintf("%d-%d", a, b)
		case 4:
			return fmt.Sprintf("%d-%d/%d", a, b, step)
		default:
			return fmt.Sprintf("%d/%d", a, step)
		}
	}
	list := func(lo, hi int) string {
		n := 1 + r.IntN(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = item(lo, hi)
		}
		return strings.Join(parts, ",")
	}
	dom, dow := "?", "?"
	if r.IntN(2) == 0 {
		switch r.IntN(5) {
		case 0:
			dom = []string{"L", "LW", "L-2", "L-5W"}[r.IntN(4)]
		case 1:
			dom = fmt.Sprintf("%dW", 1+r.IntN(31))
		default:
			dom = list(1, 31)
		}
	} else {
		switch r.IntN(5) {
		case 0:
			dow = fmt.Sprintf("%dL", 1+r.IntN(7))
		case 1:
			dow = fmt.Sprintf("%d#%d", 1+r.IntN(7), 1+r.IntN(5))
		default:
			dow = list(1, 7)
		}
	}
	fields := []string{list(0, 59), list(0, 59), list(0, 23), dom, list(1, 12), dow}
	if r.IntN(4) == 0 {
		y := 2020 + r.IntN(40)
		fields = append(fields, fmt.Sprintf("%d-%d", y, y+r.IntN(20)))
	}
	return strings.Join(fields, " ")
}

// dayAllowed is an independent statement of the day rules, used to check
// the fire times Next returns.
func dayAllowed(e *Expression, y, m, d int) bool {
	last := monthLength(y, m)
	wd := int(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Weekday()) + 1
	nearest := func(target int) int {
		switch time.Date(y, time.Month(m), target, 0, 0, 0, 0, time.UTC).Weekday() {
		case time.Saturday:
			if target == 1 {
				return 3
			}
			return target - 1
		case time.Sunday:
			if target == last {
				return target - 2
			}
			return target + 1
		}
		return target
	}
	byMonth := e.daysOfMonth>>uint(d)&1 == 1
	byWeek := e.daysOfWeek>>uint(wd)&1 == 1
	switch e.rule {
	case dayByMonth:
		switch e.monthDay {
		case monthDayLast:
			return d == last-e.lastOffset
		case monthDayLastWeekday:
			return last-e.lastOffset >= 1 && d == nearest(last-e.lastOffset)
		case monthDayNearest:
			return e.nearestDay <= last && d == nearest(e.nearestDay)
		}
		return byMonth
	case dayByWeek:
		switch e.weekDay {
		case weekDayLast:
			return byWeek && d+7 > last
		case weekDayNth:
			return byWeek && (d-1)/7+1 == e.nth
		}
		return byWeek
	case dayBoth:
		return byMonth && byWeek
	default:
		return byMonth || byWeek
	}
}

// TestNextProperties checks, for random expressions in several zones, that
// fire times increase strictly, are whole seconds in the zone of the
// argument, match the expression, and have a wall clock that satisfies
// every field.
func TestNextProperties(t *testing.T) {
	t.Parallel()
	zones := []*time.Location{time.UTC}
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham", "Asia/Kolkata"} {
		zones = append(zones, mustLoad(t, name))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		expr := randomQuartz(r)
		e, err := ParseQuartz(expr)
		if err != nil {
			t.Fatalf("random expression %q rejected: %v", expr, err)
		}
		loc := zones[i%len(zones)]
		start := time.Unix(1500000000+r.Int64N(1500000000), int64(r.IntN(1e9))).In(loc)
		prev := start
		for _, got := range e.NextN(start, 25) {
			if !got.After(prev) {
				t.Fatalf("%q in %v: %s does not follow %s", expr, loc, got, prev)
			}
			if got.Nanosecond() != 0 {
				t.Fatalf("%q: %s is not a whole second", expr, got)
			}
			if got.Location() != loc {
				t.Fatalf("%q: %s is in %v, want %v", expr, got, got.Location(), loc)
			}
			if !e.Matches(got) {
				t.Fatalf("%q in %v: fire time %s does not match", expr, loc, got)
			}
			y, mo, d := got.Date()
			h, mi, s := got.Clock()
			ok := e.seconds>>uint(s)&1 == 1 && e.minutes>>uint(mi)&1 == 1 && e.hours>>uint(h)&1 == 1 &&
				e.months>>uint(mo)&1 == 1 && e.hasYearValue(y) && dayAllowed(e, y, int(mo), d)
			if !ok {
				t.Fatalf("%q in %v: wall clock of %s does not satisfy the fields", expr, loc, got)
			}
			prev = got
		}
	}
}

// TestNextFindsFirstMatch compares Next with a second-by-second scan in
// UTC, where no DST rule can hide a wall time.
func TestNextFindsFirstMatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for range 3000 {
		expr := randomQuartz(r)
		e, err := ParseQuartz(expr)
		if err != nil {
			t.Fatalf("random expression %q rejected: %v", expr, err)
		}
		start := time.Unix(1600000000+r.Int64N(400000000), 0).UTC()
		got := e.Next(start)
		if got.IsZero() || got.Sub(start) > 3*time.Hour {
			continue // too far for a scan
		}
		checked++
		for at := start.Add(time.Second); at.Before(got); at = at.Add(time.Second) {
			y, mo, d := at.Date()
			h, mi, s := at.Clock()
			if e.seconds>>uint(s)&1 == 1 && e.minutes>>uint(mi)&1 == 1 && e.hours>>uint(h)&1 == 1 &&
				e.months>>uint(mo)&1 == 1 && e.hasYearValue(y) && dayAllowed(e, y, int(mo), d) {
				t.Fatalf("%q after %s: Next = %s but %s matches earlier", expr, start, got, at)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d expressions were close enough to scan", checked)
	}
}
