package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// The routes a dashboard reads (activity, upcoming firings across jobs)
// and the calendar import.

func (h *handler) activity(w http.ResponseWriter, r *http.Request, c *call) error {
	q := api.ActivityQuery{Since: c.query.time("since"), Until: c.query.time("until"), Bucket: c.query.str("bucket")}
	if err := timeRange(q.Since, q.Until, "until"); err != nil {
		return err
	}
	a, err := h.svc.Activity(r.Context(), q)
	if err != nil {
		return err
	}
	a.Buckets = nonNil(a.Buckets)
	httpjson.Write(w, http.StatusOK, a)
	return nil
}

func (h *handler) upcomingAll(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.svc.Upcoming(r.Context(), c.query.str("group"), c.query.int("count"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(list))
	return nil
}

// importCalendar answers 201 when the import created the calendar, 200
// when it replaced one or was a dry run.
func (h *handler) importCalendar(w http.ResponseWriter, r *http.Request, c *call) error {
	var req api.CalendarImport
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	res, err := h.svc.ImportCalendar(r.Context(), c.actor(), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	res.Dates = nonNil(res.Dates)
	status := http.StatusOK
	if res.Created && !res.DryRun {
		status = http.StatusCreated
	}
	httpjson.Write(w, status, res)
	return nil
}
