package spectral

import (
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// peersBeside logs ffmpeg's afftdn beside TestStationaryNoise's methods
// (go test -run TestStationaryNoise -v -args -peers): a figure for the
// reader that no threshold checks, so the plain run leaves it out (its
// four ffmpeg runs and their alignment were a third of the test's CPU).
// The peers are measured where their figures count: on real noise, by
// TestRealNoisySpeech -realfull and the quality report.
var peersBeside = flag.Bool("peers", false, "log ffmpeg's afftdn beside TestStationaryNoise's methods")

// afftdnSISDR runs ffmpeg's afftdn at its defaults and measures it after
// aligning for its delay (afftdn does not compensate its own latency).
func afftdnSISDR(t *testing.T, clean, mix []float64, args string) float64 {
	y := afftdn(t, mix, args)
	// afftdn's delay is fixed: measure it on a second of loud speech.
	n := min(len(mix), 2*fs)
	d := testaudio.Lag(mix[fs/2:n], y[fs/2:n], 1500)
	return testaudio.SISDR(clean, testaudio.Shift(y, d))
}

// Stationary noise under speech: the Static denoiser (profile from the
// Profiler's pass) must gain 5 dB SI-SDR on pink noise at 14 dB SNR and
// 9 dB on white noise at 9 dB SNR; with -peers afftdn is measured beside it.
func TestStationaryNoise(t *testing.T) {
	clean, _ := speech(t, 5, 0.8)
	for _, tc := range []struct {
		name       string
		snr        float64
		noise      []float64
		wantStatic float64
	}{
		{"pink", 14, testaudio.PinkNoise(len(clean), 0.1, 7), 5},
		{"white", 9, testaudio.WhiteNoise(len(clean), 0.1, 8), 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mix, _ := testaudio.MixAtSNR(clean, tc.noise, tc.snr)
			in := testaudio.SISDR(clean, mix)
			gain := map[Method]float64{}
			for _, m := range []Method{Classic, Static, Dynamic, SpeechIsolation} {
				if testing.Short() && m != Static {
					continue
				}
				y, _ := denoise(t, mix, DenoiserOptions{Settings: Settings{Method: m, DeverbDB: -1}})
				gain[m] = sisdr(clean, y) - in
				t.Logf("%-16s SI-SDR %.2f -> %.2f dB (%+.2f)", m, in, in+gain[m], gain[m])
			}
			if gain[Static] < tc.wantStatic {
				t.Errorf("static improves SI-SDR by %+.2f dB, want %+.1f or more", gain[Static], tc.wantStatic)
			}
			if !testing.Short() && gain[Dynamic] < tc.wantStatic-1.5 {
				t.Errorf("dynamic improves SI-SDR by %+.2f dB, want %+.1f or more", gain[Dynamic], tc.wantStatic-1.5)
			}
			if *peersBeside {
				if _, ok := need.HasProgram(t, "ffmpeg"); ok {
					ff := afftdnSISDR(t, clean, mix, "") - in
					t.Logf("%-16s SI-SDR %.2f -> %.2f dB (%+.2f)", "afftdn defaults", in, in+ff, ff)
					// afftdn told the measured noise floor and tracking it.
					nf := min(-20, max(-80, math.Round(analyse(t, audio.Buffer{mix}, ProfilerOptions{}).NoiseDB)))
					args := fmt.Sprintf("nf=%.0f:tn=1", nf)
					ff = afftdnSISDR(t, clean, mix, args) - in
					t.Logf("%-16s SI-SDR %.2f -> %.2f dB (%+.2f)", "afftdn "+args, in, in+ff, ff)
				}
			}
		})
	}
}

// Clean speech must come through every method nearly unchanged.
func TestCleanSpeechKept(t *testing.T) {
	n := 4
	if testing.Short() {
		n = 2
	}
	clean, _ := speech(t, n, 0.6)
	// A faint noise floor (-80 dBFS) as any real recording has.
	x := testaudio.Add(clean, testaudio.WhiteNoise(len(clean), 1e-4, 3))
	for _, m := range []Method{Classic, Static, Dynamic, SpeechIsolation, Music, Off} {
		y, _ := denoise(t, x, DenoiserOptions{Settings: Settings{Method: m}}) // deverb at its default, full
		got := sisdr(clean, y)
		t.Logf("%-16s SI-SDR %.1f dB (RT60 est %.2f)", m, got, analyse(t, audio.Buffer{x}, ProfilerOptions{}).RT60)
		if got < 25 {
			t.Errorf("%s: clean speech SI-SDR %.1f dB, want 25 or more", m, got)
		}
	}
}

// The noise estimate of the Profiler matches the noise that was added.
func TestProfilerNoiseAndSNR(t *testing.T) {
	clean, spans := speech(t, 4, 0.8)
	noise := testaudio.PinkNoise(len(clean), 0.1, 11)
	mix, scaled := testaudio.MixAtSNR(clean, noise, 15)
	p := analyse(t, audio.Buffer{mix}, ProfilerOptions{})
	want := testaudio.DB(scaled)
	t.Logf("noise %.1f dBFS (true %.1f), speech %.1f, SNR %.1f dB", p.NoiseDB, want, p.SpeechDB, p.SNRDB)
	if math.Abs(p.NoiseDB-want) > 1.5 {
		t.Errorf("noise level %.1f dBFS, want %.1f", p.NoiseDB, want)
	}
	if p.SNRDB < 10 || p.SNRDB > 22 {
		t.Errorf("SNR %.1f dB for a 15 dB mix", p.SNRDB)
	}
	// With the truth passed as a VAD mask the profile comes from the pauses.
	blk := BlockFrames(fs)
	vad := make([]bool, (len(mix)+blk-1)/blk)
	for _, sp := range spans {
		for b := int(sp.Start) / blk; b <= int(sp.End-1)/blk; b++ {
			vad[b] = true
		}
	}
	q := analyse(t, audio.Buffer{mix}, ProfilerOptions{VAD: vad})
	t.Logf("with VAD: noise %.1f dBFS, SNR %.1f dB, from VAD %v", q.NoiseDB, q.SNRDB, q.FromVAD)
	if !q.FromVAD || math.Abs(q.NoiseDB-want) > 1.5 {
		t.Errorf("with VAD: noise %.1f dBFS (from VAD %v), want %.1f", q.NoiseDB, q.FromVAD, want)
	}
}
