package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/chime-scheduler/chime/api"
)

// ListCalendars returns every calendar with the triggers that use it.
func (c *Client) ListCalendars(ctx context.Context) ([]api.Calendar, error) {
	var out []api.Calendar
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("calendars")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetCalendar returns one calendar.
func (c *Client) GetCalendar(ctx context.Context, name string) (*api.Calendar, error) {
	var out api.Calendar
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("calendars", name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutCalendar creates or replaces the calendar named cal.Name, and reports
// whether it created it.
func (c *Client) PutCalendar(ctx context.Context, cal api.Calendar) (created bool, err error) {
	resp, err := c.do(ctx, request{method: http.MethodPut, path: path("calendars", cal.Name), body: cal}, nil)
	if err != nil {
		return false, err
	}
	return resp.status == http.StatusCreated, nil
}

// DeleteCalendar deletes a calendar; the error wraps an *api.Error with
// api.CodeConflict while a trigger uses it.
func (c *Client) DeleteCalendar(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("calendars", name)}, nil)
	return err
}

// Nodes returns the cluster's nodes, alive or not, with each node's
// version, worker count and running executions.
func (c *Client) Nodes(ctx context.Context) ([]api.Node, error) {
	var out []api.Node
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("nodes")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ExplainCron asks the server to explain a cron expression in a time zone
// ("" for UTC) and list its next count fire times (0: the server's
// default).
func (c *Client) ExplainCron(ctx context.Context, expression, timeZone string, count int) (*api.CronExplanation, error) {
	v := url.Values{"expression": {expression}}
	setNonEmpty(v, "time_zone", timeZone)
	if count > 0 {
		v.Set("count", strconv.Itoa(count))
	}
	var out api.CronExplanation
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("cron", "explain"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health reports an error unless the server process answers /healthz.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/healthz"}, nil)
	return err
}

// Ready reports an error unless the node answering holds its lease and
// reaches the database (/readyz).
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/readyz"}, nil)
	return err
}
