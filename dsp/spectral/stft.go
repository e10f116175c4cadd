package spectral

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
)

// FFTSize returns the STFT frame length used at sampleRate: the power of
// two nearest above 32 ms, about 43 ms at 44.1 and 48 kHz. Long enough to
// resolve the harmonics of a low voice, short enough that speech onsets do
// not smear; the profile of an Analyzer and the Denoiser must agree on it,
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
// Channels are transformed two at a time: the pair (l, r) is packed as
// the complex sequence l + ir into one complex FFT (gonum's in-place radix
// 2, which allocates nothing), whose bins k and n-k hold the two real
// spectra by conjugate symmetry. Since a gain that is real and the same at
// k and n-k keeps each half real, one complex inverse returns both
// outputs, in the real and the imaginary part. An odd channel left over
// takes the real FFT. Stereo thus costs one complex transform each way
// instead of two real ones, about half.
type stft struct {
	n, hop, bins int
	win          []float64 // analysis window
	swin         []float64 // synthesis window with the overlap-add normalization and 1/n
	frame        [][]float64
	acc          [][]float64
	pairs        [][]complex128 // per channel pair, n packed bins
	fft          *fourier.FFT   // the odd channel
	tmp          []float64
	spec         []complex128
	pow, g       []float64
	gain         func(pow, g []float64)
}

func newSTFT(channels, n, hop int, gain func(pow, g []float64)) *stft {
	s := &stft{n: n, hop: hop, bins: n/2 + 1, gain: gain}
	s.win = sqrtHann(n)
	// Sum of analysis*synthesis over the overlapping frames at each phase.
	norm := make([]float64, hop)
	for i := 0; i < n; i++ {
		norm[i%hop] += s.win[i] * s.win[i]
	}
	s.swin = make([]float64, n)
	for i := range s.swin {
		s.swin[i] = s.win[i] / norm[i%hop] / float64(n)
	}
	s.frame = make([][]float64, channels)
	s.acc = make([][]float64, channels)
	for c := range s.frame {
		s.frame[c] = make([]float64, n)
		s.acc[c] = make([]float64, n)
	}
	s.pairs = make([][]complex128, channels/2)
	for p := range s.pairs {
		s.pairs[p] = make([]complex128, n)
	}
	if channels%2 == 1 {
		s.fft = fourier.NewFFT(n)
		s.tmp = make([]float64, n)
		s.spec = make([]complex128, s.bins)
	}
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
func (s *stft) latency() int { return s.n - s.hop }

// process consumes hop input frames and produces hop output frames.
func (s *stft) process(in, out audio.Buffer) {
	n, hop := s.n, s.hop
	for c, f := range s.frame {
		copy(f, f[hop:])
		copy(f[n-hop:], in[c])
	}
	pow := s.pow
	clear(pow)
	win := s.win[:n]
	for p, z := range s.pairs {
		l, r := s.frame[2*p][:n], s.frame[2*p+1][:n]
		z = z[:n]
		for i, w := range win {
			z[i] = complex(l[i]*w, r[i]*w)
		}
		fourier.CoefficientsRadix2(z)
		// |L_k|^2 + |R_k|^2 = (|Z_k|^2 + |Z_n-k|^2) / 2.
		pow[0] += real(z[0])*real(z[0]) + imag(z[0])*imag(z[0])
		for k := 1; k < s.bins; k++ {
			a, b := z[k], z[n-k]
			pow[k] += 0.5 * (real(a)*real(a) + imag(a)*imag(a) + real(b)*real(b) + imag(b)*imag(b))
		}
	}
	if s.fft != nil {
		f := s.frame[len(s.frame)-1]
		for i, w := range win {
			s.tmp[i] = f[i] * w
		}
		s.fft.Coefficients(s.spec, s.tmp)
		for k, z := range s.spec {
			pow[k] += real(z)*real(z) + imag(z)*imag(z)
		}
	}
	inv := 1 / float64(len(s.frame))
	for k := range pow {
		pow[k] *= inv
	}
	g := s.g
	s.gain(pow, g)
	swin := s.swin[:n]
	for p, z := range s.pairs {
		z = z[:n]
		z[0] *= complex(g[0], 0)
		z[n/2] *= complex(g[n/2], 0)
		for k := 1; k < n/2; k++ {
			gk := complex(g[k], 0)
			z[k] *= gk
			z[n-k] *= gk
		}
		fourier.SequenceRadix2(z)
		al, ar := s.acc[2*p][:n], s.acc[2*p+1][:n]
		for i, w := range swin {
			al[i] += real(z[i]) * w
			ar[i] += imag(z[i]) * w
		}
	}
	if s.fft != nil {
		for k := range s.spec {
			s.spec[k] *= complex(g[k], 0)
		}
		s.fft.Sequence(s.tmp, s.spec)
		a := s.acc[len(s.acc)-1][:n]
		for i, w := range swin {
			a[i] += s.tmp[i] * w
		}
	}
	for c, a := range s.acc {
		copy(out[c], a[:hop])
		copy(a, a[hop:])
		clear(a[n-hop:])
	}
}
