package dsp

import (
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Bandwidth estimates the recording's upper band edge in Hz. It looks for
// the highest steep edge in the long-term spectrum (smoothed over 1/6
// octave): a fall of more than 12 dB over the next half octave (24 dB per
// octave, far steeper than any voice's natural roll-off) while still within
// 40 dB of the 300 Hz-2 kHz average, and returns where that fall starts.
// Without such an edge (a full-band recording) or without a spectrum
// analysis it returns Nyquist.
func (an *Analysis) Bandwidth() float64 {
	nyq := float64(an.Format.SampleRate) / 2
	db, hz := an.FineSpectrum()
	if db == nil {
		return nyq
	}
	level := func(f float64) float64 {
		lo := max(1, int(f*math.Pow(2, -1.0/12)/hz))
		hi := min(len(db)-1, int(math.Ceil(f*math.Pow(2, 1.0/12)/hz)))
		var s float64
		for j := lo; j <= hi; j++ {
			s += db[j]
		}
		return s / float64(hi-lo+1)
	}
	var ref float64
	n := 0
	for f := 300.0; f <= 2000; f *= math.Pow(2, 1.0/12) {
		ref += level(f)
		n++
	}
	ref /= float64(n)
	step := math.Pow(2, 1.0/24)
	drop := func(f float64) float64 { return level(f) - level(f*math.Sqrt2) }
	for f := nyq / math.Sqrt2 / step; f >= 1000; f /= step {
		if drop(f) > 12 && level(f) > ref-40 {
			for f/step >= 1000 && drop(f/step) > 12 {
				f /= step
			}
			return f
		}
	}
	return nyq
}

// BandLimited reports whether a recording lacks its high band (below 80%
// of Nyquist and below 12 kHz), which is when bandwidth extension helps.
func (an *Analysis) BandLimited() bool {
	bw := an.Bandwidth()
	return bw < 0.8*float64(an.Format.SampleRate)/2 && bw < 12000
}

// Level of the synthesized band relative to the octave below the cutoff:
// speech spectra fall by several dB per octave up there, and a band that
// is too weak is inaudible while one that is too strong sounds harsh.
const bweLevelDB = -8.0

// BWE is bandwidth extension for band-limited input (filtermethod bwe):
// the top octave below the cutoff is full-wave rectified, which creates its
// harmonics, the harmonics above the cutoff are kept by a steep high-pass,
// and they are mixed in at a level that follows the octave below (adaptive
// envelope matching, so the new band breathes with the voice and stays
// silent in pauses). Input that is not band-limited passes unchanged.
type BWE struct {
	src    audio.Source
	ch     int
	cutoff float64 // 0: pass through
	band   *cascade
	high   *cascade
	envS   []float64
	envG   []float64
	coef   float64
	mix    float64
	tmp    []float64
	gen    []float64
}

// NewBWE returns src with its missing high band synthesized, if an says it
// is band-limited.
func NewBWE(src audio.Source, an *Analysis) (*BWE, error) {
	cutoff := 0.0
	if an != nil && an.BandLimited() {
		cutoff = an.Bandwidth()
	}
	return NewBWEAt(src, cutoff)
}

// NewBWEAt extends src above a given cutoff in Hz; 0 passes src through.
func NewBWEAt(src audio.Source, cutoff float64) (*BWE, error) {
	f := src.Format()
	fs := float64(f.SampleRate)
	b := &BWE{src: src, ch: f.Channels}
	if cutoff <= 0 || cutoff >= 0.4*fs {
		return b, nil
	}
	band := append([]Coeffs{HighPassCoeffs(fs, cutoff/2, math.Sqrt2/2)}, ButterworthLowPass(fs, cutoff, 4)...)
	high := append(ButterworthHighPass(fs, 1.05*cutoff, 8), LowPassCoeffs(fs, math.Min(2.2*cutoff, 0.45*fs), math.Sqrt2/2))
	var err error
	if b.band, err = newCascade(band, f.Channels); err != nil {
		return nil, err
	}
	if b.high, err = newCascade(high, f.Channels); err != nil {
		return nil, err
	}
	b.cutoff = cutoff
	b.envS = make([]float64, f.Channels)
	b.envG = make([]float64, f.Channels)
	b.coef = 1 - math.Exp(-1/(0.03*fs)) // 30 ms envelope
	b.mix = DBToGain(bweLevelDB)
	return b, nil
}

// Cutoff returns the frequency above which the band is synthesized, 0 when
// the node passes its input through.
func (b *BWE) Cutoff() float64 { return b.cutoff }

// Format implements audio.Source.
func (b *BWE) Format() audio.Format { return b.src.Format() }

// Read implements audio.Source.
func (b *BWE) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, b.ch); err != nil {
		return 0, err
	}
	n, err := b.src.Read(dst)
	if n == 0 || b.cutoff == 0 {
		return n, err
	}
	if cap(b.tmp) < n {
		b.tmp = make([]float64, n)
		b.gen = make([]float64, n)
	}
	for c := 0; c < b.ch; c++ {
		x := dst[c][:n]
		s := b.tmp[:n]
		g := b.gen[:n]
		copy(s, x)
		b.band.run(c, s)
		for i, v := range s {
			g[i] = math.Abs(v)
		}
		b.high.run(c, g)
		es, eg := b.envS[c], b.envG[c]
		for i := range x {
			es += (s[i]*s[i] - es) * b.coef
			eg += (g[i]*g[i] - eg) * b.coef
			// Match the generated band's envelope to the source octave's,
			// bounded so a near-silent generator is never blown up.
			k := math.Min(math.Sqrt(es/(eg+1e-20)), 30)
			x[i] += b.mix * k * g[i]
		}
		b.envS[c], b.envG[c] = es, eg
	}
	return n, err
}
