package console_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/server/console"
)

func TestHandlerServesTheAppAndItsAssets(t *testing.T) {
	h := console.Handler()
	for _, tc := range []struct {
		path, wantType, wantBody string
	}{
		{"/", "text/html", `<script type="module" src="/assets/js/app.js">`},
		{"/assets/js/app.js", "text/javascript", "import"},
		{"/assets/app.css", "text/css", "--"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d", tc.path, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
			t.Errorf("GET %s: Content-Type %q, want %s", tc.path, ct, tc.wantType)
		}
		if !strings.Contains(rec.Body.String(), tc.wantBody) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.wantBody)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Fatalf("GET %s: no ETag", tc.path)
		}
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		req.Header.Set("If-None-Match", etag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: status %d, want 304", tc.path, rec.Code)
		}
	}
}

func TestHandlerRefusesUnknownPathsAndMethods(t *testing.T) {
	h := console.Handler()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/assets/nope.js", http.StatusNotFound},
		{http.MethodGet, "/index.html", http.StatusNotFound},
		{http.MethodGet, "/assets/../console.go", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
	}
}

// TestNoExternalResources keeps the console usable on air-gapped sites:
// no file may load anything from another origin.
// externalRef matches an absolute or protocol-relative URL.
var externalRef = regexp.MustCompile(`(https?:)?//[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+[^\s"'()]*`)

func TestNoExternalResources(t *testing.T) {
	h := console.Handler()
	for _, p := range console.AssetPaths(h) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		for _, ref := range externalRef.FindAllString(rec.Body.String(), -1) {
			// XML namespaces are identifiers, not fetches.
			if !strings.HasPrefix(ref, "http://www.w3.org/") {
				t.Errorf("%s refers to another origin: %s", p, ref)
			}
		}
	}
}
