package spectral

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestDvMaskUnits checks that the learned reverb mask's units cover every
// bin once, in order: one a bin under dvMaskFineHz, wider above.
func TestDvMaskUnits(t *testing.T) {
	for _, sr := range []int{16000, 44100, 48000} {
		n := FFTSize(sr)
		lo := dvMaskUnits(sr, n)
		if lo[0] != 0 || lo[len(lo)-1] != n/2+1 {
			t.Fatalf("%d Hz: units span bins %d to %d of %d", sr, lo[0], lo[len(lo)-1], n/2+1)
		}
		hz := float64(sr) / float64(n)
		for u := range len(lo) - 1 {
			w := lo[u+1] - lo[u]
			if w < 1 || (float64(lo[u])*hz < dvMaskFineHz && w != 1) {
				t.Fatalf("%d Hz: unit %d holds bins %d to %d", sr, u, lo[u], lo[u+1]-1)
			}
		}
		t.Logf("%d Hz: %d units for %d bins", sr, len(lo)-1, n/2+1)
	}
}

// The learned mask reads dvMaskAhead hops ahead: a Static Denoiser with a
// Profile that serves it (a room given by its RT60 is taken at DRR 0 dB)
// holds that many hops more in its latency than one without it (a causal
// one, which has none), and its output still lines up with its input whatever the
// block size it is read with; the reverb reduction takes the room down.
func TestDvMaskAheadAligns(t *testing.T) {
	dry, _ := speech(t, 4, 0.6)
	h := testaudio.RoomImpulse(fs, 0.7, 0, 5)
	wet := convolve(dry, h)[:len(dry)]
	p := analyse(t, audio.Buffer{wet}, ProfilerOptions{})
	mk := func(causal bool) *Denoiser {
		d, err := NewDenoiser(audio.NewBufferSource(audio.Buffer{wet}, fs), DenoiserOptions{Settings: Settings{Method: Static, ReductionDB: -1}, Profile: p, RT60: 0.7, Causal: causal})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	on, off := mk(false), mk(true)
	if on.dvm == nil || off.dvm != nil {
		t.Fatalf("mask served: %v in a Denoiser with look-ahead, %v in a causal one", on.dvm != nil, off.dvm != nil)
	}
	if got, want := on.Latency()-off.Latency(), dvMaskAhead*on.hop; got != want {
		t.Errorf("the mask adds %d frames of latency, want %d (dvMaskAhead hops)", got, want)
	}
	read := func(d *Denoiser, block int) []float64 {
		var out []float64
		buf := audio.NewBuffer(1, block)
		for {
			n, err := d.Read(buf)
			out = append(out, buf[0][:n]...)
			if err != nil {
				break
			}
		}
		return out
	}
	a, b := read(on, 1000), read(mk(false), 4321)
	if len(a) != len(wet) || len(b) != len(wet) {
		t.Fatalf("%d and %d frames out of %d", len(a), len(b), len(wet))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("frame %d: %g read in blocks of 1000, %g in blocks of 4321", i, a[i], b[i])
		}
	}
	if lag := testaudio.Lag(dry, a, 4*FFTSize(fs)); lag != 0 {
		t.Errorf("output %d frames behind the dry speech, want 0", lag)
	}
	if g := testaudio.SISDR(dry, a) - testaudio.SISDR(dry, wet); g < 3 {
		t.Errorf("SI-SDR gain %+.2f dB with the mask, want +3 or more", g)
	}
}

// dvMaskLongGainDB is the least mean SI-SDR gain the mask of the rooms
// over dvMaskDRR (dvMaskLongModel) must make over the rule alone in
// TestDvMaskLongRooms: the held-out half's figure rounded down (+0.62
// dB over 3 rooms, -realfull after the choice; +0.46 over 4 with the
// mask served at every RT60).
const dvMaskLongGainDB = 0.6

// In the rooms the room model puts over dvMaskDRR and at dvMaskLongDRR
// or under (at dvMaskLongRT60 or more), the mask of those rooms gains
// over the rule alone: the half's speech in the first 24 image-source
// rooms TestDeverbWideRooms draws (seed 30), static, noise reduction
// automatic, each room with and without the mask. The tuning half's
// speech puts 7 of them there (all at +3 dB), where the mask gains
// +0.66 dB SI-SDR over the rule (+3.27 against +2.62), in each of the
// 7; the held-out half's 3, +0.62 (+3.93 against +3.31).
func TestDvMaskLongRooms(t *testing.T) {
	c := realCorpus(t)
	cases := wideCases(c.Clips(), wideRooms(t, 24, 30))
	type result struct {
		long         bool
		drr, on, off float64
	}
	got := make([]result, len(cases))
	parallel(len(cases), func(i int) {
		rc := cases[i]
		p := analyse(t, audio.Buffer{rc.input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{rc.input})})
		if p.DRRDB <= dvMaskDRR || dvMaskFor(p.DRRDB, p.RT60) != &dvMaskLongModel {
			return
		}
		in := testaudio.SISDR(rc.dry, rc.input)
		run := func(mask bool) float64 {
			d, err := NewDenoiser(audio.NewBufferSource(audio.Buffer{rc.input}, fs), DenoiserOptions{Settings: Settings{Method: Static}, Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			if !mask {
				d.dvm = nil
			}
			return testaudio.SISDR(rc.dry, testaudio.ReadAll(t, d)[0]) - in
		}
		got[i] = result{true, p.DRRDB, run(true), run(false)}
	})
	var n int
	var on, off float64
	for i, r := range got {
		if !r.long {
			continue
		}
		n++
		on += r.on
		off += r.off
		t.Logf("%-30s DRR %+.0f dB: SI-SDR gain %+.2f dB with the mask, %+.2f with the rule alone", cases[i].id, r.drr, r.on, r.off)
	}
	if n < 3 {
		t.Fatalf("%d of %d rooms served by the mask of the rooms over %.1f dB, want 3 or more", n, len(cases), dvMaskDRR)
	}
	d := (on - off) / float64(n)
	t.Logf("%s half, %d rooms: the mask %+.2f dB over the rule (%+.2f against %+.2f)", c.Half, n, d, on/float64(n), off/float64(n))
	if d < dvMaskLongGainDB {
		t.Errorf("the mask of the rooms over %.1f dB gains %+.2f dB SI-SDR over the rule, want %+.1f or more", dvMaskDRR, d, dvMaskLongGainDB)
	}
}
