package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

// swelling is pink noise whose level swells and fades by 12 dB every few
// seconds, with bursts of a 1 kHz tone that come and go (a voice's
// stand-in for the network: something over the noise).
func swelling(n int) []float64 {
	x := testaudio.PinkNoise(n, 0.05, 11)
	for i := range x {
		tt := float64(i) / fs
		x[i] *= 1.5 + math.Sin(2*math.Pi*tt/3.7)
		if math.Sin(2*math.Pi*tt/1.3) > 0.3 {
			x[i] += 0.1 * math.Sin(2*math.Pi*1000*tt)
		}
	}
	return x
}

// The Profiler's sample of frames enters the frames the network's
// features do not read as silence (skip) and leaves out the harmonicity
// of those whose harmonicity they do not read (pushLevels): its band
// gains must be those of a front that analyses those frames and pushes
// zero spectra for the others, bit for bit.
func TestStaticNoiseSampleIsExact(t *testing.T) {
	x := swelling(8 * fs)
	s := newStaticNoise(fs)
	ref := newIsoFront(fs, s.n, s.hop, s.win)
	f := newRFFT(s.n)
	spec := make([]complex128, s.n/2+1)
	pow := make([]float64, s.n/2+1)
	zero := make([]float64, s.n/2+1)
	got, want := make([]float64, isoBands), make([]float64, isoBands)
	evals := 0
	for t0, fr := 0, int64(0); t0+s.n <= len(x); t0, fr = t0+s.hop, fr+1 {
		at := int(fr % staticEvery)
		if s.ctx[at] {
			clear(pow)
			f.forwardPow(spec, pow, x[t0:t0+s.n], s.win)
			s.front.pushLevels(pow, s.harm[at])
			ref.push(pow)
		} else {
			s.front.skip()
			ref.push(zero)
		}
		if o := fr - int64(s.front.W); o >= 0 && o%staticEvery == 0 {
			s.front.gains(o, got)
			ref.gains(o, want)
			for b := range got {
				if got[b] != want[b] {
					t.Fatalf("frame %d, band %d: gain %v, want %v", o, b, got[b], want[b])
				}
			}
			evals++
		}
	}
	if evals < 10 {
		t.Fatalf("%d frames compared", evals)
	}
}

// The estimate does not depend on how the stream is cut into blocks.
func TestStaticNoiseBlocks(t *testing.T) {
	x := swelling(6 * fs)
	prior := make([]float64, FFTSize(fs)/2+1)
	var first []float64
	for _, blk := range []int{len(x), 4096, 1000, 77} {
		s := newStaticNoise(fs)
		for i := 0; i < len(x); i += blk {
			s.write(x[i:min(i+blk, len(x))])
		}
		got := s.result(prior)
		if got == nil {
			t.Fatalf("blocks of %d: no profile after %d frames", blk, s.evals)
		}
		if first == nil {
			first = got
			continue
		}
		for k := range got {
			if got[k] != first[k] {
				t.Fatalf("blocks of %d: bin %d %v, whole stream %v", blk, k, got[k], first[k])
			}
		}
	}
}
