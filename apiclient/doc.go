// Package apiclient is a Go client for chime server's REST API, the one the
// chime command-line tool uses. It has one method per route of the API
// (docs/api.md), taking and returning the wire types of package api.
//
//	c, err := apiclient.New("http://127.0.0.1:8080", &apiclient.Options{Token: os.Getenv("CHIME_TOKEN")})
//	job, err := c.GetJob(ctx, "reports", "nightly")
//
// # Errors
//
// An answer with a status other than 2xx is an error. When its body is the
// API's error shape, the error wraps an [*api.Error]: callers branch on its
// Code (and read Field for bad input) with errors.As,
//
//	var apiErr *api.Error
//	if errors.As(err, &apiErr) && apiErr.Code == api.CodeVersionMismatch { … }
//
// Any other body (a proxy's HTML page, say) gives a [*StatusError] with the
// status and the first bytes of the body. Transport failures are returned as
// the http.Client reports them.
//
// # Concurrency and versions
//
// Jobs carry a version that increases with every change. [Client.GetJob]
// returns it in Job.Version, and [Client.PutJob] sends it back as If-Match,
// so that an update made from an outdated copy is refused with
// api.CodeVersionMismatch instead of silently overwriting someone else's edit.
//
// # Paging
//
// List methods return one page and the cursor of the next; [Client.Jobs],
// [Client.Executions] and [Client.Audit] iterate over every page.
package apiclient
