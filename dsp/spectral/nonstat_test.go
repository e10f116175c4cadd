package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// babble mixes n other espeak-ng voices speaking continuously.
func babble(t testing.TB, length, voices int) []float64 {
	out := make([]float64, length)
	for v := 0; v < voices; v++ {
		var x []float64
		for i := 0; len(x) < length; i++ {
			s := testaudio.TrimSilence(testaudio.Speech(t, fs, testaudio.Sentences[(i*3+v*5+4)%len(testaudio.Sentences)], testaudio.Voices[3+v%3]), 1e-4)
			x = append(x, s...)
		}
		// Start each voice at another point so they do not pause together.
		off := (v * 37 * fs / 10) % len(x)
		for i := range out {
			out[i] += x[(i+off)%len(x)]
		}
	}
	return out
}

// traffic is low-heavy noise under cars passing every few seconds.
func traffic(length int, seed uint64) []float64 {
	nz := testaudio.PinkNoise(length, 1, seed)
	r := audiotest.NewRand(seed + 1)
	// One-pole low-pass at 800 Hz for the tyre and engine roar.
	a := 1 - math.Exp(-2*math.Pi*800/fs)
	var lp float64
	env := make([]float64, length)
	for c := 0.0; c < float64(length)/fs+3; c += 2.5 + 2*math.Abs(r.Float()) {
		w := 0.6 + 0.5*math.Abs(r.Float())
		for i := range env {
			d := (float64(i)/fs - c) / w
			env[i] += 1.5 * math.Exp(-d*d)
		}
	}
	out := make([]float64, length)
	for i := range out {
		lp += a * (nz[i] - lp)
		out[i] = lp * (0.3 + env[i])
	}
	return out
}

// Speech under non-stationary noise at 5 dB SNR: traffic, whose level
// swells under the voice while its spectrum keeps its shape, must gain
// 3.9 dB of SI-SDR to SpeechIsolation (4.2 until the per-bin stage under
// 2 kHz, isofine.go: +3.98/+4.02 with it, while the real babble and music
// gained +0.5/+1.2 dB on the tuning half, +0.9/+0.5 held out; 4.3 until its network saw the
// pitch's harmonics, isonet.go's combShares: +4.29/+4.32 with the
// classifier's/true voice activity, while the held-out half's real
// babble and music gained +0.23/+0.74 dB); babble changes its spectrum with
// every syllable and is only logged. Before speech isolation had its
// background mask (isolate.go) and subtracted twice the profile's shape
// at the frame's level, traffic gained 5.1 dB with the classifier's
// voice activity and 7.4 with the true one; the mask and Dynamic's gain
// after it gain 4.5 with either, and the threshold follows (set after
// that measurement): on the real recordings of the tuning half, where
// the figures count, the old gain lost up to 4.8 dB on babble and music
// and gained +0.0 on both, the mask +0.9 and +1.8 (TestRealSpeechIsolation).
func TestNonStationaryNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes babble")
	}
	clean, spans := speech(t, 5, 0.6)
	for _, tc := range []struct {
		name  string
		noise []float64
		want  float64
	}{
		{"traffic", traffic(len(clean), 3), 3.9},
		{"babble", babble(t, len(clean), 4), 0},
	} {
		mix, _ := testaudio.MixAtSNR(clean, tc.noise, 5)
		in := testaudio.SISDR(clean, mix)
		// The profile as the product makes it, with the classifier's voice
		// activity on the noisy input, and with the phrases' true spans
		// widened by a block either side.
		for _, v := range []struct {
			name string
			vad  []bool
		}{{"classifier VAD", classifyVAD(t, audio.Buffer{mix})}, {"true VAD", truthVAD(spans, len(mix), BlockFrames(fs))}} {
			p := analyse(t, audio.Buffer{mix}, ProfilerOptions{VAD: v.vad})
			free := 0
			for _, b := range v.vad {
				if !b {
					free++
				}
			}
			t.Logf("%s, %s: %d of %d blocks free of voice, profile from the VAD: %v", tc.name, v.name, free, len(v.vad), p.FromVAD)
			for _, m := range []Method{Static, Dynamic, SpeechIsolation} {
				y, _ := denoise(t, mix, DenoiserOptions{Settings: Settings{Method: m, DeverbDB: -1}, Profile: p})
				got := sisdr(clean, y) - in
				t.Logf("%-8s %-16s SI-SDR %.2f -> %.2f dB (%+.2f)", tc.name, m, in, in+got, got)
				if m == SpeechIsolation && got < tc.want {
					t.Errorf("%s, %s: speech isolation gains %+.2f dB, want %+.1f", tc.name, v.name, got, tc.want)
				}
			}
		}
	}
}

// truthVAD marks the blocks of the spans, widened by a block either side.
func truthVAD(spans []audio.Span, n, blk int) []bool {
	vad := make([]bool, (n+blk-1)/blk)
	for _, sp := range spans {
		for b := max(0, int(sp.Start)-blk) / blk; b <= min(n-1, int(sp.End)+blk)/blk; b++ {
			vad[b] = true
		}
	}
	return vad
}
