package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// readmeFlowMarker precedes the README's curl flow.
const readmeFlowMarker = "<!-- readme-flow:"

// TestReadmeFlow runs the README's API walk-through as written, with bash
// and curl, against a fresh server whose data folder is ./audiopost-data
// of the working directory, as `go run ./examples/audiopost serve` makes
// it. Only two things are replaced: `go run ./examples/audiopost` by this
// test binary acting as the command, and the address by the test
// server's. The walk-through leaves nothing in the folder it runs in (the
// checkout): its files land in a scratch folder (under TMPDIR, which the
// test points into its own), and it prints the production's status while
// it waits.
func TestReadmeFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("an end-to-end check of the plain run")
	}
	need.Programs(t, "bash", "curl", "ffmpeg")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := readmeBlock(t, string(readme))

	dir := t.TempDir()
	s := startServe(t, "-data", filepath.Join(dir, "audiopost-data"))
	cmd := filepath.Join(dir, "audiopost-cmd")
	wrapper := "#!/bin/sh\nexec env " + mainEnv + "=1 '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(cmd, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	script = strings.ReplaceAll(script, "go run ./examples/audiopost", cmd)
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", s.base)
	testaudio.WriteWAV(t, filepath.Join(dir, "talk.wav"), testaudio.SpeechLike(48000, 6, 0.05), 48000)

	scratch := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "TMPDIR="+scratch)
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's flow: %v\n%s", err, out)
	}
	t.Logf("the README's flow printed:\n%s", out)
	if after := dirNames(t, dir); !slices.Equal(after, before) {
		t.Errorf("the flow left files in the folder it ran in: %v, before %v", after, before)
	}
	if !regexp.MustCompile(`(?m)^Done: 100 %$`).Match(out) {
		t.Errorf("the flow's wait loop did not print the final status (Done: 100 %%):\n%s", out)
	}
	made, _ := filepath.Glob(filepath.Join(scratch, "*", "talk.mp3"))
	if len(made) != 1 {
		t.Fatalf("talk.mp3 not in one scratch folder under %s: %v\n%s", scratch, made, out)
	}
	for _, name := range []string{"talk.mp3", "talk.flac"} {
		d, err := audio.Open(ctx, filepath.Join(filepath.Dir(made[0]), name))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		res, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeI})
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Integrated+16) > 1 {
			t.Errorf("%s at %.2f LUFS, want the preset's -16", name, res.Integrated)
		}
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// readmeBlock returns the first sh code block after the flow marker.
func readmeBlock(t *testing.T, readme string) string {
	t.Helper()
	at := strings.Index(readme, readmeFlowMarker)
	if at < 0 {
		t.Fatalf("README has no %q marker", readmeFlowMarker)
	}
	rest := readme[at:]
	start := strings.Index(rest, "```sh\n")
	if start < 0 {
		t.Fatal("no sh block after the README's flow marker")
	}
	rest = rest[start+len("```sh\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatal("the README's flow block is not closed")
	}
	return rest[:end]
}

// The README's dependency table lists every module go.mod requires
// directly, at the version go.mod has, with what it is used for.
func TestReadmeDependencies(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // module -> version, from the README's table
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		mod, ver := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if strings.Contains(mod, ".") && strings.HasPrefix(ver, "v") && strings.TrimSpace(cells[3]) != "" {
			rows[mod] = ver
		}
	}
	inRequire := false
	direct := 0
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inRequire = true
			continue
		case line == ")":
			inRequire = false
			continue
		case !inRequire || strings.Contains(line, "// indirect") || line == "":
			continue
		}
		f := strings.Fields(line)
		direct++
		if got, ok := rows[f[0]]; !ok {
			t.Errorf("go.mod requires %s %s; the README's dependency table does not list it", f[0], f[1])
		} else if got != f[1] {
			t.Errorf("the README lists %s at %s, go.mod at %s", f[0], got, f[1])
		}
	}
	if direct == 0 {
		t.Fatal("no direct requirements read from go.mod")
	}
	if len(rows) != direct {
		t.Errorf("the README's table has %d modules, go.mod requires %d directly", len(rows), direct)
	}
}
