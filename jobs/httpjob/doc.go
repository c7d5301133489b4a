// Package httpjob is chime's built-in "http" job type: each firing sends
// one HTTP request and records the response.
//
// A Spec describes the request; in a job's JSON it looks like this:
//
//	{
//	  "method": "POST",
//	  "url": "https://deploy.example.com/hooks/{{.JobName}}?region={{.Params.region}}",
//	  "headers": {
//	    "Authorization": "Bearer {{.Params.token}}",
//	    "Content-Type": "application/json"
//	  },
//	  "body": "{\"execution\": {{json .ExecutionID}}, \"scheduled\": {{json .ScheduledTime}}}",
//	  "timeout": "30s",
//	  "expect_status": [200, 202],
//	  "max_response_bytes": 65536
//	}
//
// Only "url" is required. "method" defaults to GET, "timeout" (a Go
// duration string) to 30s, "expect_status" to any 2xx and
// "max_response_bytes" to 64 KiB. Unknown fields are refused. The URL,
// header values and body are templates over the firing's jobs.Vars (see
// package jobs for the variables and functions); they are expanded when the
// job fires, and a reference to a parameter the job does not have fails
// that firing rather than sending a request with a hole in it.
//
// An item of a sharded firing sends the headers Chime-Shard-Index (from
// 0) and Chime-Shard-Total, unless the spec sets them itself.
//
// In the URL, each value is escaped for the part of the URL it lands in
// (see jobs.ExpandURL): a path segment as url.PathEscape does ("a/b c"
// becomes "a%2Fb%20c"), a query value as url.QueryEscape does ("manual
// check" becomes "manual+check"). A value at the start, before the path,
// may be a whole URL or a host and is only cleaned of characters never
// valid in a URL. {{urlquery …}} is not escaped twice, and {{raw …}}
// inserts its argument as it is, such as a path with its slashes. The
// expanded URL must parse as an absolute http or https URL with a host,
// with no space or control character in it; otherwise the firing fails
// with a *jobs.FieldError for "http.url" naming the problem, and nothing
// is sent.
//
// Runner.Run sends the request and writes the status line and the body,
// cut at max_response_bytes, to the writer it is given, normally a
// jobs.Capture the server keeps with the execution. A status outside
// expect_status is a *StatusError; running out of time is an error wrapping
// context.DeadlineExceeded. Redirects are followed as the Runner's
// http.Client follows them (the default client follows up to 10).
//
// # Egress
//
// A Runner's requests may reach any address unless Runner.Egress holds an
// egress.Policy: then the host of every request and redirect, and the
// address each connection is made to, are checked against it, so that a
// job cannot be aimed at the scheduler's own host, its private network or
// a cloud metadata service. chime server always sets one, refusing
// loopback, link-local and private addresses unless they are allowed.
package httpjob
