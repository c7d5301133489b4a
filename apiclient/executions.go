package apiclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// ListExecutions returns one page of the executions q selects, newest
// first, and in ExecutionList.Next the cursor of the next page.
func (c *Client) ListExecutions(ctx context.Context, q api.ExecutionQuery) (*api.ExecutionList, error) {
	v := url.Values{}
	if q.JobGroup != "" || q.JobName != "" {
		v.Set("job", q.JobGroup+"/"+q.JobName)
	}
	for _, o := range q.Outcomes {
		v.Add("outcome", o)
	}
	if q.From != nil {
		v.Set("from", q.From.Format(time.RFC3339Nano))
	}
	if q.To != nil {
		v.Set("to", q.To.Format(time.RFC3339Nano))
	}
	setNonEmpty(v, "node", q.NodeID)
	setNonEmpty(v, "cursor", q.Cursor)
	setPositive(v, "limit", q.Limit)
	var out api.ExecutionList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("executions"), query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Executions iterates over every execution q selects, newest first, page
// by page from q.Cursor; q.Limit sets the page size. Iteration stops at
// the first error, which it yields.
func (c *Client) Executions(ctx context.Context, q api.ExecutionQuery) iter.Seq2[api.Execution, error] {
	return pages(q.Cursor, func(cursor string) ([]api.Execution, string, error) {
		q.Cursor = cursor
		page, err := c.ListExecutions(ctx, q)
		if err != nil {
			return nil, "", err
		}
		return page.Executions, page.Next, nil
	})
}

// GetExecution returns one execution with its output and log lines.
func (c *Client) GetExecution(ctx context.Context, id string) (*api.Execution, error) {
	var out api.Execution
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("executions", id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Attempts returns every attempt of the firing an execution belongs to,
// first attempt first.
func (c *Client) Attempts(ctx context.Context, id string) ([]api.Execution, error) {
	var out []api.Execution
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("executions", id, "attempts")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RetryExecution runs a finished execution's job again as a new attempt.
func (c *Client) RetryExecution(ctx context.Context, id string) (*api.Accepted, error) {
	var out api.Accepted
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executions", id, "retry")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// KillExecution asks for a running execution to be killed, on whichever
// node runs it, and returns it as it stands: still running, with KilledBy
// set. The node running it cancels the job within a second, and the
// execution ends killed. An unknown execution is an *api.Error not_found;
// one that already ended, conflict.
func (c *Client) KillExecution(ctx context.Context, id string) (*api.Execution, error) {
	var out api.Execution
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executions", id, "kill")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
