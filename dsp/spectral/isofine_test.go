package spectral

import (
	"math/rand/v2"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

// The per-bin network's pass over all bins of a frame gives the gains
// the fitting program's one-bin reference (isofinefit_test.go) gives, bit
// for bit, on the features of a real frame sequence (a voice in noise).
func TestIsoFineBinsAreBin(t *testing.T) {
	n := FFTSize(fs)
	hop := n / 4
	win := sqrtHann(n)
	front := newIsoFront(fs, n, hop, win)
	fine := newIsoFine(fs, n, isoFineCtx)
	ft := newRFFT(n)
	spec := make([]complex128, n/2+1)
	x := testaudio.PinkNoise(fs, 0.05, 3)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		// A 150 Hz buzz with harmonics, for the comb.
		if (i/int(0.003*fs))%2 == 0 {
			x[i] += 0.3 * (r.Float64() - 0.5)
		}
		x[i] += 0.2 * float64(i%320) / 320
	}
	g := make([]float64, n/2+1)
	out := make([]float32, fine.K)
	var sc isoFineScratch
	in := make([]float32, isoFineIn)
	checked := 0
	frame := make([]float64, n)
	for f := 0; (f+1)*hop <= len(x); f++ {
		for i := range frame {
			frame[i] = 0
			if j := (f+1)*hop - n + i; j >= 0 {
				frame[i] = x[j]
			}
		}
		p := make([]float64, n/2+1)
		ft.forwardPow(spec, p, frame, win)
		front.push(p)
		fine.push(p, front)
		o := int64(f - isoFineCtx)
		if o < 0 {
			continue
		}
		for k := range g {
			g[k] = r.Float64()
		}
		fine.features(o, g)
		x := append([]float32(nil), fine.x...)
		isoFineModel.forwardBins(fine, out)
		for k := range fine.K {
			for i := range isoFineIn {
				in[i] = x[i*fine.C+k]
			}
			if want := isoFineModel.bin(in, &sc); out[k] != want {
				t.Fatalf("frame %d bin %d: %g over all bins, %g one bin at a time", o, k, out[k], want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no bin checked")
	}
}
