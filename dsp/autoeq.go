package dsp

import (
	"math"
	"sort"

	"github.com/audiopost/audiopost/audio"
)

// The auto-EQ corrects the voiced long-term spectrum toward a neutral
// speech target: flat third-octave band power up to 500 Hz and a slope of
// -3.3 dB per octave above, the shape of the long-term average speech
// spectrum (Byrne et al. 1994). It uses a low shelf, three peaking bands
// and a high shelf, corrects only part of each deviation and bounds every
// gain, so it can only be gentle.
const (
	autoEQShare    = 0.75 // fraction of a deviation that is corrected
	autoEQMaxPeak  = 6.0  // dB, peaking bands
	autoEQMaxShelf = 4.0  // dB, shelves
	autoEQMinGain  = 0.5  // dB: smaller corrections are left out
)

func speechTarget(f float64) float64 {
	if f <= 500 {
		return 0
	}
	return -3.3 * math.Log2(f/500)
}

// EQBand is one band an AutoEQ decided on.
type EQBand struct {
	// Kind is "lowshelf", "peaking" or "highshelf".
	Kind string
	// Freq is the centre or corner frequency in Hz.
	Freq float64
	// GainDB is the boost (positive) or cut.
	GainDB float64
}

// AutoEQBands designs the correction for an analysis. Bands above the
// recording's bandwidth (see Bandwidth) are never boosted: there is nothing
// there to bring out but noise.
func AutoEQBands(an *Analysis) []EQBand {
	sp := an.Spectrum(true)
	if len(sp) == 0 || an.voiceThreshold() == math.Inf(1) {
		return nil
	}
	fs := float64(an.Format.SampleRate)
	top := math.Min(an.Bandwidth(), 0.45*fs)
	dev := func(lo, hi float64) (float64, bool) {
		var s float64
		n := 0
		for _, b := range sp {
			if b.Centre >= lo && b.Centre < hi && b.Centre <= top {
				s += b.Level - speechTarget(b.Centre)
				n++
			}
		}
		if n == 0 {
			return 0, false
		}
		return s / float64(n), true
	}
	// The reference is the median deviation over the core speech bands, so
	// one strong resonance does not shift it.
	var core []float64
	for _, b := range sp {
		if b.Centre >= 250 && b.Centre < 4000 && b.Centre <= top {
			core = append(core, b.Level-speechTarget(b.Centre))
		}
	}
	if len(core) == 0 {
		return nil
	}
	sort.Float64s(core)
	ref := core[len(core)/2]
	type design struct {
		kind   string
		f, lo  float64
		hi     float64
		bound  float64
		onlyUp bool
	}
	designs := []design{
		{"lowshelf", 200, 125, 250, autoEQMaxShelf, false},
		{"peaking", 500, 355, 710, autoEQMaxPeak, false},
		{"peaking", 1000, 710, 1420, autoEQMaxPeak, false},
		{"peaking", 2500, 1780, 3550, autoEQMaxPeak, false},
		{"highshelf", 6000, 5000, 12500, autoEQMaxShelf, false},
	}
	var out []EQBand
	var want []float64
	var spans [][2]float64
	var bounds []float64
	for _, d := range designs {
		if d.f > 0.4*fs || d.lo > top {
			continue
		}
		v, ok := dev(d.lo, d.hi)
		if !ok {
			continue
		}
		g := -autoEQShare * (v - ref)
		if d.kind == "highshelf" && d.hi > top {
			g = math.Min(g, 0) // never boost what the recording lacks
		}
		g = math.Max(-d.bound, math.Min(d.bound, g))
		out = append(out, EQBand{Kind: d.kind, Freq: d.f, GainDB: g})
		want = append(want, g)
		spans = append(spans, [2]float64{d.lo, math.Min(d.hi, top)})
		bounds = append(bounds, d.bound)
	}
	// Neighbouring bands overlap and a band's average over its span is less
	// than its centre gain: refine the gains a few times so that the whole
	// cascade's mean response over each span is what that span asked for.
	for iter := 0; iter < 8; iter++ {
		sec := eqSections(out, fs)
		for k := range out {
			var got float64
			n := 0
			for _, b := range sp {
				if b.Centre >= spans[k][0] && b.Centre < spans[k][1] {
					got += CascadeResponse(sec, fs, b.Centre)
					n++
				}
			}
			if n == 0 {
				continue
			}
			g := out[k].GainDB + 0.7*(want[k]-got/float64(n))
			out[k].GainDB = math.Max(-bounds[k], math.Min(bounds[k], g))
		}
	}
	kept := out[:0]
	for _, b := range out {
		if math.Abs(b.GainDB) >= autoEQMinGain {
			kept = append(kept, b)
		}
	}
	return kept
}

// eqSections returns the biquad sections of the bands at sample rate fs.
func eqSections(bands []EQBand, fs float64) []Coeffs {
	var s []Coeffs
	for _, b := range bands {
		switch b.Kind {
		case "lowshelf":
			s = append(s, LowShelfCoeffs(fs, b.Freq, b.GainDB))
		case "highshelf":
			s = append(s, HighShelfCoeffs(fs, b.Freq, b.GainDB))
		default:
			s = append(s, PeakingCoeffs(fs, b.Freq, 1.0, b.GainDB))
		}
	}
	return s
}

// AutoEQ is the adaptive equalizer (filtermethod autoeq): the adaptive
// high-pass followed by the bands AutoEQBands chose.
type AutoEQ struct {
	*Biquad
	bands  []EQBand
	corner float64
}

// NewAutoEQ returns src equalized according to an.
func NewAutoEQ(src audio.Source, an *Analysis) (*AutoEQ, error) {
	fs := float64(src.Format().SampleRate)
	corner := math.Min(HighPassCorner(an), 0.45*fs)
	bands := AutoEQBands(an)
	sec := append(ButterworthHighPass(fs, corner, highPassOrder), eqSections(bands, fs)...)
	b, err := NewBiquad(src, sec...)
	if err != nil {
		return nil, err
	}
	return &AutoEQ{Biquad: b, bands: bands, corner: corner}, nil
}

// Bands returns the equalizer bands in use (after the high-pass).
func (e *AutoEQ) Bands() []EQBand { return e.bands }

// Corner returns the high-pass corner in Hz.
func (e *AutoEQ) Corner() float64 { return e.corner }
