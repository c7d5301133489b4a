package apiclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/chime-scheduler/chime/api"
)

// ListJobVersions returns one page of a job's versions, newest first,
// without their specs, and in JobVersionList.Next the cursor of the next
// page ("" on the last).
func (c *Client) ListJobVersions(ctx context.Context, group, name string, q api.JobVersionQuery) (*api.JobVersionList, error) {
	v := url.Values{}
	setNonEmpty(v, "cursor", q.Cursor)
	setPositive(v, "limit", q.Limit)
	var out api.JobVersionList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs", group, name, "versions"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobVersions iterates over every version of a job, newest first, page by
// page. Iteration stops at the first error, which it yields.
func (c *Client) JobVersions(ctx context.Context, group, name string) iter.Seq2[api.JobVersion, error] {
	return pages("", func(cursor string) ([]api.JobVersion, string, error) {
		page, err := c.ListJobVersions(ctx, group, name, api.JobVersionQuery{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return page.Versions, page.Next, nil
	})
}

// GetJobVersion returns version n of a job with its spec.
func (c *Client) GetJobVersion(ctx context.Context, group, name string, n int64) (*api.JobVersion, error) {
	var out api.JobVersion
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("jobs", group, name, "versions", strconv.FormatInt(n, 10))}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DiffJobVersions returns the unified diff of a job's specs from version
// from to version to; from 0 compares to with the version before it.
func (c *Client) DiffJobVersions(ctx context.Context, group, name string, from, to int64) (*api.JobVersionDiff, error) {
	v := url.Values{}
	if from > 0 {
		v.Set("from", strconv.FormatInt(from, 10))
	}
	var out api.JobVersionDiff
	req := request{method: http.MethodGet, path: path("jobs", group, name, "versions", strconv.FormatInt(to, 10), "diff"), query: v}
	if _, err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RollbackJob writes version n's spec as the job and returns the job as
// stored. With ifMatch set, the server refuses (version_mismatch) unless
// the job is at that version.
func (c *Client) RollbackJob(ctx context.Context, group, name string, n, ifMatch int64) (*api.Job, error) {
	req := request{method: http.MethodPost, path: path("jobs", group, name, "versions", strconv.FormatInt(n, 10), "rollback")}
	if ifMatch != 0 {
		req.header = http.Header{"If-Match": {formatETag(ifMatch)}}
	}
	var out api.Job
	resp, err := c.do(ctx, req, &out)
	if err != nil {
		return nil, err
	}
	if out.Version == 0 {
		out.Version = parseETag(resp.header.Get("ETag"))
	}
	return &out, nil
}
