package calendar

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/schedule/cron"
)

// maxCronSteps bounds the candidate seconds NextIncluded examines for one
// cron calendar, a safety net behind Horizon.
const maxCronSteps = 20_000_000

// Cron excludes the instants a Quartz cron expression matches, like Quartz's
// CronCalendar: every instant whose whole second, read in the calendar's
// time zone, is a fire time of the expression. "* * 0-5 ? * *" excludes the
// first six hours of every day.
type Cron struct {
	common
	text string
	expr *cron.Expression
	// When the expression has the usual six or seven fields, its second,
	// minute and hour sets let NextIncluded skip runs of matched seconds
	// instead of testing each of them.
	structured       bool
	seconds, minutes bitset
	hours            bitset
}

// NewCron returns a calendar that excludes, in loc, the seconds matched by
// the Quartz cron expression expr.
func NewCron(loc *time.Location, expr string) (*Cron, error) {
	c, err := newCommon(loc)
	if err != nil {
		return nil, err
	}
	x, err := cron.ParseQuartz(expr)
	if err != nil {
		return nil, &FieldError{Field: "expr", Err: err}
	}
	cal := &Cron{common: c, text: expr, expr: x}
	cal.structured = cal.learnFields()
	return cal, nil
}

// bitset is a set of small non-negative integers.
type bitset uint64

// full reports whether the set holds every value below n.
func (b bitset) full(n int) bool { return b == bitset(1)<<n-1 }

// nextMissing returns the smallest value in [from, n) missing from the set,
// or n when there is none.
func (b bitset) nextMissing(from, n int) int {
	missing := ^uint64(b) >> from << from
	if missing == 0 {
		return n
	}
	return min(bits.TrailingZeros64(missing), n)
}

// learnFields finds the values the second, minute and hour fields of the
// expression allow, by matching one-field expressions against instants in
// UTC. It reports false when the expression is not in the plain field form.
func (c *Cron) learnFields() bool {
	fields := strings.Fields(c.text)
	if len(fields) != 6 && len(fields) != 7 {
		return false
	}
	learn := func(expr string, n int, unit time.Duration) (bitset, bool) {
		x, err := cron.ParseQuartz(expr)
		if err != nil {
			return 0, false
		}
		var set bitset
		for i := range n {
			if x.Matches(time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * unit)) {
				set |= 1 << i
			}
		}
		return set, true
	}
	var ok1, ok2, ok3 bool
	c.seconds, ok1 = learn(fields[0]+" * * ? * *", 60, time.Second)
	c.minutes, ok2 = learn("0 "+fields[1]+" * ? * *", 60, time.Minute)
	c.hours, ok3 = learn("0 0 "+fields[2]+" ? * *", 24, time.Hour)
	return ok1 && ok2 && ok3
}

// WithBase returns a copy of the calendar chained to base (nil for none).
func (c *Cron) WithBase(base Calendar) *Cron {
	cp := *c
	cp.base = base
	return &cp
}

// WithDescription returns a copy of the calendar with description desc.
func (c *Cron) WithDescription(desc string) *Cron {
	cp := *c
	cp.desc = desc
	return &cp
}

// Expression returns the cron expression as given.
func (c *Cron) Expression() string { return c.text }

// String returns the cron expression and time zone.
func (c *Cron) String() string { return fmt.Sprintf("cron %q in %s", c.text, c.loc) }

// Includes reports whether t is allowed by the calendar and its base.
func (c *Cron) Includes(t time.Time) bool { return chainIncludes(c, t) }

// NextIncluded returns the earliest instant at or after t allowed by the
// calendar and its base, or the zero time when there is none before Horizon.
func (c *Cron) NextIncluded(t time.Time) time.Time { return chainNext(c, t) }

func (c *Cron) ownIncludes(t time.Time) bool { return !c.expr.Matches(t.In(c.loc)) }

func (c *Cron) ownNext(t time.Time) time.Time {
	t = t.In(c.loc)
	if !c.expr.Matches(t) {
		return t
	}
	u := t.Truncate(time.Second)
	for range maxCronSteps {
		u = c.skipMatched(u)
		if !u.Before(Horizon) {
			return time.Time{}
		}
		if !c.expr.Matches(u) {
			return u
		}
	}
	return time.Time{}
}

// skipMatched returns a whole second after u, a second the expression
// matches, such that the expression matches every second in between.
//
// Away from zone transitions an instant matches exactly when its wall
// clock's date, hour, minute and second are allowed, so a run of matched
// seconds can be crossed with wall clock arithmetic. Within the size of a
// transition's jump around it (a gap, or a wall time that occurs twice) the
// expression's answer depends on how it resolves the ambiguity, so there the
// search steps one second at a time.
func (c *Cron) skipMatched(u time.Time) time.Time {
	next := u.Add(time.Second)
	if !c.structured {
		return next
	}
	h, m, s := u.In(c.loc).Clock()
	var target time.Time
	switch {
	case !c.seconds.full(60):
		k := c.seconds.nextMissing(s+1, 60)
		target = u.Add(time.Duration(k-s) * time.Second)
	case !c.minutes.full(60):
		k := c.minutes.nextMissing(m+1, 60)
		target = u.Add(time.Duration(k-m)*time.Minute - time.Duration(s)*time.Second)
	case !c.hours.full(24):
		k := c.hours.nextMissing(h+1, 24)
		target = u.Add(time.Duration(k-h)*time.Hour - time.Duration(m)*time.Minute - time.Duration(s)*time.Second)
	default:
		target = u.Add(day - time.Duration(h)*time.Hour - time.Duration(m)*time.Minute - time.Duration(s)*time.Second)
	}
	const reach = 3 * time.Hour // more than any transition's jump
	from, to := u.Add(-reach), target.Add(reach)
	for _, tr := range transitionsBetween(c.loc, from, to) {
		size := (tr.after - tr.before).Abs()
		lo, hi := tr.at.Add(-size), tr.at.Add(size)
		if !u.Before(hi) {
			continue
		}
		if !u.Before(lo) {
			return next
		}
		if target.After(lo) {
			target = lo
		}
		break
	}
	if !target.After(u) {
		return next
	}
	return target
}
