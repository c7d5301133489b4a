package alert

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DeadManWatch asks for a KindDeadMan alert when a job has gone Window
// without a successful execution.
type DeadManWatch struct {
	// JobGroup and JobName identify the job.
	JobGroup string
	JobName  string
	// Window is the longest the job may go without success. Required.
	Window time.Duration
	// Since is when watching began: a job that never succeeded is overdue
	// at Since + Window. Defaults to the first Check that sees the watch.
	Since time.Time
	// Recipients are the job's own recipients for the alert.
	Recipients Recipients
}

// Validate reports what makes w unusable, naming the field.
func (w DeadManWatch) Validate() error {
	var errs []error
	if w.JobName == "" {
		errs = append(errs, errors.New("JobName: required"))
	}
	if w.Window <= 0 {
		errs = append(errs, fmt.Errorf("Window: %v is not positive", w.Window)) //nolint:staticcheck // ST1005: the message starts with the field it names
	}
	if err := w.Recipients.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("Recipients: %w", err))
	}
	return errors.Join(errs...)
}

// SuccessHistory tells a DeadManChecker when jobs last succeeded; the
// server's execution history implements it.
type SuccessHistory interface {
	// LastSuccess returns when the job's latest successful execution
	// finished, or the zero time if it never succeeded.
	LastSuccess(ctx context.Context, group, name string) (time.Time, error)
}

// DeadManChecker finds jobs that have not succeeded within their window.
// It keeps, per job, which window it last alerted for, so each silent
// window raises one alert: a job that stays silent alerts again once per
// further Window, and a success starts the count over. It owns no
// goroutine and reads no clock; its caller calls Check periodically with
// the current time and sends what it returns to Notifier.Notify. In a
// cluster of servers, only one should run it, or each will alert. It is
// safe for concurrent use.
type DeadManChecker struct {
	history SuccessHistory

	mu    sync.Mutex
	state map[JobKey]deadManState
}

type deadManState struct {
	firstSeen time.Time // the first Check that saw the watch
	base      time.Time // what the last alert counted from: a success, or Since
	windows   int64     // how many whole windows after base it alerted for
}

// NewDeadManChecker returns a checker reading history.
func NewDeadManChecker(history SuccessHistory) *DeadManChecker {
	return &DeadManChecker{history: history, state: make(map[JobKey]deadManState)}
}

// Check returns a KindDeadMan event for each watch whose job is overdue at
// now and was not yet alerted for in its current window. A watch that
// fails Validate, or whose history cannot be read, is skipped and reported
// in the error, which joins all such problems; the events for the other
// watches are returned with it. Jobs no longer watched are forgotten.
func (c *DeadManChecker) Check(ctx context.Context, now time.Time, watches []DeadManWatch) ([]Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()

	var (
		events  []Event
		errs    []error
		watched = make(map[JobKey]bool, len(watches))
	)
	for _, w := range watches {
		key := JobKey{Group: w.JobGroup, Name: w.JobName}
		watched[key] = true
		if err := w.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("alert: dead-man watch %s: %w", key, err))
			continue
		}
		st, seen := c.state[key]
		if !seen {
			st.firstSeen = now
		}
		last, err := c.history.LastSuccess(ctx, w.JobGroup, w.JobName)
		if err != nil {
			c.state[key] = st
			errs = append(errs, fmt.Errorf("alert: dead-man watch %s: last success: %w", key, err))
			continue
		}
		base, detail := last, fmt.Sprintf("No success within %v; the last one finished at %s.",
			w.Window, last.Format(time.RFC3339))
		if last.IsZero() {
			base = w.Since
			if base.IsZero() {
				base = st.firstSeen
			}
			detail = fmt.Sprintf("No success within %v; it has not succeeded since watching began at %s.",
				w.Window, base.Format(time.RFC3339))
		}
		windows := int64(now.Sub(base) / w.Window)
		if windows >= 1 && (!st.base.Equal(base) || st.windows < windows) {
			st.base, st.windows = base, windows
			events = append(events, Event{
				Kind:       KindDeadMan,
				JobGroup:   w.JobGroup,
				JobName:    w.JobName,
				At:         now,
				Detail:     detail,
				Recipients: w.Recipients,
			})
		}
		c.state[key] = st
	}
	for key := range c.state {
		if !watched[key] {
			delete(c.state, key)
		}
	}
	return events, errors.Join(errs...)
}
