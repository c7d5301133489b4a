package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// ListJobs returns one page of the jobs q selects, and in JobList.Next the
// cursor of the next page ("" on the last).
func (c *Client) ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error) {
	v := url.Values{}
	setNonEmpty(v, "group", q.Group)
	setNonEmpty(v, "q", q.Text)
	setNonEmpty(v, "state", q.State)
	if q.Failing {
		v.Set("failing", "true")
	}
	setNonEmpty(v, "cursor", q.Cursor)
	setPositive(v, "limit", q.Limit)
	var out api.JobList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Jobs iterates over every job q selects, page by page from q.Cursor;
// q.Limit sets the page size. Iteration stops at the first error, which
// it yields.
func (c *Client) Jobs(ctx context.Context, q api.JobQuery) iter.Seq2[api.Job, error] {
	return pages(q.Cursor, func(cursor string) ([]api.Job, string, error) {
		q.Cursor = cursor
		page, err := c.ListJobs(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return page.Jobs, page.Next, nil
	})
}

// GetJob returns a job with its triggers and status. Job.Version holds the
// version to pass to PutJob as ifMatch.
func (c *Client) GetJob(ctx context.Context, group, name string) (*api.Job, error) {
	var out api.Job
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs", group, name)}, &out)
	if err != nil {
		return nil, err
	}
	if out.Version == 0 {
		out.Version = parseETag(resp.header.Get("ETag"))
	}
	return &out, nil
}

// CreateJob creates a job; the error wraps an *api.Error with
// api.CodeConflict when a job with its key exists.
func (c *Client) CreateJob(ctx context.Context, job api.Job) (*api.Job, error) {
	var out api.Job
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs"), body: job}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateJobs creates new jobs in one request (POST /api/v1/jobs/batch),
// all of them or, when the server refuses any, none: the error wraps an
// *api.Error whose field names the job ("jobs[3].type"), with
// api.CodeConflict when a job's or a trigger's key is taken. One request
// takes at most api.MaxJobBatch jobs.
func (c *Client) CreateJobs(ctx context.Context, jobs []api.Job) (*api.JobBatchResult, error) {
	var out api.JobBatchResult
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs", "batch"), body: api.JobBatch{Jobs: jobs}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutJob creates or replaces the job with job's group and name, and
// reports whether it created it. ifMatch, when not 0, is the version the
// change was made from: the server refuses the change with
// api.CodeVersionMismatch unless it is the job's current version. 0 means
// no precondition.
//
// job is the whole job: PutJob sends every field, an empty one as null,
// so that an empty field clears the stored value (Paused false resumes
// the job, nil Triggers removes its triggers). A PUT body that leaves a
// field out keeps the stored value instead (docs/api.md); a Go value
// cannot leave a field out, so read the job with GetJob and change what
// you mean to change.
func (c *Client) PutJob(ctx context.Context, job api.Job, ifMatch int64) (saved *api.Job, created bool, err error) {
	body, err := wholeJob(job)
	if err != nil {
		return nil, false, err
	}
	req := request{method: http.MethodPut, path: path("jobs", job.Group, job.Name), body: body}
	if ifMatch != 0 {
		req.header = http.Header{"If-Match": {formatETag(ifMatch)}}
	}
	var out api.Job
	resp, err := c.do(ctx, req, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, resp.status == http.StatusCreated, nil
}

// wholeJob is job's JSON object with every field present: those that
// encode as nothing are null.
func wholeJob(job api.Job) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("apiclient: encoding job %s/%s: %w", job.Group, job.Name, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("apiclient: encoding job %s/%s: %w", job.Group, job.Name, err)
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[api.Job]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if _, ok := fields[name]; !ok && name != "" && name != "-" {
			fields[name] = json.RawMessage("null")
		}
	}
	return fields, nil
}

// DeleteJob deletes a job and its triggers.
func (c *Client) DeleteJob(ctx context.Context, group, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: path("jobs", group, name)}, nil)
	return err
}

// PauseJob pauses every trigger of a job.
func (c *Client) PauseJob(ctx context.Context, group, name string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs", group, name, "pause")}, nil)
	return err
}

// ResumeJob resumes every trigger of a job.
func (c *Client) ResumeJob(ctx context.Context, group, name string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs", group, name, "resume")}, nil)
	return err
}

// RunJob runs a job now, with req.Params merged over its data.
func (c *Client) RunJob(ctx context.Context, group, name string, req api.RunRequest) (*api.Accepted, error) {
	var out api.Accepted
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs", group, name, "run"), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Backfill runs a job once for each fire time of its triggers in
// [req.From, req.To).
func (c *Client) Backfill(ctx context.Context, group, name string, req api.BackfillRequest) (*api.Accepted, error) {
	var out api.Accepted
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("jobs", group, name, "backfill"), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Upcoming returns a job's next count fire times across its triggers
// (count 0: the server's default).
func (c *Client) Upcoming(ctx context.Context, group, name string, count int) ([]api.FireTime, error) {
	v := url.Values{}
	setPositive(v, "count", count)
	var out []api.FireTime
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs", group, name, "upcoming"), query: v}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Explain says why a job did or did not run at an instant.
func (c *Client) Explain(ctx context.Context, group, name string, at time.Time) (*api.Explanation, error) {
	v := url.Values{}
	if !at.IsZero() {
		v.Set("at", at.Format(time.RFC3339Nano))
	}
	var out api.Explanation
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs", group, name, "explain"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// formatETag renders a job version as an entity tag.
func formatETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// parseETag reads a job version from an entity tag; 0 when it holds none.
func parseETag(etag string) int64 {
	etag = strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	v, err := strconv.ParseInt(etag, 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// setNonEmpty sets key to value unless value is empty.
func setNonEmpty(v url.Values, key, value string) {
	if value != "" {
		v.Set(key, value)
	}
}

// setPositive sets key to n when n is positive.
func setPositive(v url.Values, key string, n int) {
	if n > 0 {
		v.Set(key, strconv.Itoa(n))
	}
}

// pages iterates over the items of successive pages, starting at cursor,
// until a page has no next cursor or fetching one fails.
func pages[T any](cursor string, fetch func(cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if next == cursor {
				var zero T
				yield(zero, fmt.Errorf("apiclient: the server returned cursor %q for its own page; stopping", next))
				return
			}
			cursor = next
		}
	}
}
