package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// Options configure a Client. A nil *Options means the defaults.
type Options struct {
	// Token is sent as "Authorization: Bearer <token>": an API token or
	// the token of a login session. Defaults to none, which only the
	// health routes and Login accept.
	Token string
	// HTTPClient sends the requests. Defaults to an http.Client with a
	// one-minute timeout.
	HTTPClient *http.Client
	// UserAgent is the User-Agent header. Defaults to "chime-apiclient".
	UserAgent string
}

// defaultTimeout bounds each request of a Client built without an
// HTTPClient.
const defaultTimeout = time.Minute

// maxErrorBody is how much of an error answer that is not JSON a
// StatusError keeps.
const maxErrorBody = 512

// Client calls a chime server's API. It is safe for concurrent use.
type Client struct {
	base      string // scheme://host[/path], no trailing slash
	token     string
	http      *http.Client
	userAgent string
}

// New returns a client of the server at baseURL, such as
// "http://127.0.0.1:8080" or "https://chime.example.com/scheduler" (a path
// is kept as the prefix of every route).
func New(baseURL string, opts *Options) (*Client, error) {
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil, fmt.Errorf("apiclient: server URL %q: want an http:// or https:// URL, such as http://127.0.0.1:8080", baseURL)
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("apiclient: server URL %q: %w", baseURL, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("apiclient: server URL %q: no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("apiclient: server URL %q: want no query or fragment", baseURL)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	if o.UserAgent == "" {
		o.UserAgent = "chime-apiclient"
	}
	return &Client{
		base:      strings.TrimRight(u.String(), "/"),
		token:     o.Token,
		http:      o.HTTPClient,
		userAgent: o.UserAgent,
	}, nil
}

// WithToken returns a copy of c that authenticates with token, for
// example the one Login returned.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// BaseURL returns the server URL the client was made with, without a
// trailing slash.
func (c *Client) BaseURL() string { return c.base }

// StatusError is an answer with a status other than 2xx whose body is not
// the API's error shape.
type StatusError struct {
	// Method and Path are the request's.
	Method, Path string
	// StatusCode is the HTTP status, and Status its text ("502 Bad Gateway").
	StatusCode int
	Status     string
	// Body holds the first bytes of the body.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Method, e.Path, e.Status)
	if e.Body != "" {
		msg += fmt.Sprintf(" (body: %q)", e.Body)
	}
	return msg
}

// path joins the API prefix and segments, escaping each segment, so that
// names with slashes or spaces address one resource.
func path(segments ...string) string {
	var b strings.Builder
	b.WriteString(api.Version)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// request is one API call.
type request struct {
	method string
	path   string     // from path(), or a root route such as /healthz
	query  url.Values // nil for none
	body   any        // encoded as JSON when not nil
	header http.Header
}

// response is what do hands back of a 2xx answer.
type response struct {
	status int
	header http.Header
}

// do sends req and decodes a 2xx answer's JSON body into out (when out is
// not nil). Other answers become an error wrapping *api.Error, or a
// *StatusError.
func (c *Client) do(ctx context.Context, req request, out any) (*response, error) {
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		raw, err := json.Marshal(req.body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encoding the request: %w", req.method, req.path, err)
		}
		body = bytes.NewReader(raw)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.method, req.path, err)
	}
	for k, vs := range req.header {
		hreq.Header[k] = vs
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", c.userAgent)
	if req.body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, err // *url.Error names the method and URL
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		_ = resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, responseError(req, resp)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("%s %s: decoding the %s answer: %w", req.method, req.path, resp.Status, err)
		}
	}
	return &response{status: resp.StatusCode, header: resp.Header}, nil
}

// responseError reads an error answer: the API's error shape when the body
// holds one, a *StatusError otherwise.
func responseError(req request, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var apiErr api.Error
	if err := json.Unmarshal(raw, &apiErr); err == nil && apiErr.Code != "" {
		return fmt.Errorf("%s %s: %w", req.method, req.path, &apiErr)
	}
	if len(raw) > maxErrorBody {
		raw = raw[:maxErrorBody]
	}
	return &StatusError{
		Method:     req.method,
		Path:       req.path,
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Body:       strings.TrimSpace(string(raw)),
	}
}

// IsCode reports whether err is (or wraps) an *api.Error with code.
func IsCode(err error, code api.ErrorCode) bool {
	var apiErr *api.Error
	return errors.As(err, &apiErr) && apiErr.Code == code
}
