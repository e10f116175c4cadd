package need_test

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
)

// A test asks for the program it runs. Without ffmpeg the test is skipped
// with "ffmpeg not installed: apt-get install ffmpeg (...)"; under CI=1 it
// fails with that message instead.
func ExampleProgram() {
	testDecode := func(t *testing.T) {
		ffmpeg := need.Program(t, "ffmpeg")
		out, err := exec.Command(ffmpeg, "-version").Output()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", out)
	}
	_ = testDecode
}

// A test that also checks something without the program, here a
// comparison with sox, goes on without it and logs what to install.
func ExampleHasProgram() {
	testResample := func(t *testing.T) {
		// ... the test's own checks ...
		if sox, ok := need.HasProgram(t, "sox"); ok {
			t.Logf("comparing with %s", sox)
		}
	}
	_ = testResample
}

// The table says which Debian package installs what a test needs.
func ExampleLookup() {
	for _, n := range []struct {
		kind need.Kind
		name string
	}{{need.KindProgram, "ffprobe"}, {need.KindFont, "Roboto Slab"}, {need.KindPython, "pyftpdlib"}} {
		row, _ := need.Lookup(n.kind, n.name)
		fmt.Printf("%s %s: apt-get install %s\n", row.Kind, row.Name, row.Package)
	}
	// Output:
	// program ffprobe: apt-get install ffmpeg
	// font Roboto Slab: apt-get install fonts-roboto-slab
	// python pyftpdlib: apt-get install python3-pyftpdlib
}
