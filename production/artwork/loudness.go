package artwork

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/audiopost/audiopost/loudness"
)

// Size of the loudness chart the engine draws.
const (
	ChartWidth  = 1200
	ChartHeight = 240
)

// Colors of the loudness chart: the grid, the input, the output and the
// target line, on a transparent background.
var (
	chartGrid   = color.NRGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	chartInput  = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	chartOutput = WaveformColor
	chartTarget = color.NRGBA{R: 0x2e, G: 0x9e, B: 0x44, A: 0xff}
)

// ChartRangeLU is the loudness span of the chart, ChartGridLU its grid: from
// 30 LU below the target to 10 LU above it, a line every 6 LU.
const (
	chartBelowLU = 30
	chartAboveLU = 10
	ChartGridLU  = 6
)

// LoudnessChart draws the short-term loudness (3 s windows, EBU R 128) of
// a programme's input and output over time, from their 100 ms step
// energies (loudness.Options.OnStep): the input grey, the output blue, the
// target a green line, a light grid every ChartGridLU LU from 30 LU below
// the target to 10 LU above it. It is the picture that shows what leveling
// and normalization did: a ragged grey line become an even blue one on the
// target. Either series may be empty. The result is a PNG of width x height.
func LoudnessChart(input, output []float64, targetLUFS float64, width, height int) ([]byte, error) {
	pal := color.Palette{color.Transparent, chartGrid, chartInput, chartOutput, chartTarget}
	img := image.NewPaletted(image.Rect(0, 0, width, height), pal)
	top := targetLUFS + chartAboveLU
	span := float64(chartAboveLU + chartBelowLU)
	row := func(lufs float64) int {
		return int(math.Round((top - lufs) / span * float64(height-1)))
	}
	for lu := -chartBelowLU; lu <= chartAboveLU; lu += ChartGridLU {
		y := row(targetLUFS + float64(lu))
		for x := 0; x < width; x++ {
			img.SetColorIndex(x, y, 1)
		}
	}
	n := max(len(input), len(output))
	plot := func(steps []float64, idx uint8) {
		st := loudness.WindowLoudness(steps, loudness.ShortTermSteps)
		if len(st) == 0 {
			return
		}
		prev := -1
		for x := 0; x < width; x++ {
			// Windows ending in this column's time span; their mean power.
			a := x * n / width
			b := max((x+1)*n/width, a+1)
			var e float64
			var k int
			for j := a - loudness.ShortTermSteps + 1; j < b-loudness.ShortTermSteps+1; j++ {
				if j >= 0 && j < len(st) && !math.IsInf(st[j], -1) {
					e += math.Pow(10, st[j]/10)
					k++
				}
			}
			if k == 0 {
				prev = -1
				continue
			}
			y := row(10 * math.Log10(e/float64(k)))
			y = min(max(y, 0), height-1)
			lo, hi := y, y
			if prev >= 0 {
				lo, hi = min(prev, y), max(prev, y)
			}
			for yy := lo; yy <= hi; yy++ {
				img.SetColorIndex(x, yy, idx)
			}
			prev = y
		}
	}
	plot(input, 2)
	y := row(targetLUFS)
	for x := 0; x < width; x += 2 { // dashed
		img.SetColorIndex(x, y, 4)
	}
	plot(output, 3)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
