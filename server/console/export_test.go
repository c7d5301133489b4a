package console

import (
	"net/http"
	"sort"
)

// AssetPaths lists the URL paths h serves, for tests.
func AssetPaths(h http.Handler) []string {
	var ps []string
	for p := range h.(*handler).files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
