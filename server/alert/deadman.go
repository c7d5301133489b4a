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

// DeadManRecord is what a DeadManChecker remembers of one watched job.
type DeadManRecord struct {
	// FirstSeen is when a Check first saw the watch.
	FirstSeen time.Time
	// Base is what the last alert counted from: the job's last success,
	// or the start of watching; zero before the first alert.
	Base time.Time
	// Windows is how many whole windows after Base the last alert was
	// for.
	Windows int64
	// AlertedAt is when the last alert was claimed; zero before the first.
	AlertedAt time.Time
}

// DeadManState keeps the DeadManRecords of a DeadManChecker. Kept in a
// database that the nodes of a cluster share, it lets every node run the
// checker: each alert is claimed by exactly one of them, and a restart
// neither loses nor repeats one. NewMemoryDeadManState keeps them in
// memory, for one process.
type DeadManState interface {
	// DeadManLoad returns the record of key, first storing one with
	// FirstSeen set to now when there is none.
	DeadManLoad(ctx context.Context, key JobKey, now time.Time) (DeadManRecord, error)
	// DeadManClaim replaces the record of key by next when its Base and
	// Windows still equal prev's, and reports whether it did: of the
	// callers that loaded prev, one wins and sends the alert.
	DeadManClaim(ctx context.Context, key JobKey, prev, next DeadManRecord) (bool, error)
	// DeadManForget removes the records of the jobs keep does not hold.
	DeadManForget(ctx context.Context, keep map[JobKey]bool) error
}

// MemoryDeadManState is a DeadManState in memory, for a single process.
// It is safe for concurrent use.
type MemoryDeadManState struct {
	mu      sync.Mutex
	records map[JobKey]DeadManRecord
}

// NewMemoryDeadManState returns an empty MemoryDeadManState.
func NewMemoryDeadManState() *MemoryDeadManState {
	return &MemoryDeadManState{records: make(map[JobKey]DeadManRecord)}
}

// DeadManLoad implements DeadManState.
func (m *MemoryDeadManState) DeadManLoad(_ context.Context, key JobKey, now time.Time) (DeadManRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[key]
	if !ok {
		r = DeadManRecord{FirstSeen: now}
		m.records[key] = r
	}
	return r, nil
}

// DeadManClaim implements DeadManState.
func (m *MemoryDeadManState) DeadManClaim(_ context.Context, key JobKey, prev, next DeadManRecord) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[key]
	if !ok || !r.Base.Equal(prev.Base) || r.Windows != prev.Windows {
		return false, nil
	}
	m.records[key] = next
	return true, nil
}

// DeadManForget implements DeadManState.
func (m *MemoryDeadManState) DeadManForget(_ context.Context, keep map[JobKey]bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.records {
		if !keep[key] {
			delete(m.records, key)
		}
	}
	return nil
}

// DeadManChecker finds jobs that have not succeeded within their window.
// It remembers, per job in its DeadManState, which window it last alerted
// for, so each silent window raises one alert: a job that stays silent
// alerts again once per further Window, and a success starts the count
// over. It owns no goroutine and reads no clock; its caller calls Check
// periodically with the current time and sends what it returns to
// Notifier.Notify. With a DeadManState the nodes of a cluster share, any
// number of them may run it and each alert is returned by one Check only.
// It is safe for concurrent use.
type DeadManChecker struct {
	history SuccessHistory
	state   DeadManState
}

// NewDeadManChecker returns a checker reading history and remembering
// what it alerted for in state; a nil state is a new
// MemoryDeadManState.
func NewDeadManChecker(history SuccessHistory, state DeadManState) *DeadManChecker {
	if state == nil {
		state = NewMemoryDeadManState()
	}
	return &DeadManChecker{history: history, state: state}
}

// Check returns a KindDeadMan event for each watch whose job is overdue at
// now and was not yet alerted for in its current window. A watch that
// fails Validate, or whose history or state cannot be read, is skipped
// and reported in the error, which joins all such problems; the events
// for the other watches are returned with it. Jobs no longer watched are
// forgotten.
func (c *DeadManChecker) Check(ctx context.Context, now time.Time, watches []DeadManWatch) ([]Event, error) {
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
		st, err := c.state.DeadManLoad(ctx, key, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("alert: dead-man watch %s: state: %w", key, err))
			continue
		}
		last, err := c.history.LastSuccess(ctx, w.JobGroup, w.JobName)
		if err != nil {
			errs = append(errs, fmt.Errorf("alert: dead-man watch %s: last success: %w", key, err))
			continue
		}
		base, detail := last, fmt.Sprintf("No success within %v; the last one finished at %s.",
			w.Window, last.Format(time.RFC3339))
		if last.IsZero() {
			base = w.Since
			if base.IsZero() {
				base = st.FirstSeen
			}
			detail = fmt.Sprintf("No success within %v; it has not succeeded since watching began at %s.",
				w.Window, base.Format(time.RFC3339))
		}
		windows := int64(now.Sub(base) / w.Window)
		if windows < 1 || (st.Base.Equal(base) && st.Windows >= windows) {
			continue
		}
		next := st
		next.Base, next.Windows, next.AlertedAt = base, windows, now
		won, err := c.state.DeadManClaim(ctx, key, st, next)
		if err != nil {
			errs = append(errs, fmt.Errorf("alert: dead-man watch %s: claiming the alert: %w", key, err))
			continue
		}
		if !won {
			continue // another checker sends it
		}
		events = append(events, Event{
			Kind:       KindDeadMan,
			JobGroup:   w.JobGroup,
			JobName:    w.JobName,
			At:         now,
			Detail:     detail,
			Recipients: w.Recipients,
		})
	}
	if err := c.state.DeadManForget(ctx, watched); err != nil {
		errs = append(errs, fmt.Errorf("alert: dead-man: forgetting jobs no longer watched: %w", err))
	}
	return events, errors.Join(errs...)
}
