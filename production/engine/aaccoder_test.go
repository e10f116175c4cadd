package engine

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestAACCoderOvershoot checks why AAC at 64 kb/s and up is encoded with
// ffmpeg's fast coder (audio/ffmpeg's aacFastKbps): on the ten programmes
// of TestLossyFirstTime, processed without lossy headroom and encoded at
// the default 64 kb/s, its decoded true peak rises at most
// aacFastMaxRise above the render's. ffmpeg's default twoloop coder,
// measured beside it, rose by up to 1.7 dB on the same programmes with
// ffmpeg 5.1 (the fast coder by at most 0.1), and the codec table's
// headroom would have to cover that on every production.
func TestAACCoderOvershoot(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes ten programmes twice")
	}
	t.Parallel()
	needProgrammeTools(t)
	const aacFastMaxRise = 0.6
	ctx := context.Background()
	worstFast, worstTwoloop := -100.0, -100.0
	for _, file := range firstTimeFiles {
		in := file.make(t, file.rate, firstTimeSeconds*file.rate)
		render, ref := renderDefault(t, in, file.rate)
		fast, err := encodedLoudness(ctx, "aac", 64, render, file.rate)
		if err != nil {
			t.Fatal(err)
		}
		wav := filepath.Join(t.TempDir(), "render.wav")
		testaudio.WriteWAVBits(t, wav, render, file.rate, 24)
		m4a := filepath.Join(t.TempDir(), "twoloop.m4a")
		if out, err := exec.Command("ffmpeg", "-v", "error", "-i", wav, "-c:a", "aac", "-b:a", "64k", "-aac_coder", "twoloop", m4a).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		twoloop := measureFile(t, m4a)
		riseFast, riseTwoloop := fast.TruePeak-ref.TruePeak, twoloop.TruePeak-ref.TruePeak
		t.Logf("%-20s true peak rise: fast %+.2f dB, twoloop %+.2f dB", file.name, riseFast, riseTwoloop)
		worstFast, worstTwoloop = max(worstFast, riseFast), max(worstTwoloop, riseTwoloop)
	}
	t.Logf("worst rise: fast %+.2f dB, twoloop %+.2f dB", worstFast, worstTwoloop)
	if worstFast > aacFastMaxRise {
		t.Errorf("the fast AAC coder raised the true peak by up to %+.2f dB, want at most %+.2f: does it still beat twoloop (%+.2f)?",
			worstFast, aacFastMaxRise, worstTwoloop)
	}
}
