package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) listPools(w http.ResponseWriter, r *http.Request, _ *call) error {
	pools, err := h.svc.ListPools(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(pools))
	return nil
}

func (h *handler) getPool(w http.ResponseWriter, r *http.Request, _ *call) error {
	p, err := h.svc.GetPool(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, p)
	return nil
}

// putPool answers with the pool as stored; its read-only fields in the
// body are ignored.
func (h *handler) putPool(w http.ResponseWriter, r *http.Request, c *call) error {
	var p api.Pool
	if err := h.decode(w, r, &p); err != nil {
		return err
	}
	var err error
	if p.Name, err = fromPath(r, "name", p.Name); err != nil {
		return err
	}
	stored, created, err := h.svc.PutPool(r.Context(), c.actor(), api.Pool{Name: p.Name, Description: p.Description, Limit: p.Limit})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpjson.Write(w, status, stored)
	return nil
}

func (h *handler) deletePool(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.DeletePool(r.Context(), c.actor(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
