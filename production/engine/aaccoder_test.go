package engine

import (
	"context"
	"testing"
)

// TestAACCoderOvershoot checks why AAC at 64 kb/s and up is encoded with
// ffmpeg's fast coder (audio/ffmpeg's aacFastKbps): on the ten programmes
// of TestLossyFirstTime, processed without lossy headroom and encoded at
// the default 64 kb/s, its decoded true peak rises at most
// aacFastMaxRise above the render's. When the choice was made (ffmpeg
// 5.1), the fast coder rose by at most 0.09 dB on them and ffmpeg's
// default twoloop coder by up to 1.72 dB, which the codec table's
// headroom would have to cover on every production. The plain run
// encodes firstTimeSweep's five programmes (the fast coder's largest
// rise, sox-synth's, among them), AUDIOPOST_LONG=1 all ten:
//
//	ffmpeg -i render.wav -c:a aac -b:a 64k -aac_coder twoloop out.m4a
func TestAACCoderOvershoot(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes five programmes (ten with AUDIOPOST_LONG=1)")
	}
	t.Parallel()
	needProgrammeTools(t)
	const aacFastMaxRise = 0.6
	ctx := context.Background()
	worst := -100.0
	for _, file := range firstTimeSweep() {
		in := file.make(t, file.rate, firstTimeSeconds*file.rate)
		render, ref := renderDefault(t, in, file.rate)
		got, err := encodedLoudness(ctx, "aac", 64, render, file.rate)
		if err != nil {
			t.Fatal(err)
		}
		rise := got.TruePeak - ref.TruePeak
		t.Logf("%-20s true peak rise %+.2f dB", file.name, rise)
		worst = max(worst, rise)
	}
	if worst > aacFastMaxRise {
		t.Errorf("the fast AAC coder raised the true peak by up to %+.2f dB, want at most %+.2f: does it still beat twoloop?", worst, aacFastMaxRise)
	}
}
