package artwork

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"testing"
)

// The chart puts each series where its loudness is: a constant input 12 LU
// under the target is drawn on the row of target-12, the output on the
// target's row, in their colors.
func TestLoudnessChartRows(t *testing.T) {
	const target = -16.0
	energy := func(lufs float64) float64 { return math.Pow(10, (lufs+0.691)/10) }
	in := make([]float64, 600) // 60 s
	out := make([]float64, 600)
	for i := range in {
		in[i], out[i] = energy(target-12), energy(target)
	}
	data, err := LoudnessChart(in, out, target, 300, 120)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b color.Color) bool {
		r1, g1, b1, a1 := a.RGBA()
		r2, g2, b2, a2 := b.RGBA()
		return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
	}
	rowOf := func(lufs float64) int {
		return int(math.Round((target + ChartAboveLU - lufs) / (ChartAboveLU + ChartBelowLU) * 119))
	}
	x := 200
	if c := img.At(x, rowOf(target-12)); !same(c, ChartInputColor) {
		t.Errorf("input row %d: %v, want the input color", rowOf(target-12), c)
	}
	if c := img.At(x, rowOf(target)); !same(c, ChartOutputColor) {
		t.Errorf("output row %d: %v, want the output color", rowOf(target), c)
	}
	if c := img.At(x, rowOf(target-6)); !same(c, ChartGridColor) {
		t.Errorf("grid row %d: %v, want the grid color", rowOf(target-6), c)
	}
	if _, err := LoudnessChart(nil, nil, target, 10, 10); err != nil {
		t.Errorf("empty chart: %v", err)
	}
}
