package live

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// DehumOptions configure the causal hum remover. The values follow the
// API: Base is dehum, ReductionDB dehumamount.
type DehumOptions struct {
	// Base is the mains frequency, 50 or 60 Hz; 0 follows whichever of
	// the two the past shows.
	Base int
	// ReductionDB caps the reduction: 0 removes the hum fully, 3..100
	// removes that many dB of each harmonic.
	ReductionDB float64
}

// The hum remover's constants.
const (
	// dehumMaxHz is the highest harmonic removed.
	dehumMaxHz = 400.0
	// dehumTau is the memory, in seconds, of each harmonic's estimate.
	dehumTau = 2.0
	// Coherence below dehumCohLo (noise, speech) removes nothing, above
	// dehumCohHi (a steady tone) everything, in between a share.
	dehumCohLo, dehumCohHi = 0.3, 0.7
)

// family is the estimator of one mains frequency's harmonics.
type family struct {
	base  int
	block int // frames: two periods of the base
	k     int // harmonics
	rot   []complex128
	// Per channel and harmonic: the phasor now, the block's demodulated
	// sum, and the weighted running sums of the estimate (num), of its
	// power (pow, with the squared weights) and the weights (den, and
	// den2 squared, per channel).
	z, acc, num []complex128
	start       []complex128 // the phasors at the start of the run
	pow         []float64
	den, den2   []float64
	blkPow      []float64 // per channel: the block's power
	est         []complex128
	gain        []float64 // per channel and harmonic, 0..1: what is subtracted
	lambda      float64
	energy      float64 // coherent energy of the family (for Base 0)
}

func newFamily(base, rate, channels int) *family {
	f := &family{base: base, k: int(dehumMaxHz) / base}
	f.block = max(1, int(math.Round(2*float64(rate)/float64(base))))
	f.rot = make([]complex128, f.k)
	for h := range f.rot {
		f.rot[h] = cmplx.Rect(1, 2*math.Pi*float64(base*(h+1))/float64(rate))
	}
	n := channels * f.k
	f.z, f.acc, f.num, f.est = make([]complex128, n), make([]complex128, n), make([]complex128, n), make([]complex128, n)
	f.start = make([]complex128, n)
	f.pow, f.gain = make([]float64, n), make([]float64, n)
	f.den, f.den2, f.blkPow = make([]float64, channels), make([]float64, channels), make([]float64, channels)
	for i := range f.z {
		f.z[i] = 1
	}
	f.lambda = math.Exp(-float64(f.block) / (dehumTau * float64(rate)))
	return f
}

// Dehum removes mains hum causally: each harmonic of the mains frequency
// is demodulated over blocks of two periods, and its complex amplitude
// estimated from the past two seconds of blocks, each weighted by the
// inverse of its power so that pauses count and the voice hardly does;
// the sinusoid of that amplitude is subtracted sample by sample, without
// delay. A harmonic is subtracted in proportion to how steady it has been
// (the coherence of its blocks): a tone that is there all the time goes,
// speech and noise at its frequency stay. spectral.Dehum does better with
// two seconds of look-ahead; a live stream cannot wait for them.
type Dehum struct {
	src   audio.Source
	ch    int
	fams  []*family
	use   int // the family subtracted, -1: none yet (Base 0)
	keep  float64
	pos   int64
	done  bool
	err   error
	autoB bool
}

// NewDehum returns src with mains hum removed as o says.
func NewDehum(src audio.Source, o DehumOptions) (*Dehum, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.Base != 0 && o.Base != 50 && o.Base != 60 {
		return nil, fmt.Errorf("%w: dehum base %d Hz (0, 50 or 60)", dsp.ErrInvalidParameter, o.Base)
	}
	if math.IsNaN(o.ReductionDB) || o.ReductionDB < 0 || o.ReductionDB > 100 {
		return nil, fmt.Errorf("%w: dehum amount %g dB", dsp.ErrInvalidParameter, o.ReductionDB)
	}
	d := &Dehum{src: src, ch: f.Channels, use: -1, keep: 1}
	if o.ReductionDB > 0 {
		d.keep = 1 - math.Pow(10, -o.ReductionDB/20)
	}
	for _, b := range []int{50, 60} {
		if o.Base == 0 || o.Base == b {
			d.fams = append(d.fams, newFamily(b, f.SampleRate, f.Channels))
		}
	}
	if len(d.fams) == 1 {
		d.use = 0
	}
	d.autoB = o.Base == 0
	return d, nil
}

// Format implements audio.Source.
func (d *Dehum) Format() audio.Format { return d.src.Format() }

// Close closes the upstream source.
func (d *Dehum) Close() error {
	if c, ok := d.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Base returns the mains frequency being removed (0 while none is).
func (d *Dehum) Base() int {
	if d.use < 0 {
		return 0
	}
	return d.fams[d.use].base
}

// Read implements audio.Source.
func (d *Dehum) Read(dst audio.Buffer) (int, error) {
	if len(dst) != d.ch {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), d.ch)
	}
	n, err := d.src.Read(dst)
	if n == 0 {
		if err == nil && dst.Frames() > 0 {
			err = errors.New("live: upstream returned no frames and no error")
		}
		return 0, err
	}
	d.process(dst, n)
	return n, nil
}

// process removes the hum from the first n frames of b in place.
func (d *Dehum) process(b audio.Buffer, n int) {
	for i := 0; i < n; {
		// Up to the next block end of any family.
		run := n - i
		for _, f := range d.fams {
			run = min(run, f.block-int(d.pos%int64(f.block)))
		}
		for _, f := range d.fams {
			for c := 0; c < d.ch; c++ {
				x := b[c][i : i+run]
				for h := 0; h < f.k; h++ {
					j := c*f.k + h
					z, rot := f.z[j], f.rot[h]
					f.start[j] = z
					// The block's sum goes on from where the last run left
					// it: the same additions in the same order whatever
					// the runs, so the result does not depend on them.
					ar, ai := real(f.acc[j]), imag(f.acc[j])
					for _, v := range x {
						// x times the conjugate phasor.
						ar += v * real(z)
						ai -= v * imag(z)
						z *= rot
					}
					f.z[j], f.acc[j] = z, complex(ar, ai)
				}
				p := f.blkPow[c]
				for _, v := range x {
					p += v * v
				}
				f.blkPow[c] = p
			}
		}
		// Subtract with the families' estimates (separately, so that every
		// family demodulates the input, not another family's output).
		if d.use >= 0 {
			f := d.fams[d.use]
			for c := 0; c < d.ch; c++ {
				x := b[c][i : i+run]
				for h := 0; h < f.k; h++ {
					j := c*f.k + h
					g := f.gain[j] * d.keep
					if g == 0 {
						continue
					}
					a := f.est[j] * complex(g, 0)
					z := f.start[j]
					for t := range x {
						x[t] -= real(a)*real(z) - imag(a)*imag(z)
						z *= f.rot[h]
					}
				}
			}
		}
		i += run
		d.pos += int64(run)
		for _, f := range d.fams {
			if d.pos%int64(f.block) == 0 {
				d.endBlock(f)
			}
		}
		if d.autoB && len(d.fams) == 2 {
			a, b := d.fams[0].energy, d.fams[1].energy
			switch {
			case a > 4*b && a > 0:
				d.use = 0
			case b > 4*a && b > 0:
				d.use = 1
			}
		}
	}
}

// endBlock folds a finished block into the family's estimates.
func (d *Dehum) endBlock(f *family) {
	scale := 2 / float64(f.block)
	f.energy = 0
	for c := 0; c < d.ch; c++ {
		w := 1 / (f.blkPow[c]/float64(f.block) + 1e-12)
		f.den[c] = f.lambda*f.den[c] + w
		f.den2[c] = f.lambda*f.den2[c] + w*w
		for h := 0; h < f.k; h++ {
			j := c*f.k + h
			dm := f.acc[j] * complex(scale, 0)
			f.num[j] = f.num[j]*complex(f.lambda, 0) + dm*complex(w, 0)
			f.pow[j] = f.lambda*f.pow[j] + w*w*(real(dm)*real(dm)+imag(dm)*imag(dm))
			f.est[j] = f.num[j] / complex(f.den[c], 0)
			// Coherence: the power of the weighted mean against the mean
			// power of the blocks, both weighted as the estimate is (the
			// squared weights: a steady tone gives 1, blocks of random
			// phase 1/N). With the plain weights the speech's blocks, whose
			// weight times power is as large as a pause's, would hide the
			// pauses' tone.
			coh := 0.0
			if f.pow[j] > 0 {
				m := cmplx.Abs(f.est[j])
				coh = m * m / (f.pow[j] / f.den2[c])
			}
			f.gain[j] = max(0, min(1, (coh-dehumCohLo)/(dehumCohHi-dehumCohLo)))
			e := cmplx.Abs(f.est[j])
			f.energy += f.gain[j] * e * e
			f.acc[j] = 0
			// Keep the phasor on the unit circle.
			f.z[j] /= complex(cmplx.Abs(f.z[j]), 0)
		}
		f.blkPow[c] = 0
	}
}
