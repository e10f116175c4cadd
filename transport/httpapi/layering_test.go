package httpapi_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const (
	storagePath = "github.com/audiopost/audiopost/storage"
	// blobPath and sqlstorePath are the adapters of the stores: a
	// transport gets them as interfaces through its Config, never by name.
	blobPath     = storagePath + "/blob"
	sqlstorePath = storagePath + "/sqlstore"
)

// readPrefixes start the names of the store's methods that only read.
var readPrefixes = []string{"Get", "List", "Lookup", "Count"}

// storeWrites reports what the package in dir does that belongs to the
// application layer (production/app): an import of a store adapter, a
// call (or method value) of a method of storage's interfaces that
// writes, or any method of the blob store's. Each finding is
// "file:line: what".
func storeWrites(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	var out []string
	for _, f := range files {
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if path == blobPath || strings.HasPrefix(path, blobPath+"/") || path == sqlstorePath {
				out = append(out, fset.Position(imp.Pos()).String()+": imports "+path)
			}
		}
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: exportImporter(t, fset, dir), Error: func(error) {}}
	if _, err := conf.Check("checked", fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	for sel, s := range info.Selections {
		fn, ok := s.Obj().(*types.Func)
		if !ok || fn.Pkg() == nil || fn.Pkg().Path() != storagePath {
			continue
		}
		recv := s.Recv()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		named, ok := recv.(*types.Named)
		if !ok || !types.IsInterface(named) {
			continue // methods of storage's plain types (User.Credits) are no store access
		}
		name := fn.Name()
		blobs := named.Obj().Name() == "Blobs" || named.Obj().Name() == "BlobWriter" || blobMethod(named, name)
		read := false
		for _, p := range readPrefixes {
			read = read || strings.HasPrefix(name, p)
		}
		if blobs || !read {
			out = append(out, fset.Position(sel.Pos()).String()+": "+named.Obj().Name()+"."+name)
		}
	}
	sort.Strings(out)
	return out
}

// blobMethod reports whether name is a method of storage.Blobs reached
// through another interface type that embeds it.
func blobMethod(named *types.Named, name string) bool {
	blobs := named.Obj().Pkg().Scope().Lookup("Blobs")
	if blobs == nil || named.Obj().Name() == "Blobs" {
		return false
	}
	iface, _ := blobs.Type().Underlying().(*types.Interface)
	if iface == nil || !types.Implements(named, iface) {
		return false
	}
	for i := range iface.NumMethods() {
		if iface.Method(i).Name() == name {
			return true
		}
	}
	return false
}

// layeringDirs are the packages TestNoStoreWritesInTransport checks,
// the sample of what it must find last.
var layeringDirs = []string{".", "../webpages", "../internal/envelope", "../internal/simpleform", filepath.Join("testdata", "layering")}

// layeringExports maps the import path of every package layeringDirs
// depend on to its export data file: one `go list -export` over all of
// them (one for each took 0.4-0.7 s of CPU, five 2.4 s of the test's).
var layeringExports = sync.OnceValues(func() (map[string]string, error) {
	args := []string{"list", "-deps", "-export", "-json=ImportPath,Export"}
	for _, d := range layeringDirs {
		args = append(args, "./"+filepath.ToSlash(d))
	}
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
	}
	return exports, nil
})

// exportImporter imports the packages the package in dir (one of
// layeringDirs) depends on from the compiler's export data.
func exportImporter(t *testing.T, fset *token.FileSet, dir string) types.Importer {
	t.Helper()
	if !slices.Contains(layeringDirs, dir) {
		t.Fatalf("%s is not in layeringDirs", dir)
	}
	exports, err := layeringExports()
	if err != nil {
		t.Fatal(err)
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
}

// TestNoStoreWritesInTransport keeps the HTTP interface (the API, the web
// pages and what they share) an adapter: its handlers decode, call the operations of production/app and encode.
// Store writes, blob handling and the store adapters belong to the
// application layer.
func TestNoStoreWritesInTransport(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package from export data (go list -export)")
	}
	// The web pages and the internal packages the API shares with them
	// are adapters too.
	for _, dir := range layeringDirs[:len(layeringDirs)-1] {
		name := filepath.ToSlash(filepath.Join("transport/httpapi", dir))
		if got := storeWrites(t, dir); len(got) > 0 {
			t.Errorf("%s does the application layer's work; call production/app instead:\n%s", name, strings.Join(got, "\n"))
		}
	}
	// The check finds what it is for: a handler that writes and stages
	// a blob itself (testdata/layering).
	sample := layeringDirs[len(layeringDirs)-1]
	got := strings.Join(storeWrites(t, sample), "\n")
	for _, want := range []string{"imports " + blobPath, "Store.CreateResource", "Tx.Enqueue", "Blobs.Stat"} {
		if !strings.Contains(got, want) {
			t.Errorf("the check missed %s in:\n%s", want, got)
		}
	}
	for _, allowed := range []string{"GetUser", "Credits"} {
		if strings.Contains(got, allowed) {
			t.Errorf("the check reported the read %s:\n%s", allowed, got)
		}
	}
}
