// Package webui is the web UI of `streamsql server`: plain HTML, CSS and
// JavaScript modules embedded in the binary, which read the REST API
// (docs/API.md) from the page's own origin. There is no build step and
// nothing is fetched from anywhere else: the Content-Security-Policy the
// handler sends allows the server's own origin only.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Prefix is the path the assets are served under.
const Prefix = "/ui/"

// csp lets a page load scripts, styles, images and API responses from the
// server only, and run no inline script or style.
const csp = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

func headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	// The assets change with the binary; a browser revalidates them.
	h.Set("Cache-Control", "no-cache")
}

// Index serves the page (index.html) at the server's root.
func Index() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		http.ServeFileFS(w, r, assets, "assets/index.html")
	})
}

// Assets serves the page's scripts, styles and icon under Prefix.
func Assets() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree has it
	}
	files := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		files.ServeHTTP(w, r)
	})
}
