package server

import (
	"runtime"
	"runtime/debug"
)

// BuildInfo is what the Go toolchain recorded about the running binary's
// build: `chime version` prints it and the chime_build_info metric
// exports it.
type BuildInfo struct {
	// Version is the main module's version: a tag such as "v1.2.0" for
	// `go install …@v1.2.0` or a release build, a pseudo-version, or
	// "(devel)" for a build in a checkout; "unknown" when the binary
	// carries no build information.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from, Time its
	// commit time (RFC 3339) and Modified whether the work tree had
	// uncommitted changes. They are empty when the build recorded no VCS
	// information (go build -buildvcs=false, go install of a module, or a
	// git worktree, which the toolchain does not recognise).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// GoVersion is the toolchain that built the binary, and Platform its
	// GOOS/GOARCH.
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// ReadBuildInfo returns the running binary's BuildInfo.
func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Version: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}
