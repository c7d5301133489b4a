package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// Maintenance returns the maintenance window in force; Active is false
// when none is.
func (c *Client) Maintenance(ctx context.Context) (*api.Maintenance, error) {
	var out api.Maintenance
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("maintenance")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartMaintenance pauses every job, or the jobs of req.Group, until
// EndMaintenance (operator or admin). It fails with an *api.Error whose
// Field names a refused field, or Code conflict while a window is on.
func (c *Client) StartMaintenance(ctx context.Context, req api.MaintenanceRequest) (*api.Maintenance, error) {
	var out api.Maintenance
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("maintenance"), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndMaintenance ends the maintenance window in force (operator or
// admin): its jobs resume, except those paused by hand.
func (c *Client) EndMaintenance(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("maintenance")}, nil)
	return err
}
