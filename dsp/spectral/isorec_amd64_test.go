//go:build !purego

package spectral

import (
	"math/rand/v2"
	"testing"
)

// The band gains with a state are the same, bit for bit, with the AVX2
// kernel as with the Go loop (purego builds take the loop), over 300
// frames of random features, the state carried.
func TestIsoRecKernelIsGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	defer func(u bool) { useAVX2 = u }(useAVX2)
	r := rand.New(rand.NewPCG(7, 8))
	m := recFromIso(&isoModel, r)
	for i := range m.wo {
		m.wo[i] = float32(r.NormFloat64())
	}
	a, b := newIsoRec(m), newIsoRec(m)
	feat := make([]float32, isoBands*isoIn)
	ga, gb := make([]float64, isoBands), make([]float64, isoBands)
	for f := range 300 {
		for i := range feat {
			feat[i] = m.net.mean[i%isoIn] + float32(r.NormFloat64())/m.net.scale[i%isoIn]
		}
		useAVX2 = true
		a.step(feat, ga)
		useAVX2 = false
		b.step(feat, gb)
		for k := range ga {
			if ga[k] != gb[k] {
				t.Fatalf("frame %d, band %d: %v with the kernel, %v without", f, k, ga[k], gb[k])
			}
		}
	}
}
