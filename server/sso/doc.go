// Package sso signs users in to chime server through an OpenID Connect
// provider (Keycloak, Google, Okta, Entra ID, Dex, …): single sign-on.
//
// # The flow
//
// GET /auth/oidc/login starts an authorization code flow with PKCE: it
// draws a state, a nonce (130 random bits each) and a PKCE verifier, keeps
// them in a short-lived cookie (chime_oidc: HttpOnly, SameSite=Lax so that
// it comes back with the provider's redirect, ten minutes, Path
// /auth/oidc/) and redirects the browser to the provider. No node keeps
// anything in memory, so the callback may reach any node of a cluster.
//
// GET /auth/oidc/callback checks that the state the provider sends back is
// the cookie's, exchanges the code for tokens with the verifier, verifies
// the ID token (signature against the provider's published keys, issuer,
// audience, expiry) and that it carries the cookie's nonce, and reads the
// user name and groups from its claims. The role mapping ([Rule]) turns
// the groups into a role, possibly limited to job groups; a user no rule
// matches is refused with a page that says so. The sign-on then starts an
// ordinary chime session (the chime_session cookie the console and the API
// read), created and audit-logged by the auth service with the provider's
// subject and e-mail.
//
// # The command line
//
// chime login --sso signs in through the same flow, the server being the
// provider's client as for a browser (see [Provider.EnableCLI]). The CLI
// listens on 127.0.0.1, and the URL it prints adds to the login its port,
// a state and the S256 challenge of a PKCE verifier it keeps. At the
// callback the server keeps the vouched-for login for two minutes in its
// database (table {p}sso_cli_grants, component "sso", under the SHA-256 of
// a random one-time code) and redirects the browser to
// http://127.0.0.1:PORT/callback with the code and the CLI's state: never
// to another host. The CLI POSTs the code and its verifier to
// POST /auth/oidc/token ([TokenPath]), which deletes the grant and, when
// the verifier matches the challenge, starts the session and answers it
// as a password login does. A code serves once, even with a wrong
// verifier.
//
// # Role mapping
//
// Rules read `group "ops" -> admin`, `group "billing-team" -> operator of
// billing.*` or `group "*" -> viewer` ("*" is every signed-in user). Of
// the rules whose group the user has, the highest role wins; if it is
// operator and every rule granting it is scoped, the user is an operator of
// the union of their job-group patterns, and a viewer elsewhere. An admin
// cannot be scoped, nor can a viewer (who reads every group anyway).
//
// # Users
//
// A user signing on for the first time becomes a chime user with no
// password (it can sign in only through the provider), named by the
// configured claim (email by default, lower-cased; refused when the token
// says the address is not verified). Its role and scopes are replaced at
// every sign-on, so a change of groups at the provider applies at the next
// one; its sessions end as local sessions do. A local user of the same
// name is never taken over. API clients of such a user use API tokens
// created for it, which act with at most its role and with its scopes.
package sso
