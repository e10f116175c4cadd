package spectral

import "testing"

// TestDvMaskUnits checks that the learned reverb mask's units cover every
// bin once, in order: one a bin under dvMaskFineHz, wider above.
func TestDvMaskUnits(t *testing.T) {
	for _, sr := range []int{16000, 44100, 48000} {
		n := FFTSize(sr)
		lo := dvMaskUnits(sr, n)
		if lo[0] != 0 || lo[len(lo)-1] != n/2+1 {
			t.Fatalf("%d Hz: units span bins %d to %d of %d", sr, lo[0], lo[len(lo)-1], n/2+1)
		}
		hz := float64(sr) / float64(n)
		for u := range len(lo) - 1 {
			w := lo[u+1] - lo[u]
			if w < 1 || (float64(lo[u])*hz < dvMaskFineHz && w != 1) {
				t.Fatalf("%d Hz: unit %d holds bins %d to %d", sr, u, lo[u], lo[u+1]-1)
			}
		}
		t.Logf("%d Hz: %d units for %d bins", sr, len(lo)-1, n/2+1)
	}
}
