package need

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// ciPackages returns the packages .ci/run installs: the words of its
// packages=( ... ) array.
func ciPackages(t *testing.T) []string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package folder")
		}
		dir = parent
	}
	script, err := os.ReadFile(filepath.Join(dir, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^packages=\(([^)]*)\)`).FindSubmatch(script)
	if m == nil {
		t.Fatal(".ci/run has no packages=( ... ) line")
	}
	var pkgs []string
	for _, line := range strings.Split(string(m[1]), "\n") {
		line, _, _ = strings.Cut(line, "#")
		pkgs = append(pkgs, strings.Fields(line)...)
	}
	if len(pkgs) == 0 {
		t.Fatal(".ci/run installs no packages")
	}
	return pkgs
}

// TestTableMatchesCI: every package CI installs gives some test a skip
// path (a row of Table), and every package of Table is installed by CI,
// where nothing may skip.
func TestTableMatchesCI(t *testing.T) {
	ci := ciPackages(t)
	var table []string
	for _, n := range Table {
		if !slices.Contains(table, n.Package) {
			table = append(table, n.Package)
		}
	}
	for _, p := range ci {
		if !slices.Contains(table, p) {
			t.Errorf(".ci/run installs %s, which no row of need.Table names: no test can skip without it", p)
		}
	}
	for _, p := range table {
		if !slices.Contains(ci, p) {
			t.Errorf("need.Table names %s, which .ci/run does not install: tests needing it would fail under CI", p)
		}
	}
	for i, p := range ci {
		if slices.Contains(ci[:i], p) {
			t.Errorf(".ci/run lists %s twice", p)
		}
	}
}

// TestTable checks the rows, and that each one is found where its
// package is installed: under CI, all of them.
func TestTable(t *testing.T) {
	for i, n := range Table {
		if n.Name == "" || n.Package == "" || strings.ContainsAny(n.Package, " \t") {
			t.Errorf("row %d: %+v: a name and one Debian package", i, n)
		}
		if j := slices.IndexFunc(Table[:i], func(m Need) bool { return m.Kind == n.Kind && m.Name == n.Name }); j >= 0 {
			t.Errorf("rows %d and %d are both %s %q", j, i, n.Kind, n.Name)
		}
		if n.Kind == KindPath && !filepath.IsAbs(n.Name) {
			t.Errorf("row %d: path %q is not absolute", i, n.Name)
		}
		if n.Also != nil && n.Kind != KindProgram {
			t.Errorf("row %d: Also is for programs", i)
		}
	}
	for _, n := range Table {
		t.Run(string(n.Kind)+" "+n.Name, func(t *testing.T) {
			switch n.Kind {
			case KindProgram:
				if p := Program(t, n.Name); !filepath.IsAbs(p) && !strings.Contains(p, string(filepath.Separator)) {
					t.Errorf("path %q", p)
				}
			case KindFont:
				Font(t, n.Name)
			case KindPython:
				Python(t, n.Name)
			case KindPkgConfig:
				if f := PkgConfig(t, n.Name); !slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "-l") }) {
					t.Errorf("flags %q link no library", f)
				}
			case KindPath:
				Path(t, n.Name)
			default:
				t.Errorf("unknown kind %q", n.Kind)
			}
		})
	}
}

// recorder is a testing.TB that records how a check ended instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
	logs            []string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// check runs f with a recorder in a goroutine of its own, as the testing
// package runs a test, since skipping and failing end it.
func check(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// TestMissing: a missing need skips naming its package, fails under CI,
// and a need without a row fails everywhere.
func TestMissing(t *testing.T) {
	saved := Table
	t.Cleanup(func() { Table = saved })
	Table = append(slices.Clip(Table),
		Need{KindProgram, "audiopost-no-such-program", "audiopost-no-such-package", []string{"/nonexistent/*/bin/x"}},
		Need{KindPython, "audiopost_no_such_module", "python3-audiopost-no-such", nil},
		Need{KindPath, "/nonexistent/audiopost/model", "audiopost-no-such-data", nil})

	for _, ci := range []string{"", "1"} {
		t.Setenv("CI", ci)
		for _, c := range []struct {
			name, want string
			f          func(testing.TB)
		}{
			{"program", "audiopost-no-such-program not installed: apt-get install audiopost-no-such-package",
				func(tb testing.TB) { Program(tb, "audiopost-no-such-program") }},
			{"path", "/nonexistent/audiopost/model not installed: apt-get install audiopost-no-such-data",
				func(tb testing.TB) { Path(tb, "/nonexistent/audiopost/model") }},
		} {
			r := check(t, c.f)
			got := r.skipped
			if ci != "" {
				got = r.failed
				if r.skipped != "" {
					t.Errorf("CI=%s: %s skipped: %s", ci, c.name, r.skipped)
				}
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("CI=%q: %s: skipped %q, failed %q; want %q", ci, c.name, r.skipped, r.failed, c.want)
			}
		}
		// A test that can go on without the need goes on, and says what
		// it did not check.
		var ok bool
		r := check(t, func(tb testing.TB) { _, ok = HasProgram(tb, "audiopost-no-such-program") })
		if ci == "" && (ok || r.skipped != "" || r.failed != "" || len(r.logs) != 1 || !strings.Contains(r.logs[0], "apt-get install audiopost-no-such-package")) {
			t.Errorf("HasProgram without CI: ok %v, %+v", ok, r)
		}
		if ci != "" && (ok || r.failed == "") {
			t.Errorf("HasProgram under CI: ok %v, %+v", ok, r)
		}
		if r := check(t, func(tb testing.TB) { Program(tb, "audiopost-not-in-the-table") }); !strings.Contains(r.failed, "no row in need.Table") {
			t.Errorf("CI=%q: a need without a row: %+v", ci, r)
		}
		if r := check(t, func(tb testing.TB) { Unavailable(tb, "server %s did not start", "x") }); (ci == "") != (r.skipped == "server x did not start") || (ci != "") != strings.HasPrefix(r.failed, "server x did not start") {
			t.Errorf("CI=%q: Unavailable: %+v", ci, r)
		}
	}
	if _, err := Find(Need{KindPython, "audiopost_no_such_module", "python3-audiopost-no-such", nil}); err == nil || !strings.Contains(err.Error(), "Python module audiopost_no_such_module not installed: apt-get install python3-audiopost-no-such") {
		t.Errorf("python module: %v", err)
	}
}

// TestFound: what is there is found, and the program's path is returned.
func TestFound(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	saved := Table
	t.Cleanup(func() { Table = saved })
	Table = append(slices.Clip(Table),
		Need{KindProgram, "audiopost-elsewhere", "p", []string{filepath.Join(filepath.Dir(exe), "*")}},
		Need{KindPath, exe, "p", nil})
	if p := Program(t, "audiopost-elsewhere"); filepath.Dir(p) != filepath.Dir(exe) {
		t.Errorf("found at %s, want in %s", p, filepath.Dir(exe))
	}
	if p := Path(t, exe); p != exe {
		t.Errorf("Path = %s", p)
	}
}
