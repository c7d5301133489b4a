package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// ListSecrets returns the secrets by name, with their key IDs, times and
// the jobs that use them, never their values (admin only).
func (c *Client) ListSecrets(ctx context.Context) ([]api.Secret, error) {
	var out []api.Secret
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("secrets")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetSecret returns one secret without its value (admin only).
func (c *Client) GetSecret(ctx context.Context, name string) (*api.Secret, error) {
	var out api.Secret
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("secrets", name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutSecret sets the value of the secret name, creating it or replacing
// its value, and reports whether it created it (admin only). The server
// refuses it when it has no secret key. The returned Secret has no value.
func (c *Client) PutSecret(ctx context.Context, name, value string) (*api.Secret, bool, error) {
	var out api.Secret
	resp, err := c.do(ctx, request{method: http.MethodPut, path: path("secrets", name), body: api.SecretValue{Value: value}}, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, resp.status == http.StatusCreated, nil
}

// DeleteSecret deletes a secret (admin only); the error wraps an
// *api.Error with api.CodeConflict while a job refers to it.
func (c *Client) DeleteSecret(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("secrets", name)}, nil)
	return err
}
