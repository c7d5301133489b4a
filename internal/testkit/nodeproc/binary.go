package nodeproc

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
)

// Binary builds the program of a Go package once, on first use, into a
// directory its owner removes.
//
// The program is built without -race even when the tests run with it: the
// race detector would slow every node several times over and change the
// timing the tests exercise, and the code it would check (the scheduler,
// the store) is race-tested by in-process tests and by its own packages'
// tests.
type Binary struct {
	pkg  string
	dir  string
	once sync.Once
	path string
	err  error
}

// NewBinary returns a Binary that builds the package with import path pkg
// into dir.
func NewBinary(pkg, dir string) *Binary { return &Binary{pkg: pkg, dir: dir} }

// Path returns the built program, building it on the first call.
func (b *Binary) Path(ctx context.Context) (string, error) {
	b.once.Do(func() {
		out := filepath.Join(b.dir, path.Base(b.pkg))
		// go test puts the bin directory of its toolchain first on PATH.
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, b.pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, msg)
			return
		}
		b.path = out
	})
	return b.path, b.err
}
