package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// static holds the console's files: index.html and the assets it loads.
//
//go:embed static
var static embed.FS

// securityHeaders are sent with every answer of the console. The policy
// allows scripts, styles, images and API calls from the console's own
// origin only: no inline script, no third party, no framing.
var securityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "same-origin"},
}

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	etag        string
	contentType string
}

// handler serves the embedded files. It is immutable once built.
type handler struct {
	files map[string]file // by URL path: "/", "/assets/app.css", …
}

// Handler returns the handler of the console: GET or HEAD of "/" answers
// the application's page, "/assets/…" its scripts, styles and icons; any
// other path or method is refused (404, 405). Mount it at "/" beside the
// API, whose paths are more specific.
func Handler() http.Handler {
	h := &handler{files: make(map[string]file)}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = http.DetectContentType(body)
		}
		rel := strings.TrimPrefix(p, "static/")
		url := "/assets/" + rel
		if rel == "index.html" {
			url = "/"
		}
		h.files[url] = file{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, contentType: ctype}
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a build
		// defect, not a runtime condition.
		panic(fmt.Sprintf("console: reading embedded files: %v", err))
	}
	return h
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, kv := range securityHeaders {
		w.Header().Set(kv[0], kv[1])
	}
	f, ok := h.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", f.etag)
	// Revalidate every time: the ETag makes that a 304 when nothing
	// changed, and a new binary's files are picked up at once.
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
