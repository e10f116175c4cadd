package spectral

import (
	"math"
	"testing"
)

// The hum is summed on a coarse grid and interpolated to the stream's
// rate: a tone on the grid comes out as the tone, after the gain the node
// divides by, within 60 dB up to 500 Hz and 40 dB at 1 kHz (the weakest
// harmonics), at every rate.
func TestDehumUpsampler(t *testing.T) {
	for _, rate := range []int{8000, 22050, 44100, 48000, 96000, 192000} {
		h := &Dehum{fs: rate, f0: 50, k: 19}
		h.upsampler()
		U, L := h.up, h.upL
		for _, k := range []int{1, 5, 10, 19} {
			f := 50 * float64(k)
			n := rate
			syn := make([]float64, n/U+2*L+2)
			for m := range syn {
				syn[m] = math.Cos(2 * math.Pi * f * float64((m-L+1)*U) / float64(rate))
			}
			var e, p float64
			for i := 0; i < n; i++ {
				m, r := i/U, i%U
				var v float64
				for j, g := range h.upTaps[r] {
					v += syn[m+j] * g
				}
				want := h.upG[k-1] * math.Cos(2*math.Pi*f*float64(i)/float64(rate))
				e += (v - want) * (v - want)
				p += want * want
			}
			db := 10 * math.Log10(e/p)
			limit := -60.0
			if f > 500 {
				limit = -40
			}
			if testing.Verbose() || db > limit {
				t.Logf("%6d Hz, grid every %d frames, %d taps: %4.0f Hz error %.1f dB, gain %.4f", rate, U, 2*L, f, db, h.upG[k-1])
			}
			if db > limit {
				t.Errorf("%d Hz: a %.0f Hz harmonic interpolated %.1f dB off, want under %.0f", rate, f, db, limit)
			}
		}
	}
}
