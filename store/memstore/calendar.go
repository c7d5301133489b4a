package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/store"
)

// CalendarUpsert stores a calendar; without Replace an existing name fails
// with [store.ErrCalendarExists].
func (s *Store) CalendarUpsert(ctx context.Context, p *store.CalendarUpsertParams) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	c := copyCalendar(&p.Calendar)
	old, ok := s.calendars[c.Name]
	if ok && !p.Replace {
		return fmt.Errorf("%w: %q", store.ErrCalendarExists, c.Name)
	}
	c.Version = 1
	if ok {
		c.Version = old.Version + 1
	}
	s.calendars[c.Name] = &c
	return nil
}

// CalendarGet returns a calendar or [store.ErrCalendarNotFound].
func (s *Store) CalendarGet(ctx context.Context, name string) (*store.CalendarRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	c, ok := s.calendars[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", store.ErrCalendarNotFound, name)
	}
	d := copyCalendar(c)
	return &d, nil
}

// CalendarDelete deletes a calendar and reports whether it existed. It fails
// with [store.ErrCalendarInUse] while a trigger references the calendar.
func (s *Store) CalendarDelete(ctx context.Context, name string) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if _, ok := s.calendars[name]; !ok {
		return false, nil
	}
	if n := s.calendarRefs[name]; n > 0 {
		return false, fmt.Errorf("%w: %q by %d triggers", store.ErrCalendarInUse, name, n)
	}
	delete(s.calendars, name)
	return true, nil
}

// CalendarList returns every calendar ordered by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.CalendarRecord, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]store.CalendarRecord, 0, len(s.calendars))
	for _, c := range s.calendars {
		out = append(out, copyCalendar(c))
	}
	slices.SortFunc(out, func(a, b store.CalendarRecord) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
