package httpapi

import (
	"net"
	"net/http"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// login checks the credentials, answers with the session and sets it as
// the chime_session cookie: HttpOnly so scripts cannot read it,
// SameSite=Strict so other sites cannot ride on it, and Secure when the
// request came over TLS.
func (h *handler) login(w http.ResponseWriter, r *http.Request, _ *call) error {
	var req api.LoginRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	switch {
	case req.Username == "":
		return httpjson.Errorf(api.CodeInvalidArgument, "username", "is required")
	case req.Password == "":
		return httpjson.Errorf(api.CodeInvalidArgument, "password", "is required")
	}
	if info := requestInfoFrom(r.Context()); info != nil {
		info.user = req.Username
	}
	session, err := h.authn.Login(r.Context(), req.Username, req.Password, clientAddr(r))
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name:     SessionCookie,
		Value:    session.Token,
		Path:     "/",
		Expires:  session.Expires,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	httpjson.Write(w, http.StatusOK, session)
	return nil
}

// logout ends the session the request carries and clears the cookie.
func (h *handler) logout(w http.ResponseWriter, r *http.Request, _ *call) error {
	if err := h.authn.Logout(r.Context(), requestToken(r)); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name:     SessionCookie,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) me(w http.ResponseWriter, _ *http.Request, c *call) error {
	httpjson.Write(w, http.StatusOK, api.User{
		Name: c.user.Name, Role: c.user.Role, Shell: c.user.Shell, Scopes: c.user.Scopes, Created: c.user.Created,
	})
	return nil
}

// authMethods tells the login page how users may sign in.
func (h *handler) authMethods(w http.ResponseWriter, _ *http.Request, _ *call) error {
	httpjson.Write(w, http.StatusOK, api.AuthMethods{Password: true, SSO: h.sso})
	return nil
}

// refuseForgery refuses a request another web site may have made a
// browser send (cross-site request forgery). Only a request without an
// Authorization header can be forged, since another site cannot know a
// bearer token; of those, a state-changing one (any method but GET, HEAD
// and OPTIONS) is refused when
//
//   - the browser says it comes from another origin (Sec-Fetch-Site, or
//     else an Origin header that does not match the Host), as
//     http.CrossOriginProtection decides; or
//   - it carries the session cookie but not Content-Type
//     application/json, which a form or a simple cross-origin request
//     cannot send without a CORS preflight that the API never allows.
//
// SameSite=Strict on the cookie is a third defence, not the only one.
func (h *handler) refuseForgery(r *http.Request) error {
	if r.Header.Get("Authorization") != "" {
		return nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := h.crossOrigin.Check(r); err != nil {
		return httpjson.Errorf(api.CodePermissionDenied, "",
			"cross-origin %s refused: a browser may change state only from the console's own origin", r.Method)
	}
	if _, err := r.Cookie(SessionCookie); err != nil {
		return nil //nolint:nilerr // no session cookie: nothing for this check to guard
	}
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if !strings.EqualFold(strings.TrimSpace(mediaType), "application/json") {
		return httpjson.Errorf(api.CodePermissionDenied, "",
			"a %s authenticated by the session cookie must send Content-Type: application/json", r.Method)
	}
	return nil
}

// requestToken is the token a request authenticates with: the bearer
// token, or else the session cookie's.
func requestToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// clientAddr is the client's IP address, which login rate limits key on.
// Behind a proxy this is the proxy's address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
