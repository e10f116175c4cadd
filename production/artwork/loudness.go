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
// target line, on a transparent background (a page's legend uses them).
var (
	ChartGridColor   = color.NRGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	ChartInputColor  = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	ChartOutputColor = WaveformColor
	ChartTargetColor = color.NRGBA{R: 0x2e, G: 0x9e, B: 0x44, A: 0xff}
)

// The loudness span of the chart, ChartBelowLU below the target to
// ChartAboveLU above it, and ChartGridLU its grid: a line every 6 LU.
const (
	ChartBelowLU = 30
	ChartAboveLU = 10
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
	pal := color.Palette{color.Transparent, ChartGridColor, ChartInputColor, ChartOutputColor, ChartTargetColor}
	img := image.NewPaletted(image.Rect(0, 0, width, height), pal)
	top := targetLUFS + ChartAboveLU
	span := float64(ChartAboveLU + ChartBelowLU)
	row := func(lufs float64) int {
		return int(math.Round((top - lufs) / span * float64(height-1)))
	}
	for lu := -ChartBelowLU; lu <= ChartAboveLU; lu += ChartGridLU {
		y := row(targetLUFS + float64(lu))
		for x := 0; x < width; x++ {
			img.SetColorIndex(x, y, 1)
		}
	}
	n := max(len(input), len(output))
	// Lines are a pixel thick per 400 of width, so that the chart scaled
	// down to a page column still shows them.
	half := max(width/400, 1) / 2
	mark := func(x, y int, idx uint8) {
		for yy := max(y-half, 0); yy <= min(y+half, height-1); yy++ {
			img.SetColorIndex(x, yy, idx)
		}
	}
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
				mark(x, yy, idx)
			}
			prev = y
		}
	}
	plot(input, 2)
	y := row(targetLUFS)
	for x := 0; x < width; x++ {
		if (x/(2*half+1))%2 == 0 { // dashed
			mark(x, y, 4)
		}
	}
	plot(output, 3)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CSSColor is c as a CSS hex color, for a legend beside a picture.
func CSSColor(c color.NRGBA) string {
	const hex = "0123456789abcdef"
	b := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range []uint8{c.R, c.G, c.B} {
		b[1+2*i], b[2+2*i] = hex[v>>4], hex[v&15]
	}
	return string(b)
}
