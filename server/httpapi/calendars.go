package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) listCalendars(w http.ResponseWriter, r *http.Request, _ *call) error {
	cals, err := h.svc.ListCalendars(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(cals))
	return nil
}

func (h *handler) getCalendar(w http.ResponseWriter, r *http.Request, _ *call) error {
	cal, err := h.svc.GetCalendar(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, cal)
	return nil
}

// putCalendar answers with the calendar as stored, in the current form,
// with warnings for deprecated spellings the body used. UsedBy is
// read-only and left out; GET reports it.
func (h *handler) putCalendar(w http.ResponseWriter, r *http.Request, c *call) error {
	var cal api.Calendar
	if err := h.decode(w, r, &cal); err != nil {
		return err
	}
	var err error
	if cal.Name, err = fromPath(r, "name", cal.Name); err != nil {
		return err
	}
	cal.UsedBy, cal.Warnings = nil, nil
	stored, created, err := h.svc.PutCalendar(r.Context(), c.actor(), cal)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	addWarnings(w.Header(), stored.Warnings)
	httpjson.Write(w, status, stored)
	return nil
}

func (h *handler) deleteCalendar(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.DeleteCalendar(r.Context(), c.actor(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
