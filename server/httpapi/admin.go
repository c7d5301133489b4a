package httpapi

import (
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) alertSettings(w http.ResponseWriter, r *http.Request, _ *call) error {
	s, err := h.svc.AlertSettings(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s)
	return nil
}

func (h *handler) putAlertSettings(w http.ResponseWriter, r *http.Request, c *call) error {
	var s api.AlertSettings
	if err := h.decode(w, r, &s); err != nil {
		return err
	}
	if err := h.svc.PutAlertSettings(r.Context(), c.actor(), s); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) testAlert(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.TestAlert(r.Context(), c.actor()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) listAudit(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.svc.ListAudit(r.Context(), api.AuditQuery{
		Actor:  c.query.str("actor"),
		Target: c.query.str("target"),
		Cursor: c.query.str("cursor"),
		Limit:  c.query.int("limit"),
	})
	if err != nil {
		return err
	}
	if list.Entries == nil {
		list.Entries = []api.AuditEntry{}
	}
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

func (h *handler) listUsers(w http.ResponseWriter, r *http.Request, _ *call) error {
	users, err := h.authn.ListUsers(r.Context())
	if err != nil {
		return err
	}
	for i := range users {
		users[i].Password = ""
	}
	httpjson.Write(w, http.StatusOK, nonNil(users))
	return nil
}

func (h *handler) createUser(w http.ResponseWriter, r *http.Request, c *call) error {
	var u api.User
	if err := h.decode(w, r, &u); err != nil {
		return err
	}
	created, err := h.authn.CreateUser(r.Context(), c.actor(), u)
	if err != nil {
		return err
	}
	created.Password = ""
	httpjson.Write(w, http.StatusCreated, created)
	return nil
}

func (h *handler) updateUser(w http.ResponseWriter, r *http.Request, c *call) error {
	var u api.User
	if err := h.decode(w, r, &u); err != nil {
		return err
	}
	var err error
	if u.Name, err = fromPath(r, "name", u.Name); err != nil {
		return err
	}
	updated, err := h.authn.UpdateUser(r.Context(), c.actor(), u)
	if err != nil {
		return err
	}
	updated.Password = ""
	httpjson.Write(w, http.StatusOK, updated)
	return nil
}

func (h *handler) deleteUser(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.authn.DeleteUser(r.Context(), c.actor(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) listTokens(w http.ResponseWriter, r *http.Request, _ *call) error {
	tokens, err := h.authn.ListTokens(r.Context())
	if err != nil {
		return err
	}
	for i := range tokens {
		tokens[i].Secret = ""
	}
	httpjson.Write(w, http.StatusOK, nonNil(tokens))
	return nil
}

func (h *handler) createToken(w http.ResponseWriter, r *http.Request, c *call) error {
	var t api.Token
	if err := h.decode(w, r, &t); err != nil {
		return err
	}
	created, err := h.authn.CreateToken(r.Context(), c.actor(), t)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, created)
	return nil
}

func (h *handler) deleteToken(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.authn.DeleteToken(r.Context(), c.actor(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
