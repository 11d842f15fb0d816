package serve

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// web is the page: our index.html, app.js and style.css, and in vendor/
// the xterm.js files scripts/web-assets.sh fetches from the npm registry
// at the versions package-lock.json pins (gitignored; make build, vet and
// test fetch them first).
//
//go:embed web
var web embed.FS

// vendorFiles are the fetched files the page loads.
var vendorFiles = []string{"xterm.js", "xterm.css", "addon-fit.js", "addon-unicode11.js", "addon-web-links.js", "addon-search.js", "addon-image.js"}

// checkAssets says clearly when the binary was built without the fetched
// files, rather than serving a page that cannot start.
func checkAssets() error {
	for _, f := range vendorFiles {
		if _, err := fs.Stat(web, "web/vendor/"+f); err != nil {
			return fmt.Errorf("serve: this pyaichat was built without the web UI's xterm.js files (web/vendor/%s is missing); build it with make build, which fetches them (scripts/web-assets.sh)", f)
		}
	}
	return nil
}

// pageWriteTimeout bounds the writing of one of the page's files: a
// client that reads none of it (which needs no token) would otherwise
// keep its connection busy, out of reach of the per-address cap's
// eviction of idle ones, for good.
const pageWriteTimeout = time.Minute

// pageHandler serves the page's files with a Content-Security-Policy
// that lets it load only its own files and talk only to its own server.
func pageHandler() http.Handler {
	root, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // "web" is embedded, so Sub cannot fail
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(pageWriteTimeout))
		h := w.Header()
		h.Set("Content-Security-Policy", pagePolicy(r.Host))
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	})
}

// pagePolicy is the page's CSP. Styles may be inline because xterm.js's
// DOM renderer writes <style> elements for its colours and cell sizes.
// 'wasm-unsafe-eval' lets the image add-on compile the WebAssembly
// decoders (base64, SIXEL) it carries in its own file; it allows no eval
// of script text.
func pagePolicy(host string) string {
	return "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self'; connect-src 'self' ws://" + host + "; " +
		"base-uri 'none'; form-action 'none'"
}
