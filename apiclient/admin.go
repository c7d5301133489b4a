package apiclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/chime-scheduler/chime/api"
)

// Login exchanges a user name and password for a session. Use the
// session's Token with WithToken (or as CHIME_TOKEN for the CLI).
func (c *Client) Login(ctx context.Context, username, password string) (*api.Session, error) {
	var out api.Session
	body := api.LoginRequest{Username: username, Password: password}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("auth", "login"), body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Logout ends the session whose token the client sends.
func (c *Client) Logout(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("auth", "logout")}, nil)
	return err
}

// Me returns the user (or token) the client authenticates as, with its
// role.
func (c *Client) Me(ctx context.Context) (*api.User, error) {
	var out api.User
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("auth", "me")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AuthMethods returns how users may sign in: with a password, and with
// the single sign-on provider it names when one is configured. It needs
// no credentials.
func (c *Client) AuthMethods(ctx context.Context) (*api.AuthMethods, error) {
	var out api.AuthMethods
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("auth", "methods")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListUsers returns the local users (admin only).
func (c *Client) ListUsers(ctx context.Context) ([]api.User, error) {
	var out []api.User
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("users")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateUser creates a local user with u.Password (admin only).
func (c *Client) CreateUser(ctx context.Context, u api.User) (*api.User, error) {
	var out api.User
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("users"), body: u}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateUser changes the role, password or shell capability of the user
// named u.Name (admin only); the fields left empty (Shell nil) keep their
// values.
func (c *Client) UpdateUser(ctx context.Context, u api.User) (*api.User, error) {
	var out api.User
	if _, err := c.do(ctx, request{method: http.MethodPut, path: path("users", u.Name), body: u}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteUser deletes a user (admin only).
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("users", name)}, nil)
	return err
}

// ListTokens returns the API tokens, without their secrets (admin only).
func (c *Client) ListTokens(ctx context.Context) ([]api.Token, error) {
	var out []api.Token
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("tokens")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateToken creates an API token (admin only). The returned Token's
// Secret is shown this once.
func (c *Client) CreateToken(ctx context.Context, t api.Token) (*api.Token, error) {
	var out api.Token
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("tokens"), body: t}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteToken revokes an API token (admin only).
func (c *Client) DeleteToken(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("tokens", id)}, nil)
	return err
}

// AlertSettings returns the global alert settings, secrets masked (admin
// only).
func (c *Client) AlertSettings(ctx context.Context) (*api.AlertSettings, error) {
	var out api.AlertSettings
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("alerts")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutAlertSettings replaces the global alert settings (admin only).
func (c *Client) PutAlertSettings(ctx context.Context, s api.AlertSettings) error {
	_, err := c.do(ctx, request{method: http.MethodPut, path: path("alerts"), body: s}, nil)
	return err
}

// TestAlert sends a test alert to the default recipients (admin only).
func (c *Client) TestAlert(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("alerts", "test")}, nil)
	return err
}

// ListAudit returns one page of the audit log, newest first (admin only).
func (c *Client) ListAudit(ctx context.Context, q api.AuditQuery) (*api.AuditList, error) {
	v := url.Values{}
	setNonEmpty(v, "actor", q.Actor)
	setNonEmpty(v, "target", q.Target)
	setNonEmpty(v, "cursor", q.Cursor)
	setPositive(v, "limit", q.Limit)
	var out api.AuditList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("audit"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Audit iterates over every audit entry q selects, newest first, page by
// page from q.Cursor. Iteration stops at the first error, which it yields.
func (c *Client) Audit(ctx context.Context, q api.AuditQuery) iter.Seq2[api.AuditEntry, error] {
	return pages(q.Cursor, func(cursor string) ([]api.AuditEntry, string, error) {
		q.Cursor = cursor
		page, err := c.ListAudit(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return page.Entries, page.Next, nil
	})
}
