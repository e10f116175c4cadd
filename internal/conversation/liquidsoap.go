package conversation

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Liquidsoap runs the peer of the live graph on in (mono at rate), as
// fast as it goes instead of in real time: Liquidsoap's normalize() in
// its LUFS mode toward target, with our leveler's gain range (+-20 dB),
// then its limit() at maxpeak, mono throughout, written as 24-bit PCM. It
// returns the output, aligned with in and as long. The test is skipped
// without liquidsoap (and fails under CI).
func Liquidsoap(t testing.TB, in []float64, rate int, target, maxpeak float64) []float64 {
	t.Helper()
	liq := need.Program(t, "liquidsoap")
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out.wav")
	testaudio.WriteWAVBits(t, src, [][]float64{in}, rate, 24)
	script := fmt.Sprintf(`settings.init.allow_root.set(true)
settings.log.stdout.set(true)
settings.log.file.set(false)
settings.log.level.set(3)
settings.frame.audio.samplerate.set(%d)
settings.frame.audio.channels.set(1)
s = once(single(%q))
s = normalize(target=%.1f, lufs=true, gain_min=-20., gain_max=20., s)
s = limit(threshold=%.1f, s)
clock.assign_new(sync="none", [s])
output.file(%%wav(mono, samplesize=24), %q, fallible=true, on_stop=shutdown, s)
`, rate, src, target, maxpeak, dst)
	path := filepath.Join(dir, "peer.liq")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), liq, path).CombinedOutput(); err != nil {
		t.Fatalf("liquidsoap: %v\n%s", err, out)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	out := pcm24(b)
	// Liquidsoap delays nothing it is given (its limiter has no
	// look-ahead), and pads the last frame: cut to the input.
	if len(out) < len(in) {
		t.Fatalf("liquidsoap wrote %d samples of %d", len(out), len(in))
	}
	return out[:len(in)]
}

// pcm24 reads the samples of a mono 24-bit WAV file that Liquidsoap wrote
// as a stream (its header's sizes are not final): everything after the
// data chunk's header.
func pcm24(b []byte) []float64 {
	i := 12
	for i+8 <= len(b) && string(b[i:i+4]) != "data" {
		i += 8 + int(uint32(b[i+4])|uint32(b[i+5])<<8|uint32(b[i+6])<<16|uint32(b[i+7])<<24)
	}
	i += 8
	var out []float64
	for ; i+3 <= len(b); i += 3 {
		v := int32(uint32(b[i])<<8|uint32(b[i+1])<<16|uint32(b[i+2])<<24) >> 8
		out = append(out, float64(v)/(1<<23))
	}
	return out
}
