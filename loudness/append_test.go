package loudness

import (
	"errors"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// halvesSignal is 40 s of stereo whose level changes every few seconds,
// with a quiet stretch across the join the tests use (20 s), so that every
// gate, the loudness range and the dialog blocks see both halves.
func halvesSignal(rate int) audio.Buffer {
	n := 40 * rate
	b := audio.Buffer{testaudio.PinkNoise(n, 1, 1), testaudio.PinkNoise(n, 1, 2)}
	for i := range n {
		t := float64(i) / float64(rate)
		g := 0.1 * (1 + 0.8*math.Sin(2*math.Pi*t/7))
		if t > 19.2 && t < 20.6 {
			g *= 0.01
		}
		b[0][i] *= g
		b[1][i] *= 0.7 * g
	}
	return b
}

// measureHalves measures b with one meter and with two that meet at
// split (the second primed with the prime frames before it) and returns
// both results and both hop sequences.
func measureHalves(t *testing.T, b audio.Buffer, rate, split, prime int, opts Options) (whole, joined Result, hw, hj []float64) {
	t.Helper()
	f := audio.Format{SampleRate: rate, Channels: len(b)}
	o := opts
	o.OnHop = func(e float64) { hw = append(hw, e) }
	m, err := NewMeter(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(b); err != nil {
		t.Fatal(err)
	}
	o.OnHop = func(e float64) { hj = append(hj, e) }
	a, err := NewMeter(f, o)
	if err != nil {
		t.Fatal(err)
	}
	var hb []float64
	o.OnHop = func(e float64) { hb = append(hb, e) }
	o.Offset = int64(split)
	c, err := NewMeter(f, o)
	if err != nil {
		t.Fatal(err)
	}
	slice := func(lo, hi int) audio.Buffer { return audio.Buffer{b[0][lo:hi], b[1][lo:hi]} }
	// Written in odd-sized pieces, as a pipeline's blocks would come.
	for lo := 0; lo < split; lo += 3001 {
		if err := a.Write(slice(lo, min(lo+3001, split))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Prime(slice(max(split-prime, 0), split)); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(slice(split, len(b[0]))); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(c); err != nil {
		t.Fatal(err)
	}
	return m.Result(), a.Result(), hw, append(hj, hb...)
}

func TestAppendMeasuresAsOneMeter(t *testing.T) {
	const rate = 48000
	b := halvesSignal(rate)
	speech := []audio.Span{{Start: 2 * rate, End: 9 * rate}, {Start: 18 * rate, End: 23 * rate}, {Start: 30 * rate, End: 38 * rate}}
	opts := Options{Mode: ModeM | ModeS | ModeI | ModeLRA | ModeRMS | ModeSamplePeak | ModeLevels, Speech: speech}
	for _, split := range []int{20 * rate, 2 * StepFrames(rate), 39 * rate} {
		whole, joined, hw, hj := measureHalves(t, b, rate, split, rate/2, opts)
		for _, c := range []struct {
			name string
			w, j float64
		}{
			{"integrated", whole.Integrated, joined.Integrated},
			{"dialog", whole.Dialog, joined.Dialog},
			{"LRA", whole.LRA, joined.LRA},
			{"max momentary", whole.MaxMomentary, joined.MaxMomentary},
			{"max short-term", whole.MaxShortTerm, joined.MaxShortTerm},
			{"RMS", whole.RMS, joined.RMS},
			{"sample peak", whole.SamplePeak, joined.SamplePeak},
			{"noise level", whole.NoiseLevel, joined.NoiseLevel},
			{"signal level", whole.SignalLevel, joined.SignalLevel},
		} {
			if !Defined(c.w) || math.Abs(c.w-c.j) > 1e-6 {
				t.Errorf("split at %d: %s %.9f, joined %.9f", split, c.name, c.w, c.j)
			}
		}
		if whole.Frames != joined.Frames {
			t.Errorf("split at %d: %d frames, joined %d", split, whole.Frames, joined.Frames)
		}
		if len(hw) != len(hj) {
			t.Fatalf("split at %d: %d hops, joined %d", split, len(hw), len(hj))
		}
		for i := range hw {
			if math.Abs(hw[i]-hj[i]) > 1e-9*max(hw[i], 1e-12) {
				t.Fatalf("split at %d: hop %d %g, joined %g", split, i, hw[i], hj[i])
			}
		}
	}
}

// Without priming, the second meter's filters start from rest and the
// hops after the join differ: what Prime is for.
func TestPrimeMatters(t *testing.T) {
	const rate = 48000
	b := halvesSignal(rate)
	split := 10 * rate
	_, _, hw, hj := measureHalves(t, b, rate, split, 0, Options{Mode: ModeI})
	j := split / HopStart(rate, 1)
	if d := math.Abs(hw[j]-hj[j]) / hw[j]; d < 1e-6 {
		t.Errorf("unprimed first hop after the join within %g of the whole's", d)
	}
}

func TestAppendRefuses(t *testing.T) {
	f := audio.Format{SampleRate: 48000, Channels: 2}
	mk := func(o Options) *Meter {
		m, err := NewMeter(f, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := mk(Options{Mode: ModeI})
	a.Write(audio.NewBuffer(2, 1000)) // not a whole step
	if err := a.Append(mk(Options{Mode: ModeI, Offset: 1000})); !errors.Is(err, ErrAppend) {
		t.Errorf("join inside a step: %v", err)
	}
	a = mk(Options{Mode: ModeI})
	a.Write(audio.NewBuffer(2, 4800))
	if err := a.Append(mk(Options{Mode: ModeI, Offset: 9600})); !errors.Is(err, ErrAppend) {
		t.Errorf("gap between the meters: %v", err)
	}
	if err := a.Append(mk(Options{Mode: ModeI | ModeRMS, Offset: 4800})); !errors.Is(err, ErrAppend) {
		t.Errorf("other mode: %v", err)
	}
	tp := mk(Options{Mode: ModeTruePeak})
	if err := tp.Append(mk(Options{Mode: ModeTruePeak})); !errors.Is(err, ErrAppend) {
		t.Errorf("true peak: %v", err)
	}
	if err := tp.Prime(audio.NewBuffer(2, 10)); !errors.Is(err, ErrAppend) {
		t.Errorf("true peak primed: %v", err)
	}
	if _, err := NewMeter(f, Options{Offset: -1}); err == nil {
		t.Error("negative offset accepted")
	}
}
