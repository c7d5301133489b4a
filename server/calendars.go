package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// calendarNotFound is the not_found error of a calendar.
func calendarNotFound(name string) *api.Error {
	return httpjson.Errorf(api.CodeNotFound, "", "calendar %q not found", name)
}

// ListCalendars returns every calendar with the triggers that use it.
func (s *Server) ListCalendars(ctx context.Context) ([]api.Calendar, error) {
	names, err := s.sched.CalendarNames(ctx)
	if err != nil {
		return nil, err
	}
	usedBy, err := s.calendarUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Calendar, 0, len(names))
	for _, name := range names {
		c, err := s.calendar(ctx, name, usedBy)
		if errors.Is(err, chime.ErrCalendarNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}

// calendarUsers returns the triggers ("group.name") of each calendar.
func (s *Server) calendarUsers(ctx context.Context) (map[string][]string, error) {
	triggers, err := s.sched.Triggers(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string)
	for _, t := range triggers {
		if t.CalendarName != "" {
			out[t.CalendarName] = append(out[t.CalendarName], t.Key.String())
		}
	}
	return out, nil
}

// calendar returns one calendar for the API.
func (s *Server) calendar(ctx context.Context, name string, usedBy map[string][]string) (*api.Calendar, error) {
	cal, err := s.sched.Calendar(ctx, name)
	if err != nil {
		return nil, err
	}
	raw, err := wire.EncodeCalendar(cal)
	if err != nil {
		return nil, fmt.Errorf("server: calendar %q: %w", name, err)
	}
	return &api.Calendar{Name: name, Calendar: raw, UsedBy: usedBy[name]}, nil
}

// GetCalendar returns one calendar.
func (s *Server) GetCalendar(ctx context.Context, name string) (*api.Calendar, error) {
	usedBy, err := s.calendarUsers(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.calendar(ctx, name, usedBy)
	if errors.Is(err, chime.ErrCalendarNotFound) {
		return nil, calendarNotFound(name)
	}
	return c, err
}

// PutCalendar creates or replaces a calendar, and returns it as stored,
// in the API's current form, with warnings for deprecated spellings it
// used. Replacing one moves the next fire times of the triggers that use
// it.
func (s *Server) PutCalendar(ctx context.Context, actor string, c api.Calendar) (*api.Calendar, bool, error) {
	if err := checkName("name", c.Name); err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(nullAsEmpty(c.Calendar))) == 0 {
		return nil, false, invalidf("calendar", `is required, such as {"type":"weekly","time_zone":"UTC","excluded_days_of_week":[1,7]}`)
	}
	cal, warnings, err := wire.DecodeCalendar(c.Calendar, "calendar")
	if err != nil {
		return nil, false, err
	}
	raw, err := wire.EncodeCalendar(cal)
	if err != nil {
		return nil, false, fmt.Errorf("server: calendar %q: %w", c.Name, err)
	}
	created, err := s.saveCalendar(ctx, actor, c.Name, cal, nil, false)
	if err != nil {
		return nil, false, err
	}
	out := &api.Calendar{Name: c.Name, Calendar: raw, Warnings: s.warn(ctx, actor, "calendars/"+c.Name, warnings)}
	return out, created, nil
}

// saveCalendar creates or replaces the calendar name with cal, moving the
// next fire times of the triggers that use it, and records it in the
// audit log with detail. With dryRun it only reports whether it would
// create the calendar.
func (s *Server) saveCalendar(ctx context.Context, actor, name string, cal calendar.Calendar, detail map[string]any, dryRun bool) (created bool, err error) {
	_, err = s.sched.Calendar(ctx, name)
	created = errors.Is(err, chime.ErrCalendarNotFound)
	if err != nil && !created {
		return false, err
	}
	if dryRun {
		return created, nil
	}
	if err := s.sched.AddCalendar(ctx, name, cal, &chime.AddCalendarOptions{Replace: true, UpdateTriggers: true}); err != nil {
		return false, err
	}
	action := auditCalendarUpdate
	if created {
		action = auditCalendarCreate
	}
	s.audit(ctx, actor, action, "calendars/"+name, detail)
	return created, nil
}

// DeleteCalendar deletes a calendar no trigger uses.
func (s *Server) DeleteCalendar(ctx context.Context, actor, name string) error {
	ok, err := s.sched.DeleteCalendar(ctx, name)
	switch {
	case errors.Is(err, chime.ErrCalendarInUse):
		usedBy, _ := s.calendarUsers(ctx)
		return httpjson.Errorf(api.CodeConflict, "", "calendar %q is used by triggers %v; change them first", name, usedBy[name])
	case err != nil:
		return err
	case !ok:
		return calendarNotFound(name)
	}
	s.audit(ctx, actor, auditCalendarDelete, "calendars/"+name, nil)
	return nil
}
