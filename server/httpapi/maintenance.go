package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) maintenance(w http.ResponseWriter, r *http.Request, _ *call) error {
	m, err := h.svc.Maintenance(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, m)
	return nil
}

func (h *handler) startMaintenance(w http.ResponseWriter, r *http.Request, c *call) error {
	var req api.MaintenanceRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	m, err := h.svc.StartMaintenance(r.Context(), c.actor(), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, m)
	return nil
}

func (h *handler) endMaintenance(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.EndMaintenance(r.Context(), c.actor()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
