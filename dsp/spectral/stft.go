package spectral

import (
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/fft"
)

// FFTSize returns the STFT frame length used at sampleRate: the power of
// two nearest above 32 ms, about 43 ms at 44.1 and 48 kHz. Long enough to
// resolve the harmonics of a low voice, short enough that speech onsets do
// not smear; the profile of an Profiler and the Denoiser must agree on it,
// so both take it from here.
func FFTSize(sampleRate int) int {
	n := 64
	for float64(n) < 0.032*float64(sampleRate) {
		n *= 2
	}
	return n
}

// stft is a windowed overlap-add engine that applies one real gain per bin
// to every channel: every hop it windows the last n input frames of each
// channel, transforms them, hands the mean power of the channels per bin
// to gain, which returns the gain of each bin, scales the bins of every
// channel by it, transforms back and overlap-adds. The analysis and
// synthesis windows are both the square root of a periodic Hann window,
// normalized so that unit gains reconstruct the input exactly, delayed by
// n-hop frames.
//
// Each real frame of n samples is transformed as a complex sequence of
// n/2 (even samples in the real part, odd in the imaginary) by the
// module's in-place FFT (internal/fft), and the spectrum of the real
// frame is separated from it by conjugate symmetry; the inverse merges
// the bins back the same way. That is the textbook real FFT from a
// half-length complex one, with the windowing and the overlap-add fused
// into its packing and unpacking.
type stft struct {
	n, hop, bins int
	win          []float64 // analysis window
	swin         []float64 // synthesis window with the overlap-add normalization and 1/n
	frame        [][]float64
	acc          [][]float64
	rfft
	spec   [][]complex128 // per channel, n/2+1 bins
	pow, g []float64
	gain   func(pow, g []float64)

	// With look-ahead (lookAhead), each frame's power goes to look as it
	// comes, and gain and the synthesis work on the frame ahead frames
	// back, whose spectra and power wait in the rings.
	ahead    int
	look     func(pow []float64)
	specRing [][][]complex128 // [slot][channel]
	powRing  [][]float64      // [slot]
	seen     int64
}

// lookAhead makes the engine hand every frame's power to look as soon as
// it is analysed and compute the gain and the output of each frame only
// frames hops later, so that gain may use what look learnt of the frames
// after it. The latency grows by frames hops.
func (s *stft) lookAhead(frames int, look func(pow []float64)) {
	s.ahead, s.look = frames, look
	s.specRing = make([][][]complex128, frames+1)
	s.powRing = make([][]float64, frames+1)
	for i := range s.specRing {
		s.specRing[i] = make([][]complex128, len(s.frame))
		for c := range s.frame {
			s.specRing[i][c] = make([]complex128, s.bins)
		}
		s.powRing[i] = make([]float64, s.bins)
	}
}

func newSTFT(channels, n, hop int, gain func(pow, g []float64)) *stft {
	s := &stft{n: n, hop: hop, bins: n/2 + 1, gain: gain}
	s.win = sqrtHann(n)
	s.swin = synthesisWindow(s.win, hop)
	s.frame = make([][]float64, channels)
	s.acc = make([][]float64, channels)
	s.spec = make([][]complex128, channels)
	for c := range s.frame {
		s.frame[c] = make([]float64, n)
		s.acc[c] = make([]float64, n)
		s.spec[c] = make([]complex128, s.bins)
	}
	s.rfft = newRFFT(n)
	s.pow = make([]float64, s.bins)
	s.g = make([]float64, s.bins)
	return s
}

func sqrtHann(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = math.Sqrt(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n)))
	}
	return w
}

// latency is the delay of the output behind the input, in frames.
func (s *stft) latency() int { return s.n - s.hop + s.ahead*s.hop }

// rfft is the real FFT of n samples made of a complex FFT of n/2.
type rfft struct {
	n  int
	z  []complex128 // n/2 packed samples
	tw []complex128 // exp(-2 pi i k/n), k = 0..n/2
	c  *fft.Complex // of n/2
}

func newRFFT(n int) rfft {
	r := rfft{n: n, z: make([]complex128, n/2), tw: make([]complex128, n/2+1), c: fft.NewComplex(n / 2)}
	for k := range r.tw {
		sn, cs := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		r.tw[k] = complex(cs, sn)
	}
	return r
}

// cfft transforms z in place (forward; the inverse is the forward
// transform of the reversed sequence, which the inverse's merge stores).
func (s *rfft) cfft(z []complex128) {
	s.c.Forward(z)
}

// forward sets spec to the spectrum of the real frame x (len n).
func (s *rfft) forward(spec []complex128, x, win []float64) {
	s.forwardPow(spec, nil, x, win)
}

// forwardPow is forward that also adds the power of each bin to pow
// (len n/2+1) when pow is not nil, in the same pass.
func (s *rfft) forwardPow(spec []complex128, pow []float64, x, win []float64) {
	m := s.n / 2
	z := s.z[:m]
	x = x[:2*m]
	win = win[:2*m]
	for i := range z {
		z[i] = complex(x[2*i]*win[2*i], x[2*i+1]*win[2*i+1])
	}
	s.cfft(z)
	// With E and O the spectra of the even and odd samples,
	// Z[k] = E[k] + iO[k] and conj(Z[m-k]) = E[k] - iO[k], so
	// X[k] = E[k] + W^k O[k].
	spec = spec[:m+1]
	tw := s.tw[:m+1]
	spec[0] = complex(real(z[0])+imag(z[0]), 0)
	spec[m] = complex(real(z[0])-imag(z[0]), 0)
	if pow != nil {
		pow = pow[:m+1]
		pow[0] += real(spec[0]) * real(spec[0])
		pow[m] += real(spec[m]) * real(spec[m])
	}
	for k := 1; k <= m/2; k++ {
		a, b := z[k], z[m-k]
		// e = (a + conj b)/2, o = (a - conj b)/(2i).
		er, ei := 0.5*(real(a)+real(b)), 0.5*(imag(a)-imag(b))
		or, oi := 0.5*(imag(a)+imag(b)), -0.5*(real(a)-real(b))
		w := tw[k]
		wr, wi := real(w), imag(w)
		tr, ti := wr*or-wi*oi, wr*oi+wi*or
		xr, xi := er+tr, ei+ti
		// Bin m-k: e' = conj e, o' = conj o, W^(m-k) = -conj W^k.
		yr, yi := er-tr, -ei+ti
		spec[k] = complex(xr, xi)
		spec[m-k] = complex(yr, yi)
		if pow != nil {
			// At k = m/2 both are the same bin, and the second store wins.
			pow[m-k] += yr*yr + yi*yi
			if k != m-k {
				pow[k] += xr*xr + xi*xi
			}
		}
	}
}

// inverse overlap-adds the real frame of spectrum spec, weighted by swin,
// into acc.
func (s *rfft) inverse(acc []float64, spec []complex128, swin []float64) {
	s.inverseGain(acc, spec, nil, swin)
}

// inverseGain is inverse of the spectrum spec scaled by the real gains g
// (len n/2+1), or unscaled when g is nil; spec is left as it was.
func (s *rfft) inverseGain(acc []float64, spec []complex128, g, swin []float64) {
	m := s.n / 2
	z := s.z[:m]
	spec = spec[:m+1]
	tw := s.tw[:m+1]
	if g != nil {
		s.inverseScaled(spec, g[:m+1], tw)
	} else {
		// E[k] = X[k] + conj X[m-k], O[k] = (X[k] - conj X[m-k]) conj W^k
		// (twice each: the half-length inverse returns m times, not n times,
		// the frame), and Z[k] = E[k] + iO[k].
		x0, xm := real(spec[0]), real(spec[m])
		z[0] = complex(x0+xm, x0-xm)
		for k := 1; k <= m/2; k++ {
			a, b := spec[k], spec[m-k]
			er, ei := real(a)+real(b), imag(a)-imag(b)
			dr, di := real(a)-real(b), imag(a)+imag(b)
			w := tw[k]
			wr, wi := real(w), -imag(w)
			or, oi := dr*wr-di*wi, dr*wi+di*wr
			// Bin m-k has E' = conj E and O' = conj O. Stored reversed
			// (Z[k] at m-k), see below.
			z[m-k] = complex(er-oi, ei+or)
			z[k] = complex(er+oi, -ei+or)
		}
	}
	// The inverse transform is the forward one of the sequence reversed
	// (z[0], z[m-1], ..., z[1]), which is what gonum's Sequence functions
	// do first; the merges above store it reversed already, which saves
	// that pass.
	s.cfft(z)
	acc = acc[:2*m]
	swin = swin[:2*m]
	for i, v := range z {
		acc[2*i] += real(v) * swin[2*i]
		acc[2*i+1] += imag(v) * swin[2*i+1]
	}
}

// inverseScaled is the merge of inverseGain with the gains applied on the
// way (the same arithmetic as the unscaled merge, on g[k] X[k]).
func (s *rfft) inverseScaled(spec []complex128, g []float64, tw []complex128) {
	m := s.n / 2
	z := s.z[:m]
	x0, xm := real(spec[0])*g[0], real(spec[m])*g[m]
	z[0] = complex(x0+xm, x0-xm)
	for k := 1; k <= m/2; k++ {
		ga, gb := g[k], g[m-k]
		a, b := spec[k], spec[m-k]
		ar, ai, br, bi := real(a)*ga, imag(a)*ga, real(b)*gb, imag(b)*gb
		er, ei := ar+br, ai-bi
		dr, di := ar-br, ai+bi
		w := tw[k]
		wr, wi := real(w), -imag(w)
		or, oi := dr*wr-di*wi, dr*wi+di*wr
		z[m-k] = complex(er-oi, ei+or) // reversed, as in inverseGain
		z[k] = complex(er+oi, -ei+or)
	}
}

// process consumes hop input frames and produces hop output frames.
func (s *stft) process(in, out audio.Buffer) {
	n, hop := s.n, s.hop
	pow, spec := s.pow, s.spec
	if s.ahead > 0 {
		slot := int(s.seen % int64(s.ahead+1))
		pow, spec = s.powRing[slot], s.specRing[slot]
	}
	clear(pow)
	for c, f := range s.frame {
		copy(f, f[hop:])
		copy(f[n-hop:], in[c])
		s.forwardPow(spec[c], pow, f, s.win)
	}
	inv := 1 / float64(len(s.frame))
	for k := range pow {
		pow[k] *= inv
	}
	g := s.g
	if s.ahead > 0 {
		s.look(pow)
		s.seen++
		if s.seen <= int64(s.ahead) {
			// No frame is due yet: the output is the silence before the
			// stream, which the latency skips.
			for c := range out {
				clear(out[c][:hop])
			}
			return
		}
		// The oldest slot holds the frame ahead hops back.
		slot := int(s.seen % int64(s.ahead+1))
		pow, spec = s.powRing[slot], s.specRing[slot]
	}
	s.gain(pow, g)
	for c, a := range s.acc {
		s.inverseGain(a, spec[c], g, s.swin)
		copy(out[c], a[:hop])
		copy(a, a[hop:])
		clear(a[n-hop:])
	}
}

// synthesisWindow is the window that, after the analysis window win and an
// inverse FFT without its 1/n, overlap-adds frames hop apart back to the
// input: win divided by the sum of win² over the frames overlapping at
// each phase.
func synthesisWindow(win []float64, hop int) []float64 {
	n := len(win)
	norm := make([]float64, hop)
	for i := 0; i < n; i++ {
		norm[i%hop] += win[i] * win[i]
	}
	swin := make([]float64, n)
	for i := range swin {
		swin[i] = win[i] / norm[i%hop] / float64(n)
	}
	return swin
}
