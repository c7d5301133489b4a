// Package httpjob is chime's built-in "http" job type: each firing sends
// one HTTP request and records the response.
//
// A Spec describes the request; in a job's JSON it looks like this:
//
//	{
//	  "method": "POST",
//	  "url": "https://deploy.example.com/hooks/{{.JobName}}?region={{urlquery .Params.region}}",
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
// Runner.Run sends the request and writes the status line and the body,
// cut at max_response_bytes, to the writer it is given, normally a
// jobs.Capture the server keeps with the execution. A status outside
// expect_status is a *StatusError; running out of time is an error wrapping
// context.DeadlineExceeded. Redirects are followed as the Runner's
// http.Client follows them (the default client follows up to 10).
package httpjob
