package spectral

import "math"

// The network's forward pass one band at a time, as the fitting program
// (isofit_test.go) differentiates it: the reference the product's
// forwardBatch (staticnoise_fast.go, all bands of a frame at once) is
// held to bit for bit (TestIsoBatchIsBand, TestIsoBatchGoIsBand).

// isoScratch holds the activations of one band's forward pass.
type isoScratch struct {
	x  [isoIn]float32
	h1 [isoH1]float32
	h2 [isoH2]float32
}

// band returns the gain of one band from its raw features in, through
// standardised s.x.
func (m *isoNet) band(in []float32, s *isoScratch) float32 {
	for i, v := range in[:isoIn] {
		s.x[i] = (v - m.mean[i]) * m.scale[i]
	}
	for j := range s.h1 {
		w := &m.w1[j]
		a := m.b1[j]
		for i, v := range s.x {
			a += w[i] * v
		}
		s.h1[j] = tanh32(a)
	}
	for j := range s.h2 {
		w := &m.w2[j]
		a := m.b2[j]
		for i, v := range s.h1 {
			a += w[i] * v
		}
		s.h2[j] = tanh32(a)
	}
	a := m.b3[0]
	for i, v := range s.h2 {
		a += m.w3[i] * v
	}
	return float32(1 / (1 + math.Exp(-float64(a))))
}

// forward sets gain (isoBands) from the features of a frame (isoBands
// rows of isoIn).
func (m *isoNet) forward(in []float32, s *isoScratch, gain []float64) {
	for b := range isoBands {
		gain[b] = float64(m.band(in[b*isoIn:(b+1)*isoIn], s))
	}
}
