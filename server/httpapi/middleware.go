package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// requestInfo is what the route wrapper learns about a request that the
// request log reports: who called, and whether the route is quiet.
type requestInfo struct {
	user  string
	quiet bool
}

type requestInfoKey struct{}

// requestInfoFrom returns the request's info, nil outside logged.
func requestInfoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// logged serves r with next, then logs one record for it: method, path,
// status, duration and user. It never logs headers, so credentials stay
// out of the log. A panic in next is logged with its stack and answered
// 500 if nothing was written yet; http.ErrAbortHandler is passed on.
func (h *handler) logged(w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	start := time.Now()
	info := &requestInfo{}
	r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v != nil && v != http.ErrAbortHandler { //nolint:errorlint // v is a recovered panic value, compared by identity as net/http does
			h.log.ErrorContext(r.Context(), "request panicked",
				"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !sw.wroteHeader {
				httpjson.Write(sw, http.StatusInternalServerError, &api.Error{
					Code: api.CodeInternal, Message: "internal error; the server log has the details",
				})
			}
		}
		level := slog.LevelInfo
		if info.quiet && sw.statusCode() < http.StatusBadRequest {
			level = slog.LevelDebug
		}
		h.log.Log(r.Context(), level, "http request",
			"method", r.Method, "path", r.URL.Path, "status", sw.statusCode(),
			"duration", time.Since(start), "user", info.user)
		if v == http.ErrAbortHandler { //nolint:errorlint // v is a recovered panic value, compared by identity as net/http does
			panic(v)
		}
	}()
	next(sw, r)
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status = status
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusCode is the status sent, 200 when the handler wrote nothing.
func (w *statusWriter) statusCode() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}
