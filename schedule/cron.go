package schedule

import (
	"time"

	"github.com/chime-scheduler/chime/schedule/cron"
)

// Cron fires at the instants a cron expression matches, evaluated in a time
// zone (Quartz's CronTrigger). Build it with NewCron.
type Cron struct {
	expr *cron.Expression
	text string
	loc  *time.Location
}

// NewCron parses expr (Quartz syntax, standard five-field cron or a
// descriptor such as "@daily"; see package cron) and binds it to the IANA
// time zone tz ("" means UTC). An unknown zone is an error naming it.
func NewCron(expr string, tz string) (*Cron, error) {
	loc, err := loadLocation("time_zone", tz)
	if err != nil {
		return nil, err
	}
	return NewCronInLocation(expr, loc)
}

// NewCronInLocation is NewCron with a loaded location (nil means UTC).
func NewCronInLocation(expr string, loc *time.Location) (*Cron, error) {
	parsed, err := cron.Parse(expr)
	if err != nil {
		return nil, &ValidationError{Field: "expression", Reason: "cannot parse " + quote(expr), Err: err}
	}
	return &Cron{expr: parsed, text: expr, loc: locOrUTC(loc)}, nil
}

func quote(s string) string { return "\"" + s + "\"" }

// Expression returns the cron expression as given to NewCron.
func (c *Cron) Expression() string { return c.text }

// Location returns the time zone the expression is evaluated in.
func (c *Cron) Location() *time.Location { return locOrUTC(c.loc) }

// Kind returns KindCron.
func (c *Cron) Kind() Kind { return KindCron }

// Validate reports an error for a Cron not built by NewCron.
func (c *Cron) Validate() error {
	if c == nil || c.expr == nil {
		return invalid("expression", "missing (build cron schedules with NewCron)")
	}
	return nil
}

func (c *Cron) location() *time.Location { return c.Location() }

func (c *Cron) allowsInstruction(m MisfireInstruction) bool {
	return m.universal() || m == MisfireFireOnceNow || m == MisfireDoNothing
}

// start is the trigger's start time without its milliseconds: Quartz drops
// them when a cron trigger's start time is set.
func cronStart(t *Trigger) time.Time { return t.StartTime.Truncate(time.Second) }

func (c *Cron) firstFireTime(t *Trigger) time.Time {
	return c.fireTimeAfter(t, cronStart(t).Add(-time.Second))
}

func (c *Cron) fireTimeAfter(t *Trigger, after time.Time) time.Time {
	if c.expr == nil {
		return time.Time{}
	}
	if start := cronStart(t); start.After(after) {
		after = start.Add(-time.Second)
	}
	if !t.EndTime.IsZero() && !after.Before(t.EndTime) {
		return time.Time{}
	}
	next := c.expr.Next(after.In(c.Location()))
	if !t.EndTime.IsZero() && next.After(t.EndTime) {
		return time.Time{}
	}
	return next
}
