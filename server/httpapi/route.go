package httpapi

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/secret"
)

// route is one entry of the route table. The mux serves it, the wrapper
// enforces its role and query parameters, and the OpenAPI document
// describes it, all from these same fields.
type route struct {
	// method and path form the ServeMux pattern; path's {wildcards} are
	// also OpenAPI's path template syntax.
	method string
	path   string
	// operationID names the operation in the OpenAPI document.
	operationID string
	summary     string
	// role is the least role allowed to call the route; empty for a
	// public route, which needs no credentials.
	role api.Role
	// query lists the query parameters the route accepts; any other is
	// refused.
	query []param
	// ifMatch documents the If-Match request header.
	ifMatch bool
	// lastEventID documents the Last-Event-ID request header of an event
	// stream.
	lastEventID bool
	// body is the zero value of the request body's type; nil for a route
	// that reads no body. optionalBody allows an empty body.
	body         any
	optionalBody bool
	// responses are the success responses.
	responses []response
	// errors lists error statuses the route answers besides those the
	// document derives from its other fields (400, 401, 403, 404, 412,
	// 413).
	errors []int
	// groups returns the job groups a request to a route above viewer
	// changes, for callers limited to some groups (authorizeScope); nil
	// for a route that belongs to no job group, which such callers may
	// not use.
	groups groupsFunc
	// quiet routes (probes, metrics, the executor protocol's requests,
	// thousands a second on a busy cluster) are logged at Debug level,
	// unless they fail (4xx, 5xx).
	quiet  bool
	handle handlerFunc
}

// response describes one success response of a route.
type response struct {
	status int
	// body is the zero value of the body's type; nil for no body.
	body any
	// contentType defaults to application/json when body is set.
	contentType string
	// etag documents the ETag response header.
	etag bool
}

// pattern is the route's ServeMux pattern, "GET /api/v1/jobs".
func (rt *route) pattern() string { return rt.method + " " + rt.path }

// call is what the route wrapper hands a handler: the authenticated
// caller (nil on a public route) and the validated query string.
type call struct {
	user  *api.User
	query queryValues
}

// actor names the caller for the audit log.
func (c *call) actor() string { return c.user.Name }

// viewOf returns j as the caller may read it: masked (secret.MaskJob) for
// a role below operator, and for an operator limited to job groups that
// do not include j's. Operators and admins read jobs whole: they may
// change a job's URL to a server of their own, so masking would hide
// nothing from them.
func (c *call) viewOf(j api.Job) api.Job {
	if c.user != nil && c.user.Role.Includes(api.RoleOperator) && c.user.MayChangeGroup(j.Group) {
		return j
	}
	return secret.MaskJob(j)
}

// handlerFunc serves one route. A returned error is written as an
// api.Error; the handler must not have written anything then.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *call) error

// serve wraps a route's handler: it records the route for the request log,
// refuses forged browser requests, authenticates and authorizes the caller, validates the query string, and
// writes the handler's error. A refused request never reaches the handler.
func (h *handler) serve(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := requestInfoFrom(r.Context())
		if info != nil {
			info.quiet = rt.quiet
		}
		if err := h.refuseForgery(r); err != nil {
			h.writeError(w, r, err)
			return
		}
		if err := httpjson.CheckText("", "the path", r.URL.Path); err != nil {
			h.writeError(w, r, err)
			return
		}
		c := &call{}
		if rt.role != "" {
			user, err := h.authenticate(r)
			if err != nil {
				h.writeError(w, r, err)
				return
			}
			if info != nil {
				info.user = user.Name
			}
			if !mayCall(user.Role, rt.role) {
				h.writeError(w, r, httpjson.Errorf(api.CodePermissionDenied, "",
					"%s %s needs role %s; %s has role %q", rt.method, rt.path, rt.role, user.Name, user.Role))
				return
			}
			if err := h.authorizeScope(r, rt, user); err != nil {
				h.writeError(w, r, err)
				return
			}
			c.user = user
			r = r.WithContext(context.WithValue(r.Context(), callerKey{}, user))
		}
		q, err := parseQuery(r.URL.Query(), rt.query)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		c.query = q
		if err := rt.handle(w, r, c); err != nil {
			h.writeError(w, r, err)
		}
	})
}

// mayCall reports whether a caller of role have may call a route that
// needs role need. The executor role stands apart: only it may call the
// executor routes, and it may call nothing else.
func mayCall(have, need api.Role) bool {
	if need == api.RoleExecutor || have == api.RoleExecutor {
		return have == need
	}
	return have.Includes(need)
}

// callerKey is the context key of the authenticated caller.
type callerKey struct{}

// Caller returns the authenticated caller of the API request whose context
// ctx is: the handler puts it there before it calls the Service, for the
// checks that depend on more than the route's role (such as the shell
// capability a shell job needs). ok is false for a call that did not come
// through the API, such as a program embedding the server calling its
// methods, which is trusted.
func Caller(ctx context.Context) (user *api.User, ok bool) {
	user, ok = ctx.Value(callerKey{}).(*api.User)
	return user, ok
}

// authenticate asks the Authenticator who is calling. A nil user without
// an error counts as no credentials.
func (h *handler) authenticate(r *http.Request) (*api.User, error) {
	user, err := h.authn.Authenticate(r.Context(), r)
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, httpjson.Errorf(api.CodeUnauthenticated, "", "credentials required")
	}
	return user, nil
}
