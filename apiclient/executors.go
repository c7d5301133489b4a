package apiclient

import (
	"context"
	"net/http"

	"github.com/chime-scheduler/chime/api"
)

// The executor protocol (docs/executors.md). Its routes take a token of
// role executor; package executor is the SDK built on these methods.

// RegisterExecutor registers an executor of a group the token serves.
func (c *Client) RegisterExecutor(ctx context.Context, r api.ExecutorRegister) (*api.ExecutorRegistration, error) {
	var out api.ExecutorRegistration
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executors"), body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListExecutors lists the registered executors.
func (c *Client) ListExecutors(ctx context.Context) ([]api.Executor, error) {
	var out []api.Executor
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path("executors")}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ExecutorHeartbeat extends executor id's lease, naming the runs it runs,
// and returns those it must cancel. Once the lease lapsed it fails with
// a conflict (IsCode(err, api.CodeConflict)): the executor must cancel its
// runs and register again.
func (c *Client) ExecutorHeartbeat(ctx context.Context, id string, hb api.ExecutorHeartbeat) (*api.ExecutorHeartbeatReply, error) {
	var out api.ExecutorHeartbeatReply
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executors", id, "heartbeat"), body: hb}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PollExecutor takes executor id's runs and cancel requests, the server
// holding the request up to p.Wait while there is none. Give the client
// an HTTP timeout longer than the wait.
func (c *Client) PollExecutor(ctx context.Context, id string, p api.ExecutorPoll) (*api.ExecutorWork, error) {
	var out api.ExecutorWork
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("executors", id, "poll"), body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AppendExecutorLogs sends log lines of run, while it runs, for its
// execution's live log. A conflict (IsCode(err, api.CodeConflict)) means
// the run is no longer leased to the executor under that token, or it
// ended: the lines were refused.
func (c *Client) AppendExecutorLogs(ctx context.Context, id, run string, l api.ExecutorLogs) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("executors", id, "runs", run, "log"), body: l}, nil)
	return err
}

// ReportExecutorResult reports how run ended, under its token. A conflict
// (IsCode(err, api.CodeConflict)) means the run is no longer leased to
// the executor under that token: the result was refused and changed
// nothing.
func (c *Client) ReportExecutorResult(ctx context.Context, id, run string, r api.ExecutorResult) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path("executors", id, "runs", run, "result"), body: r}, nil)
	return err
}
