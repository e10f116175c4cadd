package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain runs the package's tests with a temporary directory of their
// own as the system's and fails the run if anything is left in it: the
// tests give each Engine a TempDir, so that they can run in parallel and
// still check what a run leaves, and this catches a temporary file made
// anywhere else. The test audio cache (internal/testaudio) is linked in
// from the real temporary directory so it is kept between runs.
func TestMain(m *testing.M) {
	os.Exit(runIsolated(m))
}

func runIsolated(m *testing.M) int {
	real := os.TempDir()
	dir, err := os.MkdirTemp(real, "audiopost-engine-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	const cache = "audiopost-testaudio"
	if err := os.MkdirAll(filepath.Join(real, cache), 0o755); err == nil {
		os.Symlink(filepath.Join(real, cache), filepath.Join(dir, cache))
	}
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var left []string
	for _, e := range ents {
		if e.Name() != cache {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "temporary files left in %s: %q\n", dir, left)
		return 1
	}
	return code
}
