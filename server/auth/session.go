package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// sessionCookie is the name of the cookie that carries a session token for
// the console.
const sessionCookie = "chime_session"

// errBadCredentials answers every credential that does not authenticate,
// whatever was wrong with it, so that it reveals nothing.
func errBadCredentials() *api.Error {
	return httpjson.Errorf(api.CodeUnauthenticated, "", "invalid or expired credentials")
}

// Login checks a user name and password and starts a session. Attempts are
// rate-limited per user name and per client address (clientAddr, with or
// without a port; IPv6 addresses count per /64), failed or not. Every
// attempt is logged, never with the password. An unknown user name and a
// wrong password get the same answer and take as long.
func (s *Service) Login(ctx context.Context, username, password, clientAddr string) (*api.Session, error) {
	switch {
	case username == "":
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "username", "required")
	case password == "":
		return nil, httpjson.Errorf(api.CodeInvalidArgument, "password", "required")
	}
	now := s.now()
	log := s.log.With(slog.String("user", username), slog.String("client_addr", clientAddr))
	subjects := []loginSubject{
		{subjectAddress, addressKey(clientAddr), s.opts.LoginFailuresPerAddress},
		{subjectUser, username, s.opts.LoginFailuresPerUser},
	}
	for _, sub := range subjects {
		wait, err := s.loginWait(ctx, sub.kind, sub.subject, sub.free, now)
		if err != nil {
			return nil, err
		}
		if wait > 0 {
			log.LogAttrs(ctx, slog.LevelWarn, "login refused: too many failed logins",
				slog.String("throttled", sub.kind), slog.Duration("wait", wait))
			return nil, httpjson.Errorf(api.CodeRateLimited, "",
				"too many failed logins for this %s: try again in %s", sub.kind, ceilSecond(wait))
		}
	}
	failed := func(reason string) (*api.Session, error) {
		log.LogAttrs(ctx, slog.LevelWarn, "login failed", slog.String("reason", reason))
		for _, sub := range subjects {
			if err := s.recordLoginFailure(ctx, sub.kind, sub.subject, now); err != nil {
				return nil, err
			}
		}
		return nil, httpjson.Errorf(api.CodeUnauthenticated, "", "invalid user name or password")
	}
	var (
		role api.Role
		hash string
	)
	err := s.db.QueryRowContext(ctx, s.q.userGet, s.sched, username).Scan(&role, &hash, new(bool))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_ = bcrypt.CompareHashAndPassword(s.dummyHash, []byte(password)) // as slow as a real check
		return failed("unknown user")
	case err != nil:
		return nil, fmt.Errorf("auth: reading user %q: %w", username, err)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)); err != nil {
		return failed("wrong password")
	}
	if err := s.clearLoginFailures(ctx, subjectUser, username, now); err != nil {
		return nil, err
	}
	session, err := s.startSession(ctx, username, role, now)
	if err != nil {
		return nil, err
	}
	log.LogAttrs(ctx, slog.LevelInfo, "login", slog.String("role", string(role)))
	return session, nil
}

// startSession starts a session of username, who has role, at now.
func (s *Service) startSession(ctx context.Context, username string, role api.Role, now time.Time) (*api.Session, error) {
	// Expired sessions are deleted here: logins are rare, and the index on
	// expires keeps it cheap.
	if _, err := s.db.ExecContext(ctx, s.q.sessionPrune, s.sched, nanos(now)); err != nil {
		return nil, fmt.Errorf("auth: deleting expired sessions: %w", err)
	}
	token := randomToken()
	expires := s.sessionExpiry(now, now)
	_, err := s.db.ExecContext(ctx, s.q.sessionInsert, s.sched, hashSecret(token), username,
		nanos(now), nanos(expires), nanos(now))
	if err != nil {
		return nil, fmt.Errorf("auth: starting a session for user %q: %w", username, err)
	}
	return &api.Session{Token: token, User: username, Role: role, Expires: instant(nanos(expires))}, nil
}

// loginSubject is what failed logins are counted for: a user name or a
// client address, with its free failures.
type loginSubject struct {
	kind, subject string
	free          int
}

// ceilSecond rounds d up to whole seconds, so that a wait is never
// announced shorter than it is.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// addressKey is the throttling key of a client address: the IP without
// its port, and an IPv6 address's /64, which one client usually holds
// whole. An address that does not parse is its own key.
func addressKey(clientAddr string) string {
	host := clientAddr
	if h, _, err := net.SplitHostPort(clientAddr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.WithZone("").Prefix(64) // a valid IPv6 address always has a /64
		return p.String()
	}
	return ip.String()
}

// Logout ends the session of a session token. Ending a session that has
// already ended, or passing an API token, does nothing.
func (s *Service) Logout(ctx context.Context, token string) error {
	if token == "" || len(token) > maxCredential || strings.HasPrefix(token, TokenPrefix) {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, s.q.sessionDelete, s.sched, hashSecret(token)); err != nil {
		return fmt.Errorf("auth: ending a session: %w", err)
	}
	return nil
}

// errMissingCredentials answers a request that carries no credential.
func errMissingCredentials() *api.Error {
	return httpjson.Errorf(api.CodeUnauthenticated, "", "missing credentials: send Authorization: Bearer <token>")
}

// credential returns the credential a request carries: the token of its
// "Authorization: Bearer" header or, without that header, the value of its
// chime_session cookie.
func credential(r *http.Request) (string, *api.Error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", httpjson.Errorf(api.CodeUnauthenticated, "",
				"unsupported Authorization scheme %q: send Authorization: Bearer <token>", scheme)
		}
		if token = strings.TrimSpace(token); token == "" {
			return "", errMissingCredentials()
		}
		return token, nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		return c.Value, nil
	}
	return "", errMissingCredentials()
}

// Authenticate returns the user a request acts for, from an API token or a
// session token in "Authorization: Bearer …", or a session token in the
// chime_session cookie. A session's user acts with the user's current
// role; a token with the lower of its own role and its owner's. A request
// without credentials, or with ones that are unknown, expired or belong to
// a deleted user, gets an *api.Error with code unauthenticated.
//
// Each use slides a session's expiry and records a token's last use, at
// most once a minute per credential.
func (s *Service) Authenticate(ctx context.Context, r *http.Request) (*api.User, error) {
	cred, e := credential(r)
	switch {
	case e != nil:
		return nil, e
	case len(cred) > maxCredential:
		return nil, errBadCredentials()
	case strings.HasPrefix(cred, TokenPrefix):
		return s.authenticateToken(ctx, cred)
	default:
		return s.authenticateSession(ctx, cred)
	}
}

// authenticateSession looks a session token up by its hash.
func (s *Service) authenticateSession(ctx context.Context, token string) (*api.User, error) {
	hash := hashSecret(token)
	var (
		u                          api.User
		shell                      bool
		scopes                     string
		created, expires, lastSeen int64
	)
	err := s.db.QueryRowContext(ctx, s.q.sessionGet, s.sched, hash).Scan(&u.Name, &u.Role, &shell, &scopes, &created, &expires, &lastSeen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errBadCredentials()
	}
	if err != nil {
		return nil, fmt.Errorf("auth: reading a session: %w", err)
	}
	now := s.now()
	if nanos(now) >= expires {
		return nil, errBadCredentials()
	}
	if now.Sub(instant(lastSeen)) >= touchEvery {
		next := s.sessionExpiry(instant(created), now)
		if _, err := s.db.ExecContext(ctx, s.q.sessionTouch, nanos(now), nanos(next), s.sched, hash); err != nil {
			return nil, fmt.Errorf("auth: recording a session's use: %w", err)
		}
	}
	u.Shell = &shell
	u.Scopes = splitScopes(scopes)
	return &u, nil
}

// authenticateToken looks an API token up by its hash. An executor token
// looked up within executorTokenFor is not looked up again.
func (s *Service) authenticateToken(ctx context.Context, secret string) (*api.User, error) {
	hash := hashSecret(secret)
	if u, ok := s.executors.get(hash, s.now()); ok {
		return u, nil
	}
	var (
		id                   string
		tokenRole, ownRole   api.Role
		tokenShell, ownShell bool
		owner, scopes        string
		expires, lastUsed    sql.NullInt64
		groups               sql.NullString
	)
	err := s.db.QueryRowContext(ctx, s.q.tokenGet, s.sched, hash).
		Scan(&id, &tokenRole, &tokenShell, &owner, &ownRole, &ownShell, &scopes, &expires, &lastUsed, &groups)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errBadCredentials()
	}
	if err != nil {
		return nil, fmt.Errorf("auth: reading a token: %w", err)
	}
	now := s.now()
	if expires.Valid && nanos(now) >= expires.Int64 {
		return nil, errBadCredentials()
	}
	if !lastUsed.Valid || now.Sub(instant(lastUsed.Int64)) >= touchEvery {
		if _, err := s.db.ExecContext(ctx, s.q.tokenTouch, nanos(now), s.sched, id); err != nil {
			return nil, fmt.Errorf("auth: recording token %s's use: %w", id, err)
		}
	}
	if tokenRole == api.RoleExecutor {
		// It serves its groups while its owner is an admin.
		if ownRole != api.RoleAdmin {
			return nil, errBadCredentials()
		}
		g, err := parseGroups(groups)
		if err != nil {
			return nil, err
		}
		u := api.User{Name: owner, Role: api.RoleExecutor, Groups: g}
		until := now.Add(executorTokenFor)
		if expires.Valid && instant(expires.Int64).Before(until) {
			until = instant(expires.Int64)
		}
		s.executors.put(hash, u, until)
		return executorUser(u), nil
	}
	shell := tokenShell && ownShell
	return &api.User{Name: owner, Role: lesser(tokenRole, ownRole), Shell: &shell, Scopes: splitScopes(scopes)}, nil
}

// sessionExpiry returns when a session created at created and last seen
// at lastSeen expires.
func (s *Service) sessionExpiry(created, lastSeen time.Time) time.Time {
	next := lastSeen.Add(s.opts.SessionTTL)
	if limit := created.Add(s.opts.SessionMaxAge); next.After(limit) {
		return limit
	}
	return next
}

// executorTokenFor is how long a node trusts an executor token it looked
// up without looking it up again. Executors call on every take, result,
// log line and heartbeat, more often than they run anything, and each
// lookup was a statement. Revoking the token, or changing its owner,
// through this node forgets it at once; through another node it reaches
// this one within executorTokenFor. Only executor tokens are kept: the
// others, whose roles can do more, are looked up on each request.
const executorTokenFor = time.Second

// maxExecutorTokens bounds the executor tokens kept: past it, the oldest
// lookups are forgotten all at once.
const maxExecutorTokens = 4096

// executorTokens are the executor tokens looked up lately, by hash, with
// the user each acts as and until when that is trusted.
type executorTokens struct {
	mu sync.Mutex
	m  map[string]executorToken
}

type executorToken struct {
	user  api.User
	until time.Time
}

// get returns the user of the executor token with hash, while trusted.
func (c *executorTokens) get(hash string, now time.Time) (*api.User, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[hash]
	if !ok || !now.Before(t.until) {
		return nil, false
	}
	return executorUser(t.user), true
}

// put keeps the user of the executor token with hash until until.
func (c *executorTokens) put(hash string, u api.User, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxExecutorTokens {
		c.m = make(map[string]executorToken)
	}
	c.m[hash] = executorToken{user: u, until: until}
}

// forget forgets every token kept, after a change to tokens or users.
func (c *executorTokens) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// executorUser returns a copy of u, an executor token's user, that the
// caller may change.
func executorUser(u api.User) *api.User {
	noShell := false
	u.Shell = &noShell
	u.Groups = slices.Clone(u.Groups)
	return &u
}
