package httpapi

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// Executors is the executor protocol's side of the server: what the
// executor routes call. A Service that also implements it serves them;
// otherwise they answer 503.
type Executors interface {
	// RegisterExecutor registers an executor of a group the caller
	// (Caller) serves.
	RegisterExecutor(ctx context.Context, r api.ExecutorRegister) (*api.ExecutorRegistration, error)
	// ExecutorHeartbeat extends executor id's lease and lists the runs it
	// must cancel; a lapsed lease is a conflict.
	ExecutorHeartbeat(ctx context.Context, id string, hb api.ExecutorHeartbeat) (*api.ExecutorHeartbeatReply, error)
	// PollExecutor takes executor id's runs and cancel requests, waiting
	// up to the poll's wait while there is none.
	PollExecutor(ctx context.Context, id string, p api.ExecutorPoll) (*api.ExecutorWork, error)
	// ReportExecutorResult records how run ended; a stale token, or a run
	// not leased to id, is a conflict.
	ReportExecutorResult(ctx context.Context, id, run string, r api.ExecutorResult) error
	// AppendExecutorLogs appends a running run's log lines to its
	// execution's live log; a stale token, or a run not leased to id, is
	// a conflict and appends nothing.
	AppendExecutorLogs(ctx context.Context, id, run string, l api.ExecutorLogs) error
	// ListExecutors lists the registered executors.
	ListExecutors(ctx context.Context) ([]api.Executor, error)
}

// executors returns the Service's executor side, or the error the
// executor routes answer without one.
func (h *handler) executors() (Executors, error) {
	ex, ok := h.svc.(Executors)
	if !ok {
		return nil, httpjson.Errorf(api.CodeUnavailable, "", "this server runs no executors")
	}
	return ex, nil
}

func (h *handler) registerExecutor(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	var req api.ExecutorRegister
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	reg, err := ex.RegisterExecutor(r.Context(), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, reg)
	return nil
}

func (h *handler) listExecutors(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	list, err := ex.ListExecutors(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(list))
	return nil
}

func (h *handler) executorHeartbeat(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	var req api.ExecutorHeartbeat
	if err := h.decodeOptional(w, r, &req); err != nil {
		return err
	}
	reply, err := ex.ExecutorHeartbeat(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, reply)
	return nil
}

func (h *handler) pollExecutor(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	var req api.ExecutorPoll
	if err := h.decodeOptional(w, r, &req); err != nil {
		return err
	}
	work, err := ex.PollExecutor(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, work)
	return nil
}

func (h *handler) reportExecutorResult(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	var req api.ExecutorResult
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	if err := ex.ReportExecutorResult(r.Context(), r.PathValue("id"), r.PathValue("run"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) appendExecutorLogs(w http.ResponseWriter, r *http.Request, _ *call) error {
	ex, err := h.executors()
	if err != nil {
		return err
	}
	var req api.ExecutorLogs
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	if err := ex.AppendExecutorLogs(r.Context(), r.PathValue("id"), r.PathValue("run"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
