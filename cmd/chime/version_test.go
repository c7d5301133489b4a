package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/server"
)

// TestVersion runs chime version in the built binary, whose build
// information the toolchain recorded.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin, err := chimeBinary.Path(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("chime version -o json: %v", err)
	}
	var v server.BuildInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("chime version -o json printed %q: %v", out, err)
	}
	// The test builds in a checkout. With VCS information (a git clone,
	// not a worktree, and -buildvcs not false), the toolchain derives a
	// pseudo-version from the commit; without, the version is "(devel)".
	wantVersion := "(devel)"
	if v.Revision != "" {
		wantVersion = "v" // a tag, or a pseudo-version such as v0.0.0-20261125011219-c5bcbd2b5908
	}
	if !strings.HasPrefix(v.Version, wantVersion) || v.GoVersion != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("chime version -o json = %+v, want version %s… built by %s for %s/%s", v, wantVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	out, err = exec.CommandContext(t.Context(), bin, "version").Output()
	if want := "Version:   " + v.Version + "\n"; err != nil || !strings.HasPrefix(string(out), want) ||
		!strings.HasSuffix(string(out), "Go:        "+runtime.Version()+" "+v.Platform+"\n") {
		t.Errorf("chime version = %q, %v", out, err)
	}
}

func TestWriteVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info server.BuildInfo
		want string
	}{
		{
			name: "release",
			info: server.BuildInfo{Version: "v1.2.0", Revision: "0123abc", Time: "2026-11-20T10:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm64"},
			want: trimLines("Version:   v1.2.0", "Revision:  0123abc (2026-11-20T10:00:00Z)", "Go:        go1.26.8 linux/arm64"),
		},
		{
			name: "modified tree",
			info: server.BuildInfo{Version: "(devel)", Revision: "0123abc", Modified: true, GoVersion: "go1.26.8", Platform: "darwin/amd64"},
			want: trimLines("Version:   (devel)", "Revision:  0123abc, with uncommitted changes", "Go:        go1.26.8 darwin/amd64"),
		},
		{
			name: "no VCS information",
			info: server.BuildInfo{Version: "(devel)", GoVersion: "go1.26.8", Platform: "windows/amd64"},
			want: trimLines("Version:   (devel)", "Revision:  unknown (built without VCS information)", "Go:        go1.26.8 windows/amd64"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeVersion(&b, tt.info); err != nil || b.String() != tt.want {
				t.Errorf("writeVersion = %q, %v; want %q", b.String(), err, tt.want)
			}
		})
	}
}
