package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/calendar"
	"github.com/chime-scheduler/chime/server/internal/ics"
)

// Limits of ImportCalendar.
const (
	defaultImportYears = 5
	maxImportYears     = 50
	// importTimeout bounds expanding a file's recurrences.
	importTimeout = 10 * time.Second
)

// ImportCalendar reads the events of an iCalendar file into a holiday
// calendar excluding the dates they cover (see package ics for the
// rules), and creates or replaces the calendar named name with it, as
// PutCalendar does, unless req.DryRun is set. Replacing a calendar moves
// the next fire times of the triggers that use it.
func (s *Server) ImportCalendar(ctx context.Context, actor, name string, req api.CalendarImport) (*api.CalendarImportResult, error) {
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.ICS) == "" {
		return nil, invalidf("ics", "is required: the text of an iCalendar (.ics) file, from BEGIN:VCALENDAR to END:VCALENDAR")
	}
	years := req.Years
	switch {
	case years == 0:
		years = defaultImportYears
	case years < 1 || years > maxImportYears:
		return nil, invalidf("years", "%d: want 1 to %d (0 for %d)", years, maxImportYears, defaultImportYears)
	}
	var loc *time.Location
	if req.TimeZone != "" {
		var err error
		if loc, err = wire.LoadZone(req.TimeZone); err != nil {
			return nil, invalidf("time_zone", "%v", err)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	read, err := ics.Dates(rctx, req.ICS, ics.Options{Location: loc, Now: s.now(), Years: years})
	var fileErr *ics.Error
	switch {
	case errors.As(err, &fileErr):
		return nil, invalidf("ics", "%v", fileErr)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, invalidf("ics", "expanding the file's recurrence rules took longer than %s; check rules no date can satisfy", importTimeout)
	case err != nil:
		return nil, err
	}
	desc := req.Description
	if desc == "" {
		desc = read.Name
	}
	hol, err := calendar.NewHoliday(read.Location, read.Dates...)
	if err != nil {
		return nil, invalidf("ics", "%v", err)
	}
	hol = hol.WithDescription(desc)
	raw, err := wire.EncodeCalendar(hol)
	if err != nil {
		return nil, fmt.Errorf("server: calendar %q: %w", name, err)
	}
	created, err := s.saveCalendar(ctx, actor, name, hol, map[string]any{
		"source": "ics import", "events": read.Events, "dates": len(read.Dates), "time_zone": read.Location.String(),
	}, req.DryRun)
	if err != nil {
		return nil, err
	}
	out := &api.CalendarImportResult{
		Calendar: api.Calendar{Name: name, Calendar: raw},
		Dates:    make([]string, len(read.Dates)),
		Events:   read.Events,
		Created:  created,
		DryRun:   req.DryRun,
	}
	for i, d := range read.Dates {
		out.Dates[i] = d.String()
	}
	return out, nil
}
