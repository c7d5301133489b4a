package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) shardItems(w http.ResponseWriter, r *http.Request, _ *call) error {
	items, err := h.svc.ShardItems(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, items)
	return nil
}

func (h *handler) rerunFailedItems(w http.ResponseWriter, r *http.Request, c *call) error {
	exec, err := h.svc.RerunFailedItems(r.Context(), r.PathValue("id"), c.actor())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, exec)
	return nil
}
