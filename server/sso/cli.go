package sso

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Sign-ons of the CLI (chime login --sso).
//
// The CLI listens on 127.0.0.1, draws a state and a PKCE verifier, and
// has the user open LoginPath with cli_port, cli_state and cli_challenge
// (the verifier's S256 challenge). The sign-on then runs as a browser's
// does, the server being the provider's client; at the callback, instead
// of a session cookie, the server keeps the vouched-for login under a
// random one-time code in its database (table {p}sso_cli_grants, two
// minutes at most, the code stored hashed) and redirects the browser to
// http://127.0.0.1:PORT/callback with the code and the CLI's state. The
// CLI POSTs the code and its verifier to TokenPath; the node that takes
// the grant (any node: nothing is in a node's memory) deletes it, checks
// the verifier against the challenge, and starts the session. A code
// serves once, and only with the verifier, which never left the CLI.

// TokenPath is where the CLI exchanges its one-time code for a session.
const TokenPath = "/auth/oidc/token"

// cliGrantTTL bounds the time between the callback and the CLI's
// exchange.
const cliGrantTTL = 2 * time.Minute

// ErrCLIDisabled is returned when the CLI's sign-on is asked of a
// Provider whose EnableCLI was not called.
var ErrCLIDisabled = errors.New("sso: the CLI's sign-on is not enabled")

// cliComponent names the package's tables: {p}sso_….
const cliComponent = "sso"

func cliMigrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "sign-ons of the CLI waiting for their exchange",
		Tables: []sqlstore.Table{{
			Name: "sso_cli_grants",
			Columns: []string{
				"sched_name {key} NOT NULL",
				// The SHA-256 of the one-time code, in hex.
				"code_hash {key} NOT NULL",
				"challenge {key} NOT NULL",
				// The auth.SSOLogin the provider vouched for, as JSON.
				"login {text} NOT NULL",
				"expires BIGINT NOT NULL",
			},
			Primary: "sched_name, code_hash",
			Indexes: []sqlstore.Index{{Name: "sso_cli_grants_expires", Cols: "sched_name, expires"}},
		}},
	}}
}

// cliGrants is the table of the CLI's sign-ons.
type cliGrants struct {
	db    *sql.DB
	sched string
	q     struct{ insert, prune, get, remove string }
}

// EnableCLI lets chime login --sso sign in through p, keeping the
// sign-ons between the callback and the CLI's exchange in st's database
// (it migrates the table). Without it the CLI's sign-on is refused.
func (p *Provider) EnableCLI(ctx context.Context, st *sqlstore.Store) error {
	if err := st.MigrateComponent(ctx, cliComponent, cliMigrations()); err != nil {
		return fmt.Errorf("sso: %w", err)
	}
	g := &cliGrants{db: st.DB(), sched: st.SchedulerName()}
	g.q.insert = st.SQL("INSERT INTO {p}sso_cli_grants (sched_name, code_hash, challenge, login, expires) VALUES (?, ?, ?, ?, {now} + ?)")
	g.q.prune = st.SQL("DELETE FROM {p}sso_cli_grants WHERE sched_name = ? AND expires < {now}")
	g.q.get = st.SQL("SELECT challenge, login FROM {p}sso_cli_grants WHERE sched_name = ? AND code_hash = ? AND expires >= {now}")
	g.q.remove = st.SQL("DELETE FROM {p}sso_cli_grants WHERE sched_name = ? AND code_hash = ?")
	p.mu.Lock()
	p.cli = g
	p.mu.Unlock()
	return nil
}

func codeHash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// put keeps l under code, with the CLI's challenge, and prunes the grants
// that expired.
func (g *cliGrants) put(ctx context.Context, code, challenge string, l auth.SSOLogin) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := g.db.ExecContext(ctx, g.q.prune, g.sched); err != nil {
		return fmt.Errorf("pruning the CLI's sign-ons: %w", err)
	}
	if _, err := g.db.ExecContext(ctx, g.q.insert, g.sched, codeHash(code), challenge, string(b), cliGrantTTL.Nanoseconds()); err != nil {
		return fmt.Errorf("keeping the CLI's sign-on: %w", err)
	}
	return nil
}

// take removes the grant of code and returns it; found is false when no
// live grant has the code, or another call took it first.
func (g *cliGrants) take(ctx context.Context, code string) (challenge string, l auth.SSOLogin, found bool, err error) {
	h := codeHash(code)
	var raw string
	err = g.db.QueryRowContext(ctx, g.q.get, g.sched, h).Scan(&challenge, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", l, false, nil
	}
	if err != nil {
		return "", l, false, fmt.Errorf("reading the CLI's sign-on: %w", err)
	}
	res, err := g.db.ExecContext(ctx, g.q.remove, g.sched, h)
	if err != nil {
		return "", l, false, fmt.Errorf("taking the CLI's sign-on: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", l, false, err // taken by another exchange
	}
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		return "", l, false, fmt.Errorf("reading the CLI's sign-on: %w", err)
	}
	return challenge, l, true, nil
}

// cliFlow is what a CLI's sign-on adds to the flow: the loopback port,
// the CLI's state and its PKCE challenge.
type cliFlow struct{ port, state, challenge string }

// cliState is the alphabet of the CLI's state and challenge: base64url,
// which holds no ".", the flow cookie's separator.
var cliState = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// readCLIFlow reads the CLI's parameters of a login; ok is false when
// there are none, and err names the one that cannot be used.
func readCLIFlow(q url.Values) (f cliFlow, ok bool, err error) {
	if q.Get("cli_port") == "" && q.Get("cli_state") == "" && q.Get("cli_challenge") == "" {
		return f, false, nil
	}
	port, perr := strconv.Atoi(q.Get("cli_port"))
	switch {
	case perr != nil || port < 1 || port > 65535:
		return f, false, fmt.Errorf("cli_port %q is not a port number", q.Get("cli_port"))
	case !cliState.MatchString(q.Get("cli_state")):
		return f, false, errors.New("cli_state must be 16 to 128 characters of base64url")
	case len(q.Get("cli_challenge")) != 43 || !cliState.MatchString(q.Get("cli_challenge")):
		return f, false, errors.New("cli_challenge must be an S256 PKCE challenge (43 characters of base64url)")
	}
	return cliFlow{port: strconv.Itoa(port), state: q.Get("cli_state"), challenge: q.Get("cli_challenge")}, true, nil
}

// finishCLI ends a CLI's sign-on at the callback: it keeps l under a new
// code and sends the browser to the CLI's loopback address with it.
func (p *Provider) finishCLI(w http.ResponseWriter, r *http.Request, f cliFlow, l auth.SSOLogin) {
	p.mu.Lock()
	g := p.cli
	p.mu.Unlock()
	if g == nil {
		p.refuse(w, r, http.StatusBadRequest, "Sign-in from the command line is not enabled on this server", ErrCLIDisabled)
		return
	}
	code := randomString()
	if err := g.put(r.Context(), code, f.challenge, l); err != nil {
		p.refuse(w, r, http.StatusInternalServerError, "The sign-in could not be kept for the command line; the server log has the details", err)
		return
	}
	back := url.URL{Scheme: "http", Host: "127.0.0.1:" + f.port, Path: "/callback",
		RawQuery: url.Values{"code": {code}, "state": {f.state}}.Encode()}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a CLI's one-time code and PKCE verifier for a session.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	g := p.cli
	p.mu.Unlock()
	if g == nil {
		httpjson.WriteError(w, r, p.log, httpjson.Errorf(api.CodeNotFound, "", "sign-in from the command line is not enabled on this server"))
		return
	}
	var in api.SSOCodeExchange
	if err := httpjson.Decode(w, r, 4096, &in); err != nil {
		httpjson.WriteError(w, r, p.log, err)
		return
	}
	switch {
	case in.Code == "":
		httpjson.WriteError(w, r, p.log, httpjson.Errorf(api.CodeInvalidArgument, "code", "is required"))
		return
	case in.Verifier == "":
		httpjson.WriteError(w, r, p.log, httpjson.Errorf(api.CodeInvalidArgument, "verifier", "is required"))
		return
	}
	challenge, l, found, err := g.take(r.Context(), in.Code)
	if err != nil {
		httpjson.WriteError(w, r, p.log, err)
		return
	}
	sum := sha256.Sum256([]byte(in.Verifier))
	if !found || subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) != 1 {
		// A wrong verifier used the code up too: the sign-on starts over.
		httpjson.WriteError(w, r, p.log, httpjson.Errorf(api.CodeUnauthenticated, "code",
			"no sign-on has this code and verifier: it was used, expired (after %s) or started elsewhere; sign in again", cliGrantTTL))
		return
	}
	l.ClientAddr = clientAddr(r)
	session, err := p.sessions.StartSSOSession(r.Context(), l)
	if err != nil {
		httpjson.WriteError(w, r, p.log, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, session)
}
