package browser

import (
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Handler serves a folder Build wrote, as the pages' own host: every file
// with the pages' Content Security Policy, audiopost.wasm gzip-compressed
// to browsers that accept it, and nothing cached without asking again
// (a new build replaces the files under the same names). Mount it with
// http.StripPrefix at a path ending in a slash. Without a build in dir it
// answers 404 with the command that makes one.
func Handler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP+"; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if _, err := os.Stat(filepath.Join(dir, WasmFile)); err != nil {
			http.Error(w, "The in-browser pages are not built on this server. Build them with\n\n"+
				"    go run ./transport/browser/build -o "+dir+"\n\nin a checkout of audiopost.", http.StatusNotFound)
			return
		}
		// One flat folder: its files and its index, nothing below it.
		name := path.Clean("/" + r.URL.Path)
		if name != "/" && (strings.Contains(name[1:], "/") || !isFile(dir, name)) {
			http.NotFound(w, r)
			return
		}
		if name == "/"+WasmFile && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			if f, err := os.Open(filepath.Join(dir, WasmFile+".gz")); err == nil {
				defer f.Close()
				if st, err := f.Stat(); err == nil {
					h.Set("Content-Type", "application/wasm")
					h.Set("Content-Encoding", "gzip")
					h.Add("Vary", "Accept-Encoding")
					http.ServeContent(w, r, WasmFile, st.ModTime(), f)
					return
				}
			}
		}
		if strings.HasSuffix(name, ".wasm") {
			h.Set("Content-Type", "application/wasm")
			h.Add("Vary", "Accept-Encoding")
		}
		files.ServeHTTP(w, r)
	})
}

func isFile(dir, name string) bool {
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil && st.Mode().IsRegular()
}
