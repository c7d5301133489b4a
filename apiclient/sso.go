package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// ssoTokenPath is where a command-line sign-on exchanges its one-time code
// (server/sso.TokenPath): a route of the sign-on, beside the API.
const ssoTokenPath = "/auth/oidc/token"

// ExchangeSSOCode finishes a single sign-on started from the command line
// (chime login --sso): it exchanges the one-time code the server sent to
// the loopback address, with the PKCE verifier whose challenge started the
// sign-on, for a session. A code serves once.
func (c *Client) ExchangeSSOCode(ctx context.Context, code, verifier string) (*api.Session, error) {
	var out api.Session
	body := api.SSOCodeExchange{Code: code, Verifier: verifier}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: ssoTokenPath, body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
