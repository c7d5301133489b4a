package server

import (
	"go/build"
	"strings"
	"testing"
)

// TestServerUsesThePublicAPI keeps the server a layer on the library: its
// packages import no internal package of the module but their own, and
// not the store contract either: the scheduler's API gives them what they
// need of the store. They may open the database with store/sqlstore, to
// own tables of their own. Only the tests of package server may use the
// contract, to play a node that dies in the middle of a firing or to
// count store calls.
func TestServerUsesThePublicAPI(t *testing.T) {
	t.Parallel()
	const mod = "github.com/chime-scheduler/chime/"
	for _, pkg := range []string{"server", "server/alert", "server/auth", "server/dispatch", "server/history", "server/httpapi", "server/jobversion", "server/livelog", "server/outbox", "server/secret", "server/servertest", "server/sso"} {
		p, err := build.Import(mod+pkg, ".", 0)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string][]string{"": p.Imports}
		if pkg != "server" {
			imports["test "] = p.TestImports
			imports["external test "] = p.XTestImports
		}
		for kind, imps := range imports {
			for _, imp := range imps {
				rel, ours := strings.CutPrefix(imp, mod)
				if !ours {
					continue
				}
				if rel == "store" {
					t.Errorf("%s %simports the store contract; use the scheduler's API", pkg, kind)
				}
				if strings.Contains("/"+rel+"/", "/internal/") && !strings.HasPrefix(rel, "server/internal/") && kind == "" {
					t.Errorf("%s imports %s, an internal package of the library", pkg, rel)
				}
			}
		}
	}
}
