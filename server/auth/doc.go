// Package auth says who is calling chime server, and manages the local
// users, sessions and API tokens that answer that question. A [Service]
// keeps them in three tables of the store's database ({prefix}auth_users,
// auth_tokens and auth_sessions, created by [New] through the store's
// component migrations); every row carries the store's scheduler name, so
// several schedulers can share one database, and any number of nodes can
// serve one user base.
//
// # Roles
//
// Three roles, each allowed what the one before it may do ([api.Role.Includes]):
// viewer reads (jobs with their sensitive values masked, execution output
// as it is); operator also changes and runs jobs, triggers and calendars;
// admin also manages users, tokens, secrets and alert settings. The last
// admin can be neither deleted nor demoted: the transaction that would do
// it locks every admin's row first, so two admins removed at once from two
// nodes cannot both go.
//
// # Sessions
//
// [Service.Login] checks a password against its bcrypt hash and returns a
// session token: 32 bytes from crypto/rand, base64url. Only its SHA-256 is
// stored, so a copy of the database opens no session. A session lives
// Options.SessionTTL (12 hours) after its last use, each use sliding the
// expiry forward (written at most once a minute), and never more than
// Options.SessionMaxAge (7 days) after the login. [Service.Logout] deletes
// it; a new password deletes all of its user's sessions. A session acts
// with its user's current role, so a demotion applies at once.
//
// Logins are rate-limited per user name and per client address (an IPv6
// /64 counts as one), 5 and 20 attempts a minute by default, in memory on
// each node and bounded in size. An unknown user and a wrong password get
// the same answer after the same work (a bcrypt comparison with a dummy
// hash), so the answer does not tell which names exist. Every attempt is
// logged with the user name and the client address, never the password.
//
// # API tokens
//
// Tokens are for automation: "chime_" followed by 32 random bytes, shown
// once by [Service.CreateToken] and stored as their SHA-256. Each belongs
// to a user and is deleted with it; it acts as that user, with the lower
// of its own role and the user's current one, until it expires (if it
// has an expiry) or is revoked. Its last use is recorded, at most once a
// minute.
//
// # Single sign-on and job-group scopes
//
// [Service.StartSSOSession] starts a session for a user an OpenID Connect
// provider vouched for (package server/sso runs the flow and maps the
// user's groups to a role). The first sign-on creates the user with a
// password hash no password matches, so it signs in only through the
// provider ([api.User].Source "sso"); each sign-on replaces its role and
// scopes. A local user of the same name is never taken over, and the last
// admin is not demoted. Scopes ([api.User].Scopes, the scopes column of
// auth_users since migration 6) limit an operator to the job groups their
// patterns match; a session acts with its user's current scopes, and a
// token always with its owner's. An admin sets them on local users with
// [Service.CreateUser] and [Service.UpdateUser].
//
// # Authentication
//
// [Service.Authenticate] takes the credential of an "Authorization:
// Bearer" header, or else of the chime_session cookie, and looks its
// SHA-256 up. The hash of a 256-bit secret is the lookup key: timing the
// lookup tells an attacker nothing short of a preimage, so there is no
// stored secret to compare in constant time. Every bad credential
// (unknown, expired, revoked, of a deleted user) gets the same answer.
//
// # The first admin
//
// There are no default credentials. [Service.Bootstrap] creates the user
// "admin" with a random 20-character password when there is no user at
// all, and returns the password for the caller to show once. Nodes that
// start together on one database may all call it: the users table's
// primary key lets exactly one insert the admin, and the others report
// that they created nothing.
//
// # Audit and errors
//
// Every change to users and tokens is recorded through Options.Audit:
// who, what, to which user or token, and what changed, never a password
// or a secret. Errors a client can act on are *api.Error values: invalid
// input names its field ("password: must be at least 12 characters") and
// changes nothing; a missing user or token is not_found; a taken name or a
// change that would leave no admin is a conflict. Other errors come from
// the database, wrapped.
package auth
