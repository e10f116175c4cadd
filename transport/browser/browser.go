// Package browser is audiopost in the browser: two pages that process
// and measure a recording inside the user's browser tab, with the
// WebAssembly build of the engine, so that the recording never leaves
// the computer. Build compiles the engine (command
// transport/browser/wasm, over package local) and writes the pages into
// a folder that any static web host can serve, and Handler serves such a
// folder, as audiopost serve does at /browser/.
//
//	go run ./transport/browser/build -o DIR
//
// The pages' sources are in pages/: layout.html, index.html (process a
// recording) and measure.html are templates the build fills with the
// house style; audiopost.js is the JavaScript module around the engine
// (process, measure, describe), worker.js the Web Worker that runs it,
// process.js, measure.js and words.js the pages' scripts.
package browser

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/audiopost/audiopost/internal/wasmsimd"
	"github.com/audiopost/audiopost/transport/browser/local"
	"github.com/audiopost/audiopost/transport/internal/webstyle"
)

//go:embed pages
var sources embed.FS

// WasmPackage is the command the build compiles to WebAssembly.
const WasmPackage = "github.com/audiopost/audiopost/transport/browser/wasm"

// Files the build writes besides the pages' sources.
const (
	WasmFile     = "audiopost.wasm"
	SettingsFile = "settings.json"
	wasmExecFile = "wasm_exec.js"
	// KernelsFile is the engine's SIMD kernels (internal/wasmsimd), which
	// the worker instantiates over the engine's memory with simd.js.
	KernelsFile = "kernels.wasm"
	simdJSFile  = "simd.js"
)

// CSP is the Content Security Policy of the pages: scripts and workers
// from their own folder, WebAssembly compiled there, and no connection to
// anywhere but their own origin (the engine's file and the settings; on
// an audiopost server, the user's presets). The pages carry it in a meta
// element, so it holds on any static host; Handler also sends it.
const CSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'; " +
	"img-src 'self' blob:; media-src 'self' blob:; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'"

// pageCSS styles what only these pages have: the drop zone.
const pageCSS = `
.drop{border:2px dashed #9ab;border-radius:6px;padding:1rem;background:#fff;max-width:34rem}
.drop.over{border-color:#0b5cad;background:#eef4fb}
nav a[aria-current]{font-weight:600;text-decoration:none;color:#222}
#levels td:last-child{color:#555;font-size:.9rem}
dt{font-weight:600;margin-top:.6rem}dd{margin-left:1.5rem}
`

// Options adjust Build.
type Options struct {
	// Go is the go command; "" finds "go" on PATH.
	Go string
	// Debug keeps the WebAssembly's symbol names, which browser
	// profilers show, at the cost of size.
	Debug bool
	// Stderr receives the compiler's messages; nil discards them.
	Stderr io.Writer
}

// Report lists the files a build wrote and their sizes in bytes; Wasm
// and WasmGzip are the engine's, as served and gzip-compressed.
type Report struct {
	Files     map[string]int64 `json:"files"`
	Wasm      int64            `json:"wasm_bytes"`
	WasmGzip  int64            `json:"wasm_gzip_bytes"`
	GoVersion string           `json:"go_version"`
}

func (r *Report) String() string {
	var b strings.Builder
	names := make([]string, 0, len(r.Files))
	for n := range r.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var total int64
	for _, n := range names {
		fmt.Fprintf(&b, "%10d  %s\n", r.Files[n], n)
		total += r.Files[n]
	}
	fmt.Fprintf(&b, "%10d  in all; the engine %.1f MB, %.1f MB gzip-compressed as served (%s)\n", total,
		float64(r.Wasm)/(1<<20), float64(r.WasmGzip)/(1<<20), r.GoVersion)
	return b.String()
}

// Build writes the in-browser pages into dir (made if missing): it
// compiles the engine with GOOS=js GOARCH=wasm from the module the
// working directory is in, copies the Go runtime's wasm_exec.js, renders
// the pages and writes their scripts, the settings they offer
// (settings.json, from local.Describe) and the engine's gzip-compressed
// copy (audiopost.wasm.gz, which Handler serves to browsers that accept
// it). Files are written under temporary names and renamed, so a server
// serving dir never sees half a build.
func Build(ctx context.Context, dir string, opts Options) (*Report, error) {
	gocmd := opts.Go
	if gocmd == "" {
		gocmd = "go"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rep := &Report{Files: map[string]int64{}}
	write := func(name string, data []byte) error {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		rep.Files[name] = int64(len(data))
		return os.Rename(tmp, filepath.Join(dir, name))
	}

	env, err := exec.CommandContext(ctx, gocmd, "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("browser: go env: %w", err)
	}
	lines := strings.Fields(string(env))
	if len(lines) != 2 {
		return nil, fmt.Errorf("browser: go env printed %q", env)
	}
	goroot := lines[0]
	rep.GoVersion = lines[1]

	tmpWasm := filepath.Join(dir, "."+WasmFile+".tmp")
	// The tag wasmsimd links the engine's hottest loops to the SIMD
	// kernels of kernels.wasm (internal/wasmsimd).
	args := []string{"build", "-trimpath", "-tags", "wasmsimd", "-o", tmpWasm}
	if !opts.Debug {
		args = append(args, "-ldflags=-s -w")
	}
	cmd := exec.CommandContext(ctx, gocmd, append(args, WasmPackage)...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, opts.Stderr)
	}
	if err := cmd.Run(); err != nil {
		os.Remove(tmpWasm)
		return nil, fmt.Errorf("browser: compiling the engine: %w\n%s", err, stderr.Bytes())
	}
	wasm, err := os.ReadFile(tmpWasm)
	if err != nil {
		return nil, err
	}
	// gzip's default level: on the 12.4 MB engine (Go 1.26, 2026-11-28)
	// level 9 made 3,387,816 bytes in 1.03 s of CPU, 8 3,388,573 in 0.86,
	// 7 3,399,048 in 0.56 and 6 3,414,285 in 0.37-0.44: the best level
	// saved 26 KB (0.8 %) of a download browsers cache, for 0.6 s more
	// of every build (each CI run builds the pages twice).
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	zw.Write(wasm)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	// The compressed copy first: Handler serves it when it is there.
	if err := write(WasmFile+".gz", gz.Bytes()); err != nil {
		return nil, err
	}
	if err := os.Rename(tmpWasm, filepath.Join(dir, WasmFile)); err != nil {
		return nil, err
	}
	rep.Files[WasmFile], rep.Wasm, rep.WasmGzip = int64(len(wasm)), int64(len(wasm)), int64(gz.Len())

	// wasm_exec.js matches the Go that compiled the engine: lib/wasm
	// since Go 1.24, misc/wasm before.
	var exec []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if exec, err = os.ReadFile(filepath.Join(goroot, p)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("browser: no wasm_exec.js in %s: %w", goroot, err)
	}
	if err := write(wasmExecFile, exec); err != nil {
		return nil, err
	}

	if err := write(KernelsFile, wasmsimd.Module()); err != nil {
		return nil, err
	}
	if err := write(simdJSFile, wasmsimd.LinkJS); err != nil {
		return nil, err
	}

	settings, err := json.Marshal(local.Describe())
	if err != nil {
		return nil, err
	}
	if err := write(SettingsFile, settings); err != nil {
		return nil, err
	}
	scripts, err := fs.Glob(sources, "pages/*.js")
	if err != nil {
		return nil, err
	}
	for _, s := range scripts {
		b, err := sources.ReadFile(s)
		if err != nil {
			return nil, err
		}
		if err := write(filepath.Base(s), b); err != nil {
			return nil, err
		}
	}
	for _, pg := range pageList {
		html, err := render(pg, rep.GoVersion)
		if err != nil {
			return nil, err
		}
		if err := write(pg.file, html); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// page is one of the pages: its template, file and what it says.
type page struct {
	name, file, title, privacy string
}

var pageList = []page{
	{"process", "index.html", "Process a recording in this browser",
		"It is processed here, in this browser tab, by the same engine as the audiopost server: the recording is never uploaded, and the result is made on this computer."},
	{"measure", "measure.html", "Measure loudness in this browser",
		"The recordings are measured here, in this browser tab: they are never uploaded."},
}

// render fills a page's template.
func render(pg page, version string) ([]byte, error) {
	content := "pages/" + pg.file
	t, err := template.ParseFS(sources, "pages/layout.html", content)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.ExecuteTemplate(&b, "layout", map[string]any{
		"Title": pg.title, "Page": pg.name, "Privacy": pg.privacy, "CSS": webstyle.CSS,
		"PageCSS": template.CSS(pageCSS), "CSP": CSP, "Version": "(engine built with " + version + ")",
	})
	return b.Bytes(), err
}
