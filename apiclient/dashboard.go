package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// Activity returns what every job of the cluster did in a window, bucket
// by bucket; zero fields of q take the server's defaults (the last 6
// hours, 1-minute buckets).
func (c *Client) Activity(ctx context.Context, q api.ActivityQuery) (*api.Activity, error) {
	v := url.Values{}
	if q.Since != nil {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if q.Until != nil {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	setNonEmpty(v, "bucket", q.Bucket)
	var out api.Activity
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("activity"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpcomingFirings returns the next count firings of every job, or of the
// jobs of one group when group is not empty, earliest first (count 0: the
// server's default, 20).
func (c *Client) UpcomingFirings(ctx context.Context, group string, count int) ([]api.UpcomingFiring, error) {
	v := url.Values{}
	setNonEmpty(v, "group", group)
	setPositive(v, "count", count)
	var out []api.UpcomingFiring
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("upcoming"), query: v}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ImportCalendar creates or replaces the holiday calendar name from the
// events of an iCalendar file (req.ICS); with req.DryRun it only answers
// what the calendar would hold. A malformed file is refused with an
// *api.Error naming the field "ics" and, in its message, the line.
func (c *Client) ImportCalendar(ctx context.Context, name string, req api.CalendarImport) (*api.CalendarImportResult, error) {
	var out api.CalendarImportResult
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("calendars", name, "import"), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
