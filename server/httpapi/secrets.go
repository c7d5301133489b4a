package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) listSecrets(w http.ResponseWriter, r *http.Request, _ *call) error {
	list, err := h.svc.ListSecrets(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(list))
	return nil
}

func (h *handler) getSecret(w http.ResponseWriter, r *http.Request, _ *call) error {
	sec, err := h.svc.GetSecret(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, sec)
	return nil
}

func (h *handler) putSecret(w http.ResponseWriter, r *http.Request, c *call) error {
	var in api.SecretValue
	if err := h.decode(w, r, &in); err != nil {
		return err
	}
	name := r.PathValue("name")
	stored, created, err := h.svc.PutSecret(r.Context(), c.actor(), name, in.Value)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", api.Version+"/secrets/"+name)
	}
	httpjson.Write(w, status, stored)
	return nil
}

func (h *handler) deleteSecret(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.DeleteSecret(r.Context(), c.actor(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
