package httpjob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/egress"
)

// Runner sends the requests of "http" jobs. Its zero value is ready to use,
// and it is safe for concurrent use. Its fields must not change once it
// has run.
type Runner struct {
	// Client sends the requests. Redirects are followed as it decides.
	// Defaults to http.DefaultClient, which follows up to 10 redirects
	// and reports the last response; it keeps custom headers on a redirect
	// to the same domain and drops sensitive ones such as Authorization
	// when the domain changes.
	Client *http.Client
	// Egress, when set, decides which hosts and addresses requests may
	// reach, redirects included: requests go through Egress.Client of
	// Client, whose transport must then be nil or an *http.Transport, and
	// use no proxy. A refused request fails with an error wrapping an
	// *egress.RefusedError. Defaults to nil: requests may reach any
	// address, the scheduler's own host and network included.
	Egress *egress.Policy

	once      sync.Once
	client    *http.Client
	clientErr error
}

// httpClient returns the client requests go through.
func (r *Runner) httpClient() (*http.Client, error) {
	r.once.Do(func() {
		r.client = r.Client
		if r.client == nil {
			r.client = http.DefaultClient
		}
		if r.Egress != nil {
			r.client, r.clientErr = r.Egress.Client(r.client)
			if r.clientErr != nil {
				r.clientErr = fmt.Errorf("httpjob: Runner.Egress: %w", r.clientErr)
			}
		}
	})
	return r.client, r.clientErr
}

// Result describes the response to one request.
type Result struct {
	// Status is the response's status code.
	Status int
	// Duration is how long the exchange took, up to the last body byte
	// read.
	Duration time.Duration
	// BytesRead counts the body bytes read and written out.
	BytesRead int64
	// Truncated is set when the body was longer than the spec's
	// MaxResponseBytes and the rest was not read.
	Truncated bool
}

// StatusError is the error Run returns for a response whose status the
// spec does not expect.
type StatusError struct {
	// Got is the response's status code.
	Got int
	// Want lists the expected codes; empty means any 2xx.
	Want []int
}

// Error describes the unexpected status.
func (e *StatusError) Error() string {
	want := "2xx"
	if len(e.Want) > 0 {
		codes := make([]string, len(e.Want))
		for i, c := range e.Want {
			codes[i] = strconv.Itoa(c)
		}
		want = strings.Join(codes, " or ")
	}
	return fmt.Sprintf("httpjob: unexpected status %d %s, want %s", e.Got, http.StatusText(e.Got), want)
}

// Run sends spec's request, with its templates expanded over v, and writes
// the response to out: the status line ("HTTP/1.1 200 OK") and then the
// body, up to spec.MaxResponseBytes. Pass a *jobs.Capture as out to bound
// what is kept further; a nil out discards the response.
//
// Run returns a *jobs.FieldError when spec is invalid or a template fails
// to expand (nothing is sent then), a *StatusError when the response's
// status is not expected, an error wrapping an *egress.RefusedError when
// r.Egress refuses the request's host, an address it resolves to or a
// redirect, and an error wrapping context.DeadlineExceeded when
// spec.Timeout passes first, or the context's error when ctx ends first.
// The Result is non-nil whenever a response arrived, even with an
// error.
func (r *Runner) Run(ctx context.Context, spec Spec, v jobs.Vars, out io.Writer) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	if out == nil {
		out = io.Discard
	}
	reqCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	req, err := spec.request(reqCtx, v)
	if err != nil {
		return nil, err
	}
	client, err := r.httpClient()
	if err != nil {
		return nil, err
	}

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if refused, ok := errors.AsType[*egress.RefusedError](err); ok {
			// Said without the *url.Error's URL, whose query may hold a
			// secret.
			if refused.Host != req.URL.Hostname() {
				return nil, fmt.Errorf("httpjob: following a redirect: %w", refused)
			}
			return nil, fmt.Errorf("httpjob: %w", refused)
		}
		return nil, stopped(ctx, reqCtx, spec.Timeout, err)
	}
	defer resp.Body.Close()
	res := &Result{Status: resp.StatusCode}
	if _, err := fmt.Fprintf(out, "%s %s\n", resp.Proto, resp.Status); err != nil {
		return res, fmt.Errorf("httpjob: writing the response: %w", err)
	}
	res.BytesRead, res.Truncated, err = copyBody(out, resp.Body, int64(spec.MaxResponseBytes))
	res.Duration = time.Since(start)
	if err != nil {
		return res, stopped(ctx, reqCtx, spec.Timeout, err)
	}
	if !expected(resp.StatusCode, spec.ExpectStatus) {
		return res, &StatusError{Got: resp.StatusCode, Want: spec.ExpectStatus}
	}
	return res, nil
}

// copyBody copies up to limit bytes of body to out and reports whether
// more followed.
func copyBody(out io.Writer, body io.Reader, limit int64) (n int64, truncated bool, err error) {
	n, err = io.Copy(out, io.LimitReader(body, limit))
	if err != nil || n < limit {
		return n, false, err
	}
	// Read one byte more to tell a body of exactly limit bytes from a
	// longer one.
	var probe [1]byte
	m, err := io.ReadFull(body, probe[:])
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, m > 0, err
}

// expected reports whether status is one of want, or a 2xx when want is
// empty.
func expected(status int, want []int) bool {
	if len(want) == 0 {
		return status >= 200 && status <= 299
	}
	return slices.Contains(want, status)
}

// stopped wraps err, from the exchange under reqCtx (a child of ctx with
// the spec's timeout), saying whether the timeout or ctx ended it. The
// result wraps the context's error either way, so that errors.Is finds
// context.DeadlineExceeded or context.Canceled, and the cancellation
// cause of ctx when it has one.
func stopped(ctx, reqCtx context.Context, timeout time.Duration, err error) error {
	var base error
	var why string
	switch {
	case ctx.Err() != nil:
		base, why = ctx.Err(), "request stopped"
	case reqCtx.Err() != nil:
		base, why = reqCtx.Err(), "no complete response within "+timeout.String()
	default:
		return fmt.Errorf("httpjob: %w", err)
	}
	if !errors.Is(err, base) {
		err = fmt.Errorf("%w (%w)", base, err)
	}
	//nolint:errorlint // identity: is the cause another value than base itself?
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != base && !errors.Is(err, cause) {
		return fmt.Errorf("httpjob: %s (%w): %w", why, cause, err)
	}
	return fmt.Errorf("httpjob: %s: %w", why, err)
}
