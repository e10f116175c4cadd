package engine_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestMain runs the package's tests with a temporary directory of their
// own as the system's and fails the run if anything is left in it: the
// tests give each Engine a TempDir, so that they can run in parallel and
// still check what a run leaves, and this catches a temporary file made
// anywhere else.
func TestMain(m *testing.M) {
	os.Exit(runIsolated(m))
}

func runIsolated(m *testing.M) int {
	// Fixed before TMPDIR changes, in case it falls back to it.
	cache := testaudio.CacheDir()
	dir, err := os.MkdirTemp("", "audiopost-engine-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(ents) > 0 && code == 0 {
		var left []string
		for _, e := range ents {
			left = append(left, e.Name())
		}
		fmt.Fprintf(os.Stderr, "temporary files left in %s: %q (the test audio cache is %s)\n", dir, left, cache)
		return 1
	}
	return code
}
