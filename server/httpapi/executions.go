package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) listExecutions(w http.ResponseWriter, r *http.Request, c *call) error {
	q := api.ExecutionQuery{
		Outcomes: c.query.all("outcome"),
		From:     c.query.time("from"),
		To:       c.query.time("to"),
		NodeID:   c.query.str("node"),
		Cursor:   c.query.str("cursor"),
		Limit:    c.query.int("limit"),
	}
	if key := c.query.str("job"); key != "" {
		var err error
		if q.JobGroup, q.JobName, err = jobKey("job", key); err != nil {
			return err
		}
	}
	if err := timeRange(q.From, q.To, "to"); err != nil {
		return err
	}
	list, err := h.svc.ListExecutions(r.Context(), q)
	if err != nil {
		return err
	}
	if list.Executions == nil {
		list.Executions = []api.Execution{}
	}
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

func (h *handler) getExecution(w http.ResponseWriter, r *http.Request, _ *call) error {
	exec, err := h.svc.GetExecution(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, exec)
	return nil
}

func (h *handler) attempts(w http.ResponseWriter, r *http.Request, _ *call) error {
	execs, err := h.svc.Attempts(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(execs))
	return nil
}

func (h *handler) killExecution(w http.ResponseWriter, r *http.Request, c *call) error {
	exec, err := h.svc.KillExecution(r.Context(), c.actor(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, exec)
	return nil
}

func (h *handler) retryExecution(w http.ResponseWriter, r *http.Request, c *call) error {
	acc, err := h.svc.RetryExecution(r.Context(), c.actor(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, acc)
	return nil
}
