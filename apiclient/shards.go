package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// ShardItems returns the items of the sharded firing whose parent
// execution (any attempt of it) is id: each item's state, node, attempts
// and duration. An execution that is not the parent of a sharded firing
// is an *api.Error not_found.
func (c *Client) ShardItems(ctx context.Context, id string) (*api.ShardItems, error) {
	var out api.ShardItems
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("executions", id, "items")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RerunFailedItems re-runs the failed items of the failed sharded firing
// whose parent execution (any attempt of it) is id, and only those, as
// the parent's next attempt, which it returns. A firing that runs or
// succeeded is an *api.Error conflict.
func (c *Client) RerunFailedItems(ctx context.Context, id string) (*api.Execution, error) {
	var out api.Execution
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executions", id, "rerun-failed")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
