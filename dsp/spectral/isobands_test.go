package spectral

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// isoBandsGo is isoBandMap.energies as it was written before sums: a loop
// over the bins adding each to its two bands.
func isoBandsGo(bm *isoBandMap, pow []float64, e []float64) {
	clear(e[:isoBands])
	for k, p := range pow {
		b, u := bm.lo[k], bm.up[k]
		e[b] += (1 - u) * p
		e[b+1] += u * p
	}
}

// TestIsoBandSumsAreGo asks isoBandMap.sums, band by band, for the bin
// loop's sums to the bit, at the sample rates the product runs at.
func TestIsoBandSumsAreGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sr := range []int{8000, 16000, 22050, 44100, 48000, 96000} {
		n := FFTSize(sr)
		bm := newIsoBandMap(sr, n, sqrtHann(n))
		pow := make([]float64, n/2+1)
		want, got := make([]float64, isoBands), make([]float64, isoBands)
		for range 20 {
			for k := range pow {
				pow[k] = math.Exp(20 * r.NormFloat64())
			}
			isoBandsGo(&bm, pow, want)
			bm.sums(pow, got)
			for b := range want {
				if math.Float64bits(got[b]) != math.Float64bits(want[b]) {
					t.Fatalf("%d Hz band %d: %g, want %g", sr, b, got[b], want[b])
				}
			}
		}
	}
}

// TestIsoCombSharesAreGo asks combShares for the shares a loop over the
// bins gives (as it was written before isoBandMap.sums), to the bit.
func TestIsoCombSharesAreGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sr := 48000
	n := FFTSize(sr)
	f := newIsoFront(sr, n, n/4, sqrtHann(n))
	pow := make([]float64, n/2+1)
	got := make([]float64, isoBands)
	for _, lag := range []int{120, 167, 240, 480, 799} {
		for k := range pow {
			pow[k] = math.Exp(10 * r.NormFloat64())
		}
		f.pushLevels(pow, false)
		f.lag = lag
		f.combShares(pow, got)
		var num, den [isoBands]float64
		rot := cmplx.Rect(1, 2*math.Pi*(f.hz*float64(lag)/f.sr))
		z := complex(1, 0)
		for k, p := range pow {
			w := 0.5 * (1 + real(z)) * p
			z *= rot
			b, u := f.bands.lo[k], f.bands.up[k]
			num[b] += (1 - u) * w
			num[b+1] += u * w
			den[b] += (1 - u) * p
			den[b+1] += u * p
		}
		for b := range got {
			want := 0.5
			if den[b] > 0 {
				want = num[b] / den[b]
			}
			if math.Float64bits(got[b]) != math.Float64bits(want) {
				t.Fatalf("lag %d band %d: %g, want %g", lag, b, got[b], want)
			}
		}
	}
}
