// Package console serves chime server's web console: a browser
// application, embedded in the binary, that reads and operates the cluster
// through the HTTP API of docs/api.md with the caller's session cookie.
//
// Everything the console needs is in the binary: no CDN, no build step and
// no file on disk, so it works on air-gapped sites and from `go run`. The
// pages are plain ES modules under static/js; each page asks the API what
// it shows and offers only the actions the signed-in user's role allows
// (the API refuses the others anyway).
//
// Handler serves the application at "/" and its assets under "/assets/",
// with a strict Content-Security-Policy (scripts, styles and connections
// only from the console's own origin), frame denial and ETags.
package console
