package loudness

import (
	"math/rand/v2"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// At 48 kHz the filters derived from the analog prototypes are the
// coefficients BS.1770-5 tabulates (Tables 1 and 2); the RLB numerator is
// scaled by 1 at 48 kHz, so it is the table's 1, -2, 1.
func TestKWeightingMatchesBS1770At48k(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want biquad
	}{
		{"pre-filter", shelfFilter(48000), biquad{1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585}},
		{"RLB", rlbFilter(48000), biquad{1, -2, 1, -1.99004745483398, 0.99007225036621}},
	} {
		g := []float64{tc.got.b0, tc.got.b1, tc.got.b2, tc.got.a1, tc.got.a2}
		w := []float64{tc.want.b0, tc.want.b1, tc.want.b2, tc.want.a1, tc.want.a2}
		for i := range g {
			if d := g[i] - w[i]; d > 1e-8 || d < -1e-8 {
				t.Errorf("%s coefficient %d = %.14f, want %.14f", tc.name, i, g[i], w[i])
			}
		}
	}
}

// energy2, the stereo kernel where there is one, is two calls of energy
// to the last bit: outputs, sums and the states carried between blocks,
// through silence (where the states are flushed) and back.
func TestEnergy2IsEnergy(t *testing.T) {
	x := rand.New(rand.NewPCG(1, 2))
	l, r := make([]float64, 5000), make([]float64, 5000)
	for i := range l {
		l[i] = x.NormFloat64() * 0.3
		r[i] = x.NormFloat64() * 0.01
		if i > 2000 && i < 4000 {
			l[i], r[i] = 0, 0
		}
	}
	for _, rate := range []int{44100, 48000} {
		f1, g1 := newKFilter(rate), newKFilter(rate)
		f2, g2 := newKFilter(rate), newKFilter(rate)
		coef := f2.packStereo()
		for _, blk := range [][2]int{{0, 1}, {1, 700}, {700, 2500}, {2500, 3999}, {3999, 5000}} {
			a, b := l[blk[0]:blk[1]], r[blk[0]:blk[1]]
			wl, wr := f1.energy(a), g1.energy(b)
			sl, sr := energy2(&f2, &g2, a, b, coef)
			if sl != wl || sr != wr || f1 != f2 || g1 != g2 {
				t.Fatalf("%d Hz, frames %v: sums %g %g, want %g %g; states equal %v %v", rate, blk, sl, sr, wl, wr, f1 == f2, g1 == g2)
			}
		}
	}
}

// energy2Sq is energy2 to the last bit, and the meter's sum of squares
// for RMS, which it adds along the way with the stereo kernel, is the sum
// of sumSquares over the blocks, left then right, whatever the block
// sizes (odd ones shift the parity within the hops).
func TestEnergy2SqIsEnergy2(t *testing.T) {
	x := rand.New(rand.NewPCG(3, 4))
	l, r := make([]float64, 20000), make([]float64, 20000)
	for i := range l {
		l[i] = x.NormFloat64() * 0.3
		r[i] = x.NormFloat64() * 0.01
	}
	f1, g1 := newKFilter(48000), newKFilter(48000)
	f2, g2 := newKFilter(48000), newKFilter(48000)
	coef := f2.packStereo()
	var sq [4]float64
	for _, blk := range [][2]int{{0, 1}, {1, 700}, {700, 2501}, {2501, 3999}, {3999, 5000}} {
		a, b := l[blk[0]:blk[1]], r[blk[0]:blk[1]]
		wl, wr := energy2(&f1, &g1, a, b, coef)
		sl, sr := energy2Sq(&f2, &g2, a, b, coef, &sq)
		if sl != wl || sr != wr || f1 != f2 || g1 != g2 {
			t.Fatalf("frames %v: sums %g %g, want %g %g; states equal %v %v", blk, sl, sr, wl, wr, f1 == f2, g1 == g2)
		}
	}
	m, err := NewMeter(audio.Format{SampleRate: 48000, Channels: 2}, Options{Mode: ModeRMS | ModeI})
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for off := 0; off < len(l); {
		n := min(len(l)-off, 1+x.IntN(3000))
		if err := m.Write(audio.Buffer{l[off : off+n], r[off : off+n]}); err != nil {
			t.Fatal(err)
		}
		want += sumSquares(l[off : off+n])
		want += sumSquares(r[off : off+n])
		off += n
	}
	if m.rmsSum != want {
		t.Errorf("sum of squares %v, want %v", m.rmsSum, want)
	}
}
