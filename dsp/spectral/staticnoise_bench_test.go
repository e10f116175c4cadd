package spectral

import (
	"runtime"
	"testing"

	"github.com/audiopost/audiopost/internal/cputime"
)

// BenchmarkStaticNoise runs Static's profile estimate on a minute of
// swelling noise at 48 kHz, in the Profiler's blocks, on one core: x_realtime_cpu is audio seconds
// per CPU second.
func BenchmarkStaticNoise(b *testing.B) {
	x := swelling(60 * fs)
	blk := BlockFrames(fs)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	before := cputime.Process()
	for b.Loop() {
		s := newStaticNoise(fs)
		for i := 0; i < len(x); i += blk {
			s.write(x[i:min(i+blk, len(x))])
		}
		if s.evals < 100 {
			b.Fatalf("%d evaluations", s.evals)
		}
	}
	b.ReportMetric(60*float64(b.N)/(cputime.Process()-before).Seconds(), "x_realtime_cpu")
}

// BenchmarkIsoForward is the network's forward pass for one frame, a band
// at a time (isoNet.forward) and batched (forwardBatch).
func BenchmarkIsoForward(b *testing.B) {
	feat := make([]float32, isoBands*isoIn)
	for i := range feat {
		feat[i] = float32(i%7)*0.3 - 1
	}
	g := make([]float64, isoBands)
	var sc isoScratch
	var bs isoBatch
	b.Run("band", func(b *testing.B) {
		for b.Loop() {
			isoModel.forward(feat, &sc, g)
		}
	})
	b.Run("batch", func(b *testing.B) {
		for b.Loop() {
			isoModel.forwardBatch(feat, &bs, g)
		}
	})
}

// BenchmarkIsoHarmonicity is a frame's harmonicity, the front's and the
// fast one Static's profile takes.
func BenchmarkIsoHarmonicity(b *testing.B) {
	x := voiced(fs)
	s := newStaticNoise(fs)
	spec := make([]complex128, s.n/2+1)
	pows := make([][]float64, 0, 64)
	for t0 := 0; t0+s.n <= len(x) && len(pows) < cap(pows); t0 += s.hop {
		p := make([]float64, s.n/2+1)
		s.forwardPow(spec, p, x[t0:t0+s.n], s.win)
		pows = append(pows, p)
	}
	b.Run("front", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s.front.harmonicity(pows[i%len(pows)])
			i++
		}
	})
	b.Run("fast", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s.hf.of(pows[i%len(pows)])
			i++
		}
	})
}
