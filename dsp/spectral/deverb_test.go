package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Speech in testaudio's synthetic room at RT60 0.7 s, SI-SDR against the
// dry speech. The issue asks for +3 dB at a direct-to-reverberant ratio of
// 0 dB (a metre or two from the talker in a lively room); this test pins
// that and what is reached at +5 and -5 dB and in the -22 dB room the
// estimator was first tuned in, so that none regresses, and logs beside
// each the gain of removing every reflection later than one Denoiser
// frame (43 ms) exactly, +3.2 dB in these rooms: the ceiling of the late
// reverberation gain alone, which the WPE stage before it goes past.
func TestDeverb(t *testing.T) {
	dry, _ := speech(t, 4, 0.6)
	for _, tc := range []struct {
		drr, want float64
	}{{0, 3}, {5, 2.8}, {-5, 2.8}, {-22, 1.8}} {
		if testing.Short() && tc.drr != 0 {
			continue
		}
		h := testaudio.RoomImpulse(fs, 0.7, tc.drr, 5)
		wet := testaudio.Add(convolve(dry, h), testaudio.WhiteNoise(len(dry), 1e-4, 9))
		p := analyse(t, audio.Buffer{wet}, ProfilerOptions{})
		if tc.drr <= 0 && math.Abs(p.RT60-0.7) > 0.15 {
			t.Errorf("estimated RT60 %.2f s, want 0.7", p.RT60)
		}
		in := testaudio.SISDR(dry, wet)
		ceil := testaudio.SISDR(dry, convolve(dry, h[:FFTSize(fs)])) - in
		for _, m := range []Method{Static, Dynamic, SpeechIsolation} {
			// The methods share the reverb reduction: the plain run
			// checks them in one room, to keep CI's time.
			if m != Static && (testing.Short() || tc.drr != 0) {
				continue
			}
			y, _ := denoise(t, wet, DenoiserOptions{Settings: Settings{Method: m}, Profile: p})
			got := sisdr(dry, y)
			t.Logf("DRR %+3.0f dB, RT60 est %.2f s, %-16s SI-SDR %6.2f -> %6.2f dB (%+.2f; reflections after one frame removed: %+.2f)",
				tc.drr, p.RT60, m, in, got, got-in, ceil)
			if got-in < tc.want {
				t.Errorf("DRR %+.0f dB, %s: deverb improves SI-SDR by %+.2f dB, want %+.1f", tc.drr, m, got-in, tc.want)
			}
		}
	}
	// A dry recording measures no reverberation to speak of.
	p := analyse(t, audio.Buffer{testaudio.Add(dry, testaudio.WhiteNoise(len(dry), 1e-4, 9))}, ProfilerOptions{})
	if p.RT60 > 0.2 {
		t.Errorf("dry speech: RT60 %.2f s", p.RT60)
	}
}
