// Package httpapi is chime server's HTTP API: the routes of docs/api.md
// over a [Service] (the server's jobs, executions, calendars, nodes, alert
// settings and audit log) and an [Authenticator] (users, sessions and API
// tokens). [New] returns the handler; package server builds the real
// Service and package server/auth the real Authenticator.
//
// # The route table
//
// Every route is one entry of a single table: method and path (a Go 1.22
// ServeMux pattern such as "PUT /api/v1/jobs/{group}/{name}"), the least
// role allowed, the query parameters accepted, the request and response
// body types and the handler. New registers exactly the table's routes on
// an http.ServeMux and builds the OpenAPI 3.0 document served at
// /api/openapi.json from the same entries, generating the body schemas by
// reflection over the api package's structs, so the document cannot
// describe a route the server does not serve or miss one it does.
//
// # Roles
//
// Routes are public (the login, /healthz, /readyz, /metrics and the
// OpenAPI document) or need a caller the Authenticator recognizes, from a
// bearer token or the chime_session cookie. Roles are ordered viewer <
// operator < admin, each allowed what the roles below it may do: viewers
// read, operators also change jobs, triggers and calendars and run, retry
// and backfill, admins also manage users, tokens and alert settings and
// read the audit log. A role the API does not know may do nothing. The
// caller's name is passed to every changing Service method as the actor,
// which the service records in the audit log.
//
// A caller may be limited to job groups (api.User.Scopes, set by single
// sign-on's role mapping): then its role above viewer reaches only the
// job groups its patterns match. The route wrapper checks this, in
// authorizeScope, before the handler runs: each route above viewer that
// changes jobs names how to find the job groups a request touches (the
// path's {group}, the body's jobs, an execution's job, the maintenance
// window), and a request touching a group outside the scopes, or a route
// that belongs to no job group (calendars), is refused with 403 naming
// the scopes. Reads are not limited; jobs outside the scopes are masked
// as for a viewer.
//
// # Errors
//
// Every error is an api.Error, {"code", "message", "field"}, with the HTTP
// status of its code (httpjson.Status). A request is checked before
// anything is called: no or bad credentials are 401 (with
// WWW-Authenticate), too small a role 403, a query parameter that is
// unknown, repeated, of the wrong type or out of range 400 naming it, a
// body with an unknown field or a wrong type 400 naming the field, a body
// over Options.MaxBodyBytes 413, a malformed If-Match 400. A refused
// request never reaches the Service, so it changes nothing. Errors the
// Service or Authenticator return as *api.Error (not_found, conflict,
// version_mismatch → 412, …) are passed on; any other error is logged and
// answered 500 without its details, and so is a panic. A path no route
// has is 404 (not_found); a method its routes lack is 405 with Allow, coded
// invalid_argument since the API has no code of its own for it.
//
// # Jobs and versions
//
// A job's responses carry its version as a strong ETag ("7"). A PUT with
// If-Match: "7" asks the Service to replace the job only at that version
// (412 otherwise); without If-Match the PUT is an unconditional upsert,
// answered 201 when it created the job and 200 when it replaced one.
//
// # Sessions
//
// A login answers with an api.Session and sets its token as the
// chime_session cookie (HttpOnly, SameSite=Strict, Secure over TLS); a
// logout ends the session and clears the cookie.
//
// # Logging
//
// Each request is logged once with method, path, status, duration and
// user, at Info (Debug for probes and metrics). Headers are never logged,
// so credentials stay out of the log.
package httpapi
