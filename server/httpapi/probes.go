package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) healthz(w http.ResponseWriter, _ *http.Request, _ *call) error {
	writeText(w, "ok\n")
	return nil
}

// readyz answers 503 when the service is not ready. The reason shown is
// the service's own *api.Error message; any other error is logged and
// summarized, since this route is public.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request, _ *call) error {
	err := h.svc.Ready(r.Context())
	if err == nil {
		writeText(w, "ok\n")
		return nil
	}
	msg := "not ready; the server log has the details"
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		msg = apiErr.Message
	} else {
		h.log.WarnContext(r.Context(), "not ready", "error", err)
	}
	httpjson.Write(w, http.StatusServiceUnavailable, &api.Error{Code: api.CodeUnavailable, Message: msg})
	return nil
}

func (h *handler) serveMetrics(w http.ResponseWriter, r *http.Request, _ *call) error {
	if h.metrics == nil {
		return httpjson.Errorf(api.CodeNotFound, "", "this server exports no metrics")
	}
	h.metrics.ServeHTTP(w, r)
	return nil
}

func (h *handler) serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ *call) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(h.openAPI) // the client went away; nothing to tell it
	return nil
}

// writeText writes a short text/plain answer with status 200.
func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, s) // the client went away; nothing to tell it
}
