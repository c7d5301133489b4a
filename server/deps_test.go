package server

import (
	"go/build"
	"strings"
	"testing"
)

// TestServerUsesThePublicAPI keeps the server a layer on the library: its
// packages import no internal package of the module but their own.
func TestServerUsesThePublicAPI(t *testing.T) {
	t.Parallel()
	const mod = "github.com/chime-scheduler/chime/"
	for _, pkg := range []string{"server", "server/alert", "server/auth", "server/history", "server/httpapi", "server/secret", "server/servertest"} {
		p, err := build.Import(mod+pkg, ".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			rel, ours := strings.CutPrefix(imp, mod)
			if ours && strings.Contains("/"+rel+"/", "/internal/") && !strings.HasPrefix(rel, "server/internal/") {
				t.Errorf("%s imports %s, an internal package of the library", pkg, rel)
			}
		}
	}
}
