package realaudio

import (
	"fmt"
	"math"
	"sync"
)

// SoxRT60s are the reverberation times of the rooms made with sox's
// reverb effect.
var SoxRT60s = []float64{0.5, 0.7, 1.0}

// soxArgs are the arguments of sox's reverb for a reverberance: HF damping
// 50%, room scale 100%, wet only (-w) so that the dry part is known.
func soxArgs(reverberance float64) []string {
	return []string{"-t", "f32", "-r", fmt.Sprint(Rate), "-c", "1", "-", "-t", "f32", "-r", fmt.Sprint(Rate), "-c", "1", "-",
		"reverb", "-w", fmt.Sprintf("%.2f", reverberance), "50", "100"}
}

// soxImpulse returns the wet impulse response of sox's reverb at a
// reverberance, 4 s long.
func soxImpulse(reverberance float64) ([]float64, error) {
	return cached(fmt.Sprintf("soxir|%.2f", reverberance), func() ([]float64, error) {
		in := make([]float64, 4*Rate)
		in[0] = 1
		return runF32("sox", soxArgs(reverberance), f32(in))
	})
}

var soxCal sync.Map // rt60 -> reverberance

// soxReverberance finds by bisection the reverberance whose impulse
// response decays with the given RT60 (Schroeder), within 3%.
func soxReverberance(rt60 float64) (float64, float64, error) {
	if v, ok := soxCal.Load(rt60); ok {
		r := v.([2]float64)
		return r[0], r[1], nil
	}
	lo, hi := 0.0, 100.0
	var best, bestRT float64
	for range 12 {
		mid := (lo + hi) / 2
		h, err := soxImpulse(mid)
		if err != nil {
			return 0, 0, err
		}
		got := SchroederRT60(h, Rate)
		best, bestRT = mid, got
		if math.Abs(got/rt60-1) < 0.03 {
			break
		}
		if got < rt60 {
			lo = mid
		} else {
			hi = mid
		}
	}
	if math.Abs(bestRT/rt60-1) > 0.1 {
		return 0, 0, fmt.Errorf("realaudio: sox reverb reaches RT60 %.2f s, not %.2f", bestRT, rt60)
	}
	soxCal.Store(rt60, [2]float64{best, bestRT})
	return best, bestRT, nil
}

// SoxReverberant returns the half's speech through sox's reverb at each
// RT60 of SoxRT60s (two clips each): the input is the dry speech plus the
// reverb's wet output, so the dry speech is exactly the reference.
func (c *Corpus) SoxReverberant() ([]Reverb, error) {
	clips := c.Clips()
	var out []Reverb
	k := 0
	for _, rt := range SoxRT60s {
		rev, got, err := soxReverberance(rt)
		if err != nil {
			return nil, err
		}
		for range 2 {
			cl := clips[(k*5+2)%len(clips)]
			k++
			x := append(append([]float64(nil), cl.Samples...), make([]float64, Rate/2)...)
			wet, err := cached(fmt.Sprintf("sox|%s|%d|%.2f", cl.ID, len(x), rev), func() ([]float64, error) {
				return runF32("sox", soxArgs(rev), f32(x))
			})
			if err != nil {
				return nil, err
			}
			in := make([]float64, len(x))
			for i := range in {
				if i < len(wet) {
					in[i] = x[i] + wet[i]
				} else {
					in[i] = x[i]
				}
			}
			g := 0.89 / max(peak(in), 0.89)
			for i := range in {
				in[i] *= g
				x[i] *= g
			}
			h, _ := soxImpulse(rev)
			out = append(out, Reverb{ID: fmt.Sprintf("%s/sox%.1fs", cl.ID, rt), Dry: x, Input: in, Method: "sox",
				RT60: rt, MeasuredRT60: got, Impulse: h, Origins: cl.Origins})
		}
	}
	return out, nil
}
