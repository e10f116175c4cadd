package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/google/go-cmp/cmp"
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
		// The plain run checks the room of the acceptance under
		// each method; the others run in the long sweep
		// (AUDIOPOST_LONG=1), to keep CI's time.
		if tc.drr != 0 && !testsize.Long() {
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
			// The methods share the reverb reduction: they are checked
			// in one room, and only Static with -short.
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

// Without the room model (NoRoom, for a restoration without reverb
// reduction) the Profile says dry and learns the noise of the pauses,
// the room's tails in them too; with it, in the room of 0.7 s where the
// model finds its RT60, the noise lies at the recording's floor (white
// noise at -80 dBFS) and no bin over the noise without it, and the hum
// is the same.
func TestProfilerNoRoom(t *testing.T) {
	dry, _ := speech(t, 2, 0.6)
	h := testaudio.RoomImpulse(fs, 0.7, 0, 5)
	wet := audio.Buffer{testaudio.Add(convolve(dry, h), testaudio.WhiteNoise(len(dry), 1e-4, 9))}
	with := analyse(t, wet, ProfilerOptions{})
	without := analyse(t, wet, ProfilerOptions{NoRoom: true})
	if with.RT60 < 0.35 {
		t.Errorf("with the room model: RT60 %.2f s, want the room's 0.7", with.RT60)
	}
	if without.RT60 != 0 || !math.IsInf(without.DRRDB, 1) {
		t.Errorf("NoRoom: RT60 %.2f s, DRR %.1f dB; want 0 and +Inf (dry)", without.RT60, without.DRRDB)
	}
	if diff := cmp.Diff(with.Hum, without.Hum); diff != "" {
		t.Errorf("NoRoom changed the hum: %s", diff)
	}
	for k, v := range with.Noise {
		if v > without.Noise[k] {
			t.Errorf("bin %d: noise %.3g with the room model, %.3g without", k, v, without.Noise[k])
			break
		}
	}
	if with.NoiseDB < -83 || with.NoiseDB > -74 || without.NoiseDB < with.NoiseDB+10 {
		t.Errorf("noise %.1f dBFS with the room model, %.1f without; want the floor's -80 (+-3..6) with it, 10 dB more without", with.NoiseDB, without.NoiseDB)
	}
	r := &Restoration{Settings: Settings{Method: Classic}, Segments: []RestorationSegment{{Start: 5, Settings: Settings{Method: Dynamic, DeverbDB: -1}}}}
	if r.ReducesReverb() {
		t.Error("classic, and dynamic with deverb off, reduce reverb")
	}
	r.Segments = append(r.Segments, RestorationSegment{Start: 9, Settings: Settings{Method: SpeechIsolation}})
	if !r.ReducesReverb() || (*Restoration)(nil).ReducesReverb() {
		t.Error("a speech_isolation segment at full reverb reduction does not count, or a nil restoration does")
	}
}

// Speech cut into pieces as an editor leaves them (klettres's French
// letters): each piece fades a hiss in over 0.3 s, holds it under the
// phrase, fades it out over a second, and ends in digital silence. The
// fades are the recording's quietest frames but no floor of it: taken for
// one, the hiss (at the level of the speech above 2 kHz) is read as the
// tail of a room of 0.4 to 0.5 s, whose reduction took the held-out
// half's four such clips to 10 to 17 dB SI-SDR.
func TestProfilerFadedPieces(t *testing.T) {
	dry, spans := speech(t, 4, 0.6)
	hiss := testaudio.WhiteNoise(len(dry)+10*fs, 0.03, 3)
	var x []float64
	k := 0
	fade := func(n int, from, to float64) {
		for i := range n {
			db := from + (to-from)*float64(i)/float64(n)
			x = append(x, hiss[k]*math.Pow(10, db/20))
			k++
		}
	}
	for _, s := range spans {
		fade(int(0.3*fs), -60, 0)
		for _, v := range dry[s.Start:s.End] {
			x = append(x, v+hiss[k])
			k++
		}
		fade(int(0.8*fs), 0, -20)
		fade(int(0.2*fs), -20, -70)
		x = append(x, make([]float64, fs/50)...)
	}
	p := analyse(t, audio.Buffer{x}, ProfilerOptions{})
	if p.RT60 != 0 {
		t.Errorf("speech in faded pieces: RT60 %.2f s, DRR %.0f dB; want dry", p.RT60, p.DRRDB)
	}
}
