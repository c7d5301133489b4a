package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) nodes(w http.ResponseWriter, r *http.Request, _ *call) error {
	nodes, err := h.svc.Nodes(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(nodes))
	return nil
}

func (h *handler) explainCron(w http.ResponseWriter, r *http.Request, c *call) error {
	exp, err := h.svc.ExplainCron(r.Context(), c.query.str("expression"), c.query.str("time_zone"), c.query.int("count"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, exp)
	return nil
}
