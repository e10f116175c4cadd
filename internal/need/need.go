// Package need is how a test says that it needs something installed on
// the machine: a program, a font, a Python module, a library that
// pkg-config knows, or the files of a data package. Each need has a row in
// Table naming the Debian package that installs it. When the need is
// missing the test is skipped with what to install
// ("ffmpeg not installed: apt-get install ffmpeg"), except under CI (the
// CI environment variable set), whose script .ci/run installs every
// package of the table: there a missing need fails the test, so that CI
// never passes by skipping. A need that has no row fails the test too:
// every skip names its package.
package need

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kind is how a need is looked for.
type Kind string

// The kinds of needs.
const (
	// KindProgram is an executable: Name on PATH, else one of Also (more
	// names on PATH, or absolute paths, which may be glob patterns).
	KindProgram Kind = "program"
	// KindFont is a font family as fontconfig lists it (fc-list).
	KindFont Kind = "font"
	// KindPython is a module that Debian's python3 imports.
	KindPython Kind = "python"
	// KindPkgConfig is a library module pkg-config knows.
	KindPkgConfig Kind = "pkg-config"
	// KindPath is a file or directory that a package installs, such as
	// a data package's folder.
	KindPath Kind = "path"
)

// Need is a row of Table.
type Need struct {
	Kind Kind
	// Name is what tests ask for: a program name, a font family, a
	// Python module, a pkg-config module, or an absolute path.
	Name string
	// Package is the Debian package that installs it.
	Package string
	// Also lists other places for a program (see KindProgram).
	Also []string
}

// Table is every need of the module's tests. .ci/run installs exactly
// its packages (TestTableMatchesCI).
var Table = []Need{
	{KindProgram, "ffmpeg", "ffmpeg", nil},
	{KindProgram, "ffprobe", "ffmpeg", nil},
	{KindProgram, "sox", "sox", nil},
	{KindProgram, "espeak-ng", "espeak-ng", nil},
	{KindProgram, "flac", "flac", nil},
	{KindProgram, "bash", "bash", nil},
	// A program that runs as long as its input is open, for the tests of
	// the process pool (audio/procpool).
	{KindProgram, "cat", "coreutils", nil},
	{KindProgram, "curl", "curl", nil},
	{KindProgram, "cc", "gcc", nil},
	{KindProgram, "pkg-config", "pkg-config", nil},
	{KindPkgConfig, "libebur128", "libebur128-dev", nil},
	{KindProgram, "chromium", "chromium", []string{"chromium-browser"}},
	{KindProgram, "promtool", "prometheus", nil},
	{KindProgram, "rclone", "rclone", nil},
	{KindPython, "pyftpdlib", "python3-pyftpdlib", nil},
	{KindPython, "OpenSSL", "python3-openssl", nil},
	{KindPython, "mutagen", "python3-mutagen", nil},
	// Debian keeps the server's programs off PATH, in a folder per major
	// version.
	{KindProgram, "postgres", "postgresql", []string{"/usr/lib/postgresql/*/bin/postgres"}},
	{KindProgram, "initdb", "postgresql", []string{"/usr/lib/postgresql/*/bin/initdb"}},
	{KindProgram, "pocketsphinx_continuous", "pocketsphinx", nil},
	{KindPath, "/usr/share/pocketsphinx/model/en-us", "pocketsphinx-en-us", nil},
	// The recordings of the real-audio corpus (internal/realaudio): a file
	// each package installs.
	{KindPath, "/usr/share/asterisk/sounds/en_US_f_Allison/vm-intro.g722", "asterisk-core-sounds-en-g722", nil},
	{KindPath, "/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz", "asterisk-core-sounds-en", nil},
	{KindPath, "/usr/share/asterisk/sounds/fr_CA_f_June/activated.g722", "asterisk-core-sounds-fr-g722", nil},
	{KindPath, "/usr/share/doc/asterisk-core-sounds-fr/core-sounds-fr.txt.gz", "asterisk-core-sounds-fr", nil},
	{KindPath, "/usr/share/asterisk/sounds/it_IT_m_Carlo/activated.g722", "asterisk-core-sounds-it-g722", nil},
	{KindPath, "/usr/share/doc/asterisk-core-sounds-it/core-sounds-it.txt.gz", "asterisk-core-sounds-it", nil},
	{KindPath, "/usr/share/codec2/wav/ve9qrp.wav", "codec2-examples", nil},
	{KindPath, "/usr/share/klettres/en/alpha/A.ogg", "klettres-data", nil},
	{KindPath, "/usr/share/asterisk/moh/manolo_camp-morning_coffee.g722", "asterisk-moh-opsound-g722", nil},
	{KindPath, "/usr/share/lmms/samples/drums/kick01.ogg", "lmms-common", nil},
	{KindPath, "/usr/share/sounds/sf2/TimGM6mb.sf2", "timgm6mb-soundfont", nil},
	{KindPath, "/usr/bin/fluidsynth", "fluidsynth", nil},
	{KindPath, "/usr/share/games/openttd/baseset/opensfx/opensfx.cat", "openttd-opensfx", nil},
	// The streaming server of the live stream tests and the peer the live
	// processing is measured beside.
	// RNNoise, a peer of the quality report, runs as WebAssembly from npm.
	{KindProgram, "node", "nodejs", nil},
	{KindProgram, "npm", "nodejs", nil},
	{KindProgram, "icecast2", "icecast2", nil},
	{KindProgram, "liquidsoap", "liquidsoap", nil},
	// The families speech/burnin.Fonts maps the spec's font names onto.
	{KindProgram, "fc-list", "fontconfig", nil},
	{KindFont, "DejaVu Sans", "fonts-dejavu-core", nil},
	{KindFont, "DejaVu Sans Mono", "fonts-dejavu-core", nil},
	{KindFont, "DejaVu Serif", "fonts-dejavu-core", nil},
	{KindFont, "DejaVu Sans Condensed", "fonts-dejavu-extra", nil},
	{KindFont, "Liberation Sans", "fonts-liberation", nil},
	{KindFont, "Liberation Sans Narrow", "fonts-liberation", nil},
	{KindFont, "Liberation Serif", "fonts-liberation", nil},
	{KindFont, "Liberation Mono", "fonts-liberation", nil},
	{KindFont, "Bebas Neue", "fonts-bebas-neue", nil},
	{KindFont, "Inter", "fonts-inter", nil},
	{KindFont, "Lobster Two", "fonts-lobster", nil},
	{KindFont, "Quicksand", "fonts-quicksand", nil},
	{KindFont, "League Spartan", "fonts-league-spartan", nil},
	{KindFont, "Comic Neue", "fonts-comic-neue", nil},
	{KindFont, "Comfortaa", "fonts-comfortaa", nil},
	{KindFont, "Dancing Script", "fonts-dancingscript", nil},
	{KindFont, "Roboto Slab", "fonts-roboto-slab", nil},
	{KindFont, "Rampart One", "fonts-rampart", nil},
}

// Lookup returns the row of Table for the need.
func Lookup(kind Kind, name string) (Need, bool) {
	i := slices.IndexFunc(Table, func(n Need) bool { return n.Kind == kind && n.Name == name })
	if i < 0 {
		return Need{}, false
	}
	return Table[i], true
}

// CI reports whether the tests run under CI, where every need is
// installed.
func CI() bool { return os.Getenv("CI") != "" }

// Program returns the path of the program name, skipping tb when it is
// not installed (failing it under CI).
func Program(tb testing.TB, name string) string {
	tb.Helper()
	return require(tb, row(tb, KindProgram, name))
}

// Programs skips tb when one of the programs is not installed (failing
// it under CI).
func Programs(tb testing.TB, names ...string) {
	tb.Helper()
	for _, name := range names {
		Program(tb, name)
	}
}

// Font skips tb when fontconfig does not list the font family (failing
// it under CI).
func Font(tb testing.TB, family string) {
	tb.Helper()
	n := row(tb, KindFont, family)
	Program(tb, "fc-list")
	require(tb, n)
}

// Python returns the path of Debian's python3 after checking that it
// imports every module, skipping tb when one is missing (failing it
// under CI).
func Python(tb testing.TB, modules ...string) string {
	tb.Helper()
	var py string
	for _, m := range modules {
		py = require(tb, row(tb, KindPython, m))
	}
	if py == "" {
		py = python()
	}
	return py
}

// PkgConfig returns the compiler and linker flags of the pkg-config
// module, skipping tb when it or pkg-config is missing (failing it under
// CI).
func PkgConfig(tb testing.TB, module string) []string {
	tb.Helper()
	n := row(tb, KindPkgConfig, module)
	Program(tb, "pkg-config")
	return strings.Fields(require(tb, n))
}

// Path returns path, skipping tb when the package that installs it is
// missing (failing it under CI).
func Path(tb testing.TB, path string) string {
	tb.Helper()
	return require(tb, row(tb, KindPath, path))
}

// HasProgram is Program for a test that also has something to check
// without the program: instead of skipping it logs what to install and
// returns false. Under CI a missing program still fails tb.
func HasProgram(tb testing.TB, name string) (string, bool) {
	tb.Helper()
	return has(tb, row(tb, KindProgram, name))
}

// HasPython is Python for a test that also has something to check
// without the modules (see HasProgram).
func HasPython(tb testing.TB, modules ...string) (string, bool) {
	tb.Helper()
	var py string
	for _, m := range modules {
		p, ok := has(tb, row(tb, KindPython, m))
		if !ok {
			return "", false
		}
		py = p
	}
	return py, true
}

// Unavailable skips tb with the reason, or fails it under CI: for what
// tests cannot have though everything is installed, such as a server that
// does not start. What is not installed goes through the functions above,
// which name the package.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if CI() {
		tb.Fatalf(format+" (under CI, where it must be available)", args...)
	}
	tb.Skipf(format, args...)
}

// Find looks for the need and returns where it is: the path of a program
// or of a python3 that imports the module, the flags of a pkg-config
// module, the path of a file, or the family of a font. Its error says
// what to install.
func Find(n Need) (string, error) {
	key := string(n.Kind) + "\x00" + n.Name
	if r, ok := found.Load(key); ok {
		r := r.(result)
		return r.where, r.err
	}
	where, err := find(n)
	if err != nil {
		err = fmt.Errorf("%s not installed: apt-get install %s (%w)", describe(n), n.Package, err)
	}
	found.Store(key, result{where, err})
	return where, err
}

type result struct {
	where string
	err   error
}

var found sync.Map // kind NUL name -> result

func find(n Need) (string, error) {
	switch n.Kind {
	case KindProgram:
		p, err := exec.LookPath(n.Name)
		if err == nil {
			return p, nil
		}
		for _, a := range n.Also {
			if !filepath.IsAbs(a) {
				if p, err := exec.LookPath(a); err == nil {
					return p, nil
				}
				continue
			}
			ms, _ := filepath.Glob(a)
			for _, m := range ms {
				if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return m, nil
				}
			}
		}
		return "", err
	case KindPath:
		if _, err := os.Stat(n.Name); err != nil {
			return "", err
		}
		return n.Name, nil
	case KindPython:
		py := python()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, py, "-c", "import "+n.Name).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s -c 'import %s': %v: %s", py, n.Name, err, lastLine(out))
		}
		return py, nil
	case KindPkgConfig:
		pc, err := exec.LookPath("pkg-config")
		if err != nil {
			return "", err
		}
		out, err := exec.Command(pc, "--cflags", "--libs", n.Name).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("pkg-config %s: %v: %s", n.Name, err, lastLine(out))
		}
		return strings.TrimSpace(string(out)), nil
	case KindFont:
		fams, err := families()
		if err != nil {
			return "", err
		}
		if !fams[strings.ToLower(n.Name)] {
			return "", errors.New("fc-list does not list the family")
		}
		return n.Name, nil
	}
	return "", fmt.Errorf("unknown kind %q", n.Kind)
}

// python is Debian's interpreter, which sees the python3-* packages (a
// python3 of pyenv or a virtual environment earlier on PATH would not).
func python() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// families lists the font families fontconfig knows, lower-cased, once.
var families = sync.OnceValues(func() (map[string]bool, error) {
	fc, err := exec.LookPath("fc-list")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, fc, ":", "family").Output()
	if err != nil {
		return nil, fmt.Errorf("fc-list: %w", err)
	}
	fams := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, f := range strings.Split(sc.Text(), ",") {
			fams[strings.ToLower(strings.TrimSpace(strings.ReplaceAll(f, `\-`, "-")))] = true
		}
	}
	return fams, nil
})

// lastLine is the last line of a program's output: the error of a
// traceback.
func lastLine(out []byte) []byte {
	out = bytes.TrimSpace(out)
	return out[bytes.LastIndexByte(out, '\n')+1:]
}

func describe(n Need) string {
	switch n.Kind {
	case KindFont:
		return "font " + n.Name
	case KindPython:
		return "Python module " + n.Name
	case KindPkgConfig:
		return "library " + n.Name
	}
	return n.Name
}

// row returns the table's row for the need, failing tb when there is none.
func row(tb testing.TB, kind Kind, name string) Need {
	tb.Helper()
	n, ok := Lookup(kind, name)
	if !ok {
		tb.Fatalf("need: %s %q has no row in need.Table: add one naming its Debian package, and add the package to .ci/run", kind, name)
	}
	return n
}

func require(tb testing.TB, n Need) string {
	tb.Helper()
	where, err := Find(n)
	if err != nil {
		if CI() {
			tb.Fatalf("%v; CI (.ci/run) installs it", err)
		}
		tb.Skip(err)
	}
	return where
}

func has(tb testing.TB, n Need) (string, bool) {
	tb.Helper()
	where, err := Find(n)
	if err != nil {
		if CI() {
			tb.Fatalf("%v; CI (.ci/run) installs it", err)
		}
		tb.Logf("%v: not checked", err)
		return "", false
	}
	return where, true
}
