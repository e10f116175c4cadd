package spectral

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// The real transforms made of half-length complex ones give what
// fourier.FFT gives: the same mean power per bin and the same output under
// the same gains, with radix 2 (n = 256) and radix 4 (n = 512).
func TestSTFTTransforms(t *testing.T) {
	for _, tc := range []struct{ n, ch int }{{256, 1}, {256, 2}, {512, 1}, {512, 3}} {
		testSTFT(t, tc.n, tc.ch)
	}
}

func testSTFT(t *testing.T, n, ch int) {
	hop, frames := n/2, n*6
	{
		in := make(audio.Buffer, ch)
		for c := range in {
			in[c] = testaudio.WhiteNoise(frames, 0.1, uint64(c+1))
		}
		gainOf := func(k int) float64 { return 0.2 + 0.8*math.Abs(math.Sin(float64(k)/7)) }
		var gotPow [][]float64
		s := newSTFT(ch, n, hop, func(pow, g []float64) {
			gotPow = append(gotPow, append([]float64(nil), pow...))
			for k := range g {
				g[k] = gainOf(k)
			}
		})
		out := audio.NewBuffer(ch, frames)
		for at := 0; at < frames; at += hop {
			s.process(in.Slice(at, at+hop), out.Slice(at, at+hop))
		}
		// Reference: each channel on its own with a real FFT.
		fft := fourier.NewFFT(n)
		win := sqrtHann(n)
		ref := audio.NewBuffer(ch, frames+n)
		var maxPowErr, maxOutErr float64
		for f := 0; f*hop+n <= frames; f++ {
			pow := make([]float64, n/2+1)
			for c := range in {
				x := make([]float64, n)
				for i := range x {
					x[i] = in[c][f*hop+i] * win[i]
				}
				spec := fft.Coefficients(nil, x)
				for k, z := range spec {
					pow[k] += (real(z)*real(z) + imag(z)*imag(z)) / float64(ch)
					spec[k] = z * complex(gainOf(k), 0)
				}
				y := fft.Sequence(nil, spec)
				for i := range y {
					ref[c][f*hop+i] += y[i] * s.swin[i]
				}
			}
			// The STFT's frame f+n/hop-1 is the first to hold input frame f*hop+n-1.
			got := gotPow[f+n/hop-1]
			for k := range pow {
				maxPowErr = max(maxPowErr, math.Abs(got[k]-pow[k])/(pow[k]+1e-9))
			}
		}
		for c := range in {
			// The output is delayed by n-hop; compare where the reference is complete.
			for i := n; i < frames-n; i++ {
				maxOutErr = max(maxOutErr, math.Abs(out[c][i+n-hop]-ref[c][i]))
			}
		}
		if maxPowErr > 1e-9 || maxOutErr > 1e-12 {
			t.Errorf("n %d, %d channels: power off by %.2g (relative), output by %.2g", n, ch, maxPowErr, maxOutErr)
		}
	}
}
