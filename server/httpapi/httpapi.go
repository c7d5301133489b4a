package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// SessionCookie is the cookie that carries a session token to browsers:
// set by a login, cleared by a logout, and read (like a bearer token) by
// the Authenticator.
const SessionCookie = "chime_session"

// Options tune the API handler. A nil *Options means all defaults.
type Options struct {
	// Logger receives one record per request (Debug for probes, metrics
	// and the executor protocol's requests unless they fail, Info
	// otherwise), panics and the errors behind 500 answers.
	// Defaults to slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body; a larger one is refused with
	// 413. Zero or less means the default, httpjson.DefaultMaxBody (1 MiB).
	MaxBodyBytes int64
	// Metrics serves GET /metrics, typically a Prometheus handler.
	// Defaults to nil: /metrics answers 404.
	Metrics http.Handler
	// Stopping is closed when the server shuts down: the log streams,
	// long-lived responses that http.Server.Shutdown would wait for, end
	// then. Defaults to nil: streams end with their execution or their
	// client.
	Stopping <-chan struct{}
	// SSO is the single sign-on provider GET /api/v1/auth/methods names
	// for the login page; its routes are served beside the API. Defaults
	// to nil: password logins only.
	SSO *api.SSOProvider
}

// handler serves the API. It is immutable once built and safe for
// concurrent use.
type handler struct {
	svc     Service
	authn   Authenticator
	log     *slog.Logger
	maxBody int64
	metrics http.Handler
	sso     *api.SSOProvider
	mux     *http.ServeMux
	// stopping and streamPoll are Options.Stopping and how often a log
	// stream reads new lines (see streamLogs).
	stopping   <-chan struct{}
	streamPoll time.Duration
	// routes is the route table the mux serves and the OpenAPI document
	// describes; patterns are the patterns registered on the mux, in
	// order.
	routes   []route
	patterns []string
	openAPI  []byte
	// crossOrigin refuses browsers' cross-origin mutations; see
	// refuseForgery.
	crossOrigin *http.CrossOriginProtection
}

// New returns the handler of chime server's HTTP API: every route of
// docs/api.md, with authentication, role checks, request logging and
// panic recovery. It panics if svc or authn is nil, or if the route table
// is inconsistent: both are programming errors.
func New(svc Service, authn Authenticator, opts *Options) http.Handler {
	if svc == nil || authn == nil {
		panic("httpapi: New needs a Service and an Authenticator")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = httpjson.DefaultMaxBody
	}
	h := &handler{
		svc:     svc,
		authn:   authn,
		log:     o.Logger,
		maxBody: o.MaxBodyBytes,
		metrics: o.Metrics,
		sso:     o.SSO,
		mux:     http.NewServeMux(),

		stopping:   o.Stopping,
		streamPoll: defaultStreamPoll,

		crossOrigin: http.NewCrossOriginProtection(),
	}
	h.routes = append(h.table(), h.workflowRoutes()...)
	for i := range h.routes {
		rt := &h.routes[i]
		h.mux.Handle(rt.pattern(), h.serve(rt))
		h.patterns = append(h.patterns, rt.pattern())
	}
	doc, err := openAPIJSON(h.routes)
	if err != nil {
		panic("httpapi: building the OpenAPI document: " + err.Error())
	}
	h.openAPI = doc
	return h
}

// ServeHTTP logs the request, recovers a panic into a 500, and dispatches
// to the mux. Requests no route matches are answered with an api.Error
// too.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.logged(w, r, h.dispatch)
}

// dispatch serves r through the mux, answering requests it has no route
// for with an api.Error instead of the mux's plain text: 404 when no
// route has the path, 405 with Allow when none has the method.
func (h *handler) dispatch(w http.ResponseWriter, r *http.Request) {
	next, pattern := h.mux.Handler(r)
	if pattern != "" {
		h.mux.ServeHTTP(w, r)
		return
	}
	probe := &headerProbe{header: make(http.Header)}
	next.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		// The API has no error code of its own for a wrong method; the
		// request is malformed, so it is invalid_argument.
		httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.Errorf(api.CodeInvalidArgument, "",
			"method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
		return
	}
	h.writeError(w, r, httpjson.Errorf(api.CodeNotFound, "", "no route for %s %s", r.Method, r.URL.Path))
}

// writeError writes err as an api.Error; a 401 also names the scheme the
// client should use.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.Code == api.CodeUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="chime"`)
	}
	httpjson.WriteError(w, r, h.log, err)
}

// headerProbe is a ResponseWriter that keeps the status and headers and
// discards the body: it learns what the mux would have answered.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }
