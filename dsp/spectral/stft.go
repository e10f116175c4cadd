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

// stft is a windowed overlap-add engine with one FFT plan: every hop it
// windows the last n input frames of each channel, transforms them, lets
// spectral modify the bins in place, transforms back and overlap-adds. The
// analysis and synthesis windows are both the square root of a periodic
// Hann window, normalized so that an unmodified spectrum reconstructs the
// input exactly, delayed by n-hop frames.
type stft struct {
	n, hop, bins int
	fft          *fourier.FFT
	win          []float64 // analysis window
	swin         []float64 // synthesis window with the overlap-add normalization and 1/n
	frame        [][]float64
	acc          [][]float64
	tmp          []float64
	spec         [][]complex128
	spectral     func(spec [][]complex128)
}

func newSTFT(channels, n, hop int, spectral func(spec [][]complex128)) *stft {
	s := &stft{n: n, hop: hop, bins: n/2 + 1, fft: fourier.NewFFT(n), spectral: spectral}
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
	s.spec = make([][]complex128, channels)
	for c := range s.frame {
		s.frame[c] = make([]float64, n)
		s.acc[c] = make([]float64, n)
		s.spec[c] = make([]complex128, s.bins)
	}
	s.tmp = make([]float64, n)
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
	for c := range s.frame {
		f := s.frame[c]
		copy(f, f[hop:])
		copy(f[n-hop:], in[c])
		for i, w := range s.win {
			s.tmp[i] = f[i] * w
		}
		s.fft.Coefficients(s.spec[c], s.tmp)
	}
	s.spectral(s.spec)
	for c := range s.frame {
		s.fft.Sequence(s.tmp, s.spec[c])
		a := s.acc[c]
		for i, w := range s.swin {
			a[i] += s.tmp[i] * w
		}
		copy(out[c], a[:hop])
		copy(a, a[hop:])
		clear(a[n-hop:])
	}
}
