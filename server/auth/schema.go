package auth

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}auth_users and so on.
const component = "auth"

// migrations are the auth tables' history, oldest first. A released
// migration is never edited; changes append a new one.
//
// Every row carries sched_name, first in every primary key, so that
// several schedulers can share one database. Instants are BIGINT Unix
// nanoseconds of Options.Now (NULL for none). Secrets are never stored:
// password_hash is a bcrypt hash, token_hash and secret_hash are the
// hexadecimal SHA-256 of the session token and the API token.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "users, API tokens and sessions",
		Tables: []sqlstore.Table{
			{
				Name: "auth_users",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"name {key} NOT NULL",
					"role VARCHAR(16) NOT NULL",
					"password_hash VARCHAR(100) NOT NULL",
					"created BIGINT NOT NULL",
					"updated BIGINT NOT NULL",
				},
				Primary: "sched_name, name",
			},
			{
				Name: "auth_tokens",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"id {key} NOT NULL",
					"name {key} NOT NULL",
					"role VARCHAR(16) NOT NULL",
					"user_name {key} NOT NULL",
					"secret_hash VARCHAR(64) NOT NULL",
					"created BIGINT NOT NULL",
					"last_used BIGINT",
					"expires BIGINT",
				},
				Primary: "sched_name, id",
				Indexes: []sqlstore.Index{
					{Name: "auth_tokens_secret", Unique: true, Cols: "secret_hash, sched_name"},
					{Name: "auth_tokens_name", Unique: true, Cols: "name, sched_name"},
					{Name: "auth_tokens_user", Cols: "user_name, sched_name"},
				},
			},
			{
				Name: "auth_sessions",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"token_hash VARCHAR(64) NOT NULL",
					"user_name {key} NOT NULL",
					"created BIGINT NOT NULL",
					"expires BIGINT NOT NULL",
					"last_seen BIGINT NOT NULL",
				},
				Primary: "sched_name, token_hash",
				Indexes: []sqlstore.Index{
					{Name: "auth_sessions_user", Cols: "user_name, sched_name"},
					{Name: "auth_sessions_expires", Cols: "expires, sched_name"},
				},
			},
		},
	}, {
		Version:     2,
		Description: "failed logins per user name and client address, shared by every node",
		Tables: []sqlstore.Table{{
			Name: "auth_login_failures",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"kind VARCHAR(8) NOT NULL", // "user" or "address"
				"subject {key} NOT NULL",   // the user name or the client address
				"failures INTEGER NOT NULL",
				"last_failure BIGINT NOT NULL",
			},
			Primary: "sched_name, kind, subject",
			Indexes: []sqlstore.Index{
				{Name: "auth_login_failures_last", Cols: "last_failure, sched_name"},
			},
		}},
	}, {
		// One statement per migration: MySQL commits each ALTER TABLE by
		// itself, so a migration of two could stop halfway.
		Version:     3,
		Description: "the shell capability of users",
		Statements:  []string{"ALTER TABLE {p}auth_users ADD COLUMN shell {bool} NOT NULL DEFAULT FALSE"},
	}, {
		Version:     4,
		Description: "the shell capability of API tokens",
		Statements:  []string{"ALTER TABLE {p}auth_tokens ADD COLUMN shell {bool} NOT NULL DEFAULT FALSE"},
	}, {
		Version:     5,
		Description: "the executor groups a token of role executor serves",
		Statements:  []string{"ALTER TABLE {p}auth_tokens ADD COLUMN executor_groups {json}"},
	}}
}

// queries are the package's statements, rendered for the store's dialect
// and table prefix once per Service. ? are parameters, the first always
// the scheduler name or, in UPDATE statements, the new values.
type queries struct {
	userCount, userGet, userList, userInsert       string
	userLockAdmins, userSetRole, userSetPassword   string
	userSetShell, userDelete                       string
	sessionInsert, sessionGet, sessionTouch        string
	sessionDelete, sessionDeleteUser, sessionPrune string
	tokenInsert, tokenGet, tokenList, tokenTouch   string
	tokenName, tokenDelete, tokenDeleteUser        string
	failureGet, failureAdd, failureInsert          string
	failureClear, failurePrune                     string
}

// renderQueries renders every statement with render (the store's SQL).
func renderQueries(render func(string) string) queries {
	return queries{
		userCount: render(`SELECT COUNT(*) FROM {p}auth_users WHERE sched_name = ?`),
		userGet:   render(`SELECT role, password_hash, shell FROM {p}auth_users WHERE sched_name = ? AND name = ?`),
		userList:  render(`SELECT name, role, shell, created FROM {p}auth_users WHERE sched_name = ? ORDER BY name`),
		userInsert: render(`INSERT INTO {p}auth_users (sched_name, name, role, password_hash, created, updated, shell)
			VALUES (?, ?, ?, ?, ?, ?, ?)`),
		// userLockAdmins locks the rows of every admin and of one user, in
		// primary key order, so that the changes that could remove the last
		// admin run one at a time and each sees the outcome of the one
		// before: PostgreSQL re-checks the condition on a row it waited for,
		// and InnoDB's locking reads read the latest committed version.
		userLockAdmins: render(`SELECT name, role, shell, created FROM {p}auth_users
			WHERE sched_name = ? AND (role = 'admin' OR name = ?) ORDER BY name {update}`),
		userSetRole:     render(`UPDATE {p}auth_users SET role = ?, updated = ? WHERE sched_name = ? AND name = ?`),
		userSetPassword: render(`UPDATE {p}auth_users SET password_hash = ?, updated = ? WHERE sched_name = ? AND name = ?`),
		userSetShell:    render(`UPDATE {p}auth_users SET shell = ?, updated = ? WHERE sched_name = ? AND name = ?`),
		userDelete:      render(`DELETE FROM {p}auth_users WHERE sched_name = ? AND name = ?`),

		sessionInsert: render(`INSERT INTO {p}auth_sessions (sched_name, token_hash, user_name, created, expires, last_seen)
			VALUES (?, ?, ?, ?, ?, ?)`),
		// sessionGet joins the user, so that a change of role or shell
		// capability applies to the user's sessions at once.
		sessionGet: render(`SELECT s.user_name, u.role, u.shell, s.created, s.expires, s.last_seen
			FROM {p}auth_sessions AS s
			JOIN {p}auth_users AS u ON u.sched_name = s.sched_name AND u.name = s.user_name
			WHERE s.sched_name = ? AND s.token_hash = ?`),
		sessionTouch:      render(`UPDATE {p}auth_sessions SET last_seen = ?, expires = ? WHERE sched_name = ? AND token_hash = ?`),
		sessionDelete:     render(`DELETE FROM {p}auth_sessions WHERE sched_name = ? AND token_hash = ?`),
		sessionDeleteUser: render(`DELETE FROM {p}auth_sessions WHERE sched_name = ? AND user_name = ?`),
		sessionPrune:      render(`DELETE FROM {p}auth_sessions WHERE sched_name = ? AND expires <= ?`),

		tokenInsert: render(`INSERT INTO {p}auth_tokens
			(sched_name, id, name, role, user_name, secret_hash, created, last_used, expires, shell, executor_groups)
			VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`),
		// tokenGet joins the owner, whose role and shell capability bound
		// the token's.
		tokenGet: render(`SELECT t.id, t.role, t.shell, t.user_name, u.role, u.shell, t.expires, t.last_used, t.executor_groups
			FROM {p}auth_tokens AS t
			JOIN {p}auth_users AS u ON u.sched_name = t.sched_name AND u.name = t.user_name
			WHERE t.sched_name = ? AND t.secret_hash = ?`),
		tokenList: render(`SELECT id, name, role, shell, user_name, created, last_used, expires, executor_groups
			FROM {p}auth_tokens WHERE sched_name = ? ORDER BY name`),
		tokenTouch:      render(`UPDATE {p}auth_tokens SET last_used = ? WHERE sched_name = ? AND id = ?`),
		tokenName:       render(`SELECT name FROM {p}auth_tokens WHERE sched_name = ? AND id = ?`),
		tokenDelete:     render(`DELETE FROM {p}auth_tokens WHERE sched_name = ? AND id = ?`),
		tokenDeleteUser: render(`DELETE FROM {p}auth_tokens WHERE sched_name = ? AND user_name = ?`),

		failureGet: render(`SELECT failures, last_failure FROM {p}auth_login_failures
			WHERE sched_name = ? AND kind = ? AND subject = ?`),
		// failureAdd counts one more failure, or starts again from one when
		// the last is older than the window (the first parameter).
		failureAdd: render(`UPDATE {p}auth_login_failures
			SET failures = CASE WHEN last_failure < ? THEN 1 ELSE failures + 1 END, last_failure = ?
			WHERE sched_name = ? AND kind = ? AND subject = ?`),
		failureInsert: render(`INSERT INTO {p}auth_login_failures (sched_name, kind, subject, failures, last_failure)
			VALUES (?, ?, ?, 1, ?)`),
		failureClear: render(`DELETE FROM {p}auth_login_failures WHERE sched_name = ? AND kind = ? AND subject = ?`),
		failurePrune: render(`DELETE FROM {p}auth_login_failures WHERE sched_name = ? AND last_failure < ?`),
	}
}
