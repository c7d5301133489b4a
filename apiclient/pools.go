package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// ListPools returns the concurrency pools, by name, with the slots each
// holds, the firings waiting and the jobs that name it.
func (c *Client) ListPools(ctx context.Context) ([]api.Pool, error) {
	var out []api.Pool
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("pools")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetPool returns one concurrency pool.
func (c *Client) GetPool(ctx context.Context, name string) (*api.Pool, error) {
	var out api.Pool
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("pools", name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutPool creates or replaces a concurrency pool (operator or admin),
// reporting whether it created it, and returns it as stored. A refused
// field is an *api.Error naming it ("limit").
func (c *Client) PutPool(ctx context.Context, p api.Pool) (stored *api.Pool, created bool, err error) {
	var out api.Pool
	resp, err := c.do(ctx, request{method: http.MethodPut, path: path("pools", p.Name), body: p}, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, resp.status == http.StatusCreated, nil
}

// DeletePool deletes a concurrency pool; the error wraps an *api.Error
// with api.CodeConflict while a job names it.
func (c *Client) DeletePool(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("pools", name)}, nil)
	return err
}
