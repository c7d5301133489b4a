package chime_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// TestDependenciesPointInward keeps the layering DESIGN.md asks for: pure
// packages import only the standard library and each other, stores import
// only the contract, and nothing below the root imports the root. A module
// outside this one may be listed by its full import path: the store suite
// prints its differences with go-cmp.
func TestDependenciesPointInward(t *testing.T) {
	t.Parallel()
	const mod = "github.com/chime-scheduler/chime"
	allowed := map[string][]string{
		"internal/javatime":        nil,
		"schedule/cron":            {"internal/javatime"},
		"schedule":                 {"internal/javatime", "schedule/cron"},
		"calendar":                 {"internal/javatime", "internal/tz", "schedule/cron"},
		"internal/tz":              nil,
		"clock":                    nil,
		"store":                    nil,
		"store/memstore":           {"store"},
		"store/storetest":          {"store", "github.com/google/go-cmp/cmp"},
		"internal/outage":          nil,
		"internal/testkit/logtest": nil,
		"internal/cluster":         {"clock", "internal/outage", "store"},
		"internal/engine":          {"calendar", "clock", "internal/execid", "internal/outage", "schedule", "store"},
		"internal/execid":          nil,
		"api":                      nil,
		"api/wire":                 {"api", "calendar", "internal/tz", "jobs", "schedule"},
		"jobs":                     nil,
		"jobs/egress":              nil,
		"jobs/httpjob":             {"jobs", "jobs/egress"},
		"jobs/shelljob":            {"jobs"},
		"lock":                     {"store/sqlstore"},
		"executor":                 {"api", "apiclient"},
	}
	for pkg, deps := range allowed {
		t.Run(pkg, func(t *testing.T) {
			p, err := build.Import(mod+"/"+pkg, ".", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range p.Imports {
				if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
					continue // standard library
				}
				if imp == mod {
					t.Errorf("%s imports the root package", pkg)
					continue
				}
				rel, ours := strings.CutPrefix(imp, mod+"/")
				if !ours && slices.Contains(deps, imp) {
					continue
				}
				if !ours {
					t.Errorf("%s imports %s, outside the standard library and this module", pkg, imp)
					continue
				}
				if !slices.Contains(deps, rel) {
					t.Errorf("%s imports %s; allowed: %v", pkg, rel, deps)
				}
			}
		})
	}
}
