package flac

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os/exec"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
)

// run runs a command and fails the test with its stderr on error.
func run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(need.Program(t, name), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	return out
}

// ffmpegF64 decodes path with ffmpeg to planar float64.
func ffmpegF64(t testing.TB, path string, channels int) audio.Buffer {
	t.Helper()
	raw := run(t, "ffmpeg", "-v", "error", "-i", path, "-f", "f64le", "-")
	n := len(raw) / 8 / channels
	b := audio.NewBuffer(channels, n)
	for i := 0; i < n; i++ {
		for c := 0; c < channels; c++ {
			b[c][i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[(i*channels+c)*8:]))
		}
	}
	return b
}

func decodeAll(t testing.TB, r interface{ Read([]byte) (int, error) }) (audio.Buffer, audio.Info) {
	t.Helper()
	d, err := audio.Decode(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return b, d.Info()
}

// sameSamples reports the first difference between a and b, or "".
func sameSamples(a, b audio.Buffer) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d channels vs %d", len(a), len(b))
	}
	for c := range a {
		if len(a[c]) != len(b[c]) {
			return fmt.Sprintf("channel %d: %d frames vs %d", c, len(a[c]), len(b[c]))
		}
		for i := range a[c] {
			if a[c][i] != b[c][i] {
				return fmt.Sprintf("channel %d frame %d: %v vs %v", c, i, a[c][i], b[c][i])
			}
		}
	}
	return ""
}
