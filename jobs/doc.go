// Package jobs holds what chime's built-in job types share: the fire-time
// variables a job's spec may refer to (Vars), template expansion over them
// (Expand), a bounded output buffer (Capture), the error that names a bad
// spec field (FieldError) and the strict JSON decoding their specs use
// (DecodeJSON, ParseDuration).
//
// The job types themselves live in subpackages: package httpjob sends an
// HTTP request, package shelljob runs a command. Each is a pure runner,
// Run(ctx, spec, vars, out), with no knowledge of the scheduler; chime
// server wraps them into jobs, decides which are enabled, and records their
// results. These packages import only the standard library and each other.
//
// # Templates
//
// Some spec fields (an HTTP request's URL, header values and body; a
// command's argv elements and environment values) are Go text/template
// templates expanded when the job fires, with a Vars as the data:
//
//	{{.JobGroup}} {{.JobName}}           the job's key
//	{{.TriggerGroup}} {{.TriggerName}}   the firing trigger's key
//	{{.ExecutionID}}                     this execution's id
//	{{.NodeID}}                          the node running it
//	{{.ScheduledTime}} {{.FireTime}}     time.Time values, so {{.FireTime.Unix}}
//	                                     and {{.FireTime.Format "2006-01-02"}} work
//	{{.Attempt}}                         1 for the first try, 2 for the first retry, …
//	{{.Params.region}}                   a value from the job's parameters
//	{{.ShardIndex}} {{.ShardTotal}}      a sharded job's item: index from 0, of total (0 of 0 when not sharded)
//
// Besides text/template's built-in functions (urlquery, printf, index, …)
// one more is defined: json, which encodes its argument as JSON, so a
// value lands in a JSON body correctly quoted and escaped:
//
//	{"job": {{json .JobName}}, "fired_at": {{json .FireTime}}, "region": {{json .Params.region}}}
//
// An HTTP request's URL is expanded by ExpandURL, which escapes each
// value for the part of the URL it lands in (path segment, query value).
// A second function, raw, returns its argument unchanged; in a URL, its
// value is inserted without escaping.
//
// A third function, secret, inserts the value of a secret the server
// keeps encrypted, read when the job fires:
//
//	Authorization: Bearer {{secret "billing-api-token"}}
//
// Its argument must be one quoted name, so that the server can check, when
// the job is saved, that every secret it refers to exists (SecretNames).
// A firing fails with a clear error when the secret is not defined or
// cannot be read (Vars.Secrets). In a URL the value is escaped like any
// other. Use secret rather than a literal token in a header or a URL: the
// job's spec is readable by every viewer, a secret's value by no one.
//
// A reference to a parameter that is not set is an error, not an empty
// string ("missingkey=error"); so is a field Vars does not have. Text
// without "{{" is used as it is; to write a literal "{{", write {{"{{"}}.
//
// Templates are bounded, so that no job's template can take a node down:
// {{range}}, {{template}}, {{block}} and {{define}} are refused when the
// job is saved (a loop over 200 million integers would burn seconds of CPU
// that no timeout can stop, and template calls can recurse), and an
// expansion longer than MaxExpansion bytes fails the execution. Render a
// list with {{json .Params.list}}.
package jobs
