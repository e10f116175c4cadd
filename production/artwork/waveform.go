package artwork

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Size of the waveform image the Engine draws.
const (
	WaveformWidth  = 1200
	WaveformHeight = 200
)

// WaveformColor is the color of the waveform on a transparent background.
var WaveformColor = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb2, A: 0xff}

// Waveform is an audio.Sink that keeps the minimum and maximum sample (over
// all channels) of consecutive bins, enough to draw the whole stream at
// up to the width it was made for, without knowing the length in advance:
// when the bins fill up, neighbours merge and the bin length doubles.
// Memory is fixed at creation; Write allocates nothing.
type Waveform struct {
	per    int64 // frames per bin
	lo, hi []float64
	curLo  float64
	curHi  float64
	curN   int64
	frames int64
}

// NewWaveform returns a Waveform for drawing at up to width columns;
// bins start at 10 ms.
func NewWaveform(sampleRate, width int) *Waveform {
	width = max(width, 1)
	return &Waveform{
		per: int64(max(1, sampleRate/100)),
		lo:  make([]float64, 0, 2*width), hi: make([]float64, 0, 2*width),
		curLo: math.Inf(1), curHi: math.Inf(-1),
	}
}

// Write implements audio.Sink.
func (w *Waveform) Write(b audio.Buffer) error {
	n := b.Frames()
	for i := 0; i < n; {
		take := int(min(int64(n-i), w.per-w.curN))
		for _, ch := range b {
			w.curLo, w.curHi = bounds(ch[i:i+take], w.curLo, w.curHi)
		}
		i += take
		w.curN += int64(take)
		w.frames += int64(take)
		if w.curN == w.per {
			w.push()
		}
	}
	return nil
}

func (w *Waveform) push() {
	if len(w.lo) == cap(w.lo) {
		// Merge neighbours: half the bins, twice as long.
		h := len(w.lo) / 2
		for k := 0; k < h; k++ {
			w.lo[k] = math.Min(w.lo[2*k], w.lo[2*k+1])
			w.hi[k] = math.Max(w.hi[2*k], w.hi[2*k+1])
		}
		w.lo, w.hi = w.lo[:h], w.hi[:h]
		w.per *= 2
		// The bin being filled has the old length: it would be half a
		// new bin, so it stays open until it has the new length.
		if w.curN < w.per {
			return
		}
	}
	w.lo = append(w.lo, w.curLo)
	w.hi = append(w.hi, w.curHi)
	w.curLo, w.curHi, w.curN = math.Inf(1), math.Inf(-1), 0
}

// Frames returns the number of frames written.
func (w *Waveform) Frames() int64 { return w.frames }

// Columns returns the minimum and maximum of each of width columns
// spanning the stream; a partly filled last bin counts. Both slices are
// nil before anything was written.
func (w *Waveform) Columns(width int) (lo, hi []float64) {
	blo, bhi := w.lo, w.hi
	if w.curN > 0 {
		blo = append(blo[:len(blo):len(blo)], w.curLo)
		bhi = append(bhi[:len(bhi):len(bhi)], w.curHi)
	}
	nb := len(blo)
	if nb == 0 || width <= 0 {
		return nil, nil
	}
	lo, hi = make([]float64, width), make([]float64, width)
	for x := 0; x < width; x++ {
		a := x * nb / width
		b := max((x+1)*nb/width, a+1)
		lo[x], hi[x] = math.Inf(1), math.Inf(-1)
		for k := a; k < b && k < nb; k++ {
			lo[x] = math.Min(lo[x], blo[k])
			hi[x] = math.Max(hi[x], bhi[k])
		}
	}
	return lo, hi
}

// Image draws the waveform: each column a vertical line from its minimum
// to its maximum, full scale [-1, 1] spanning the height, on a
// transparent background.
func (w *Waveform) Image(width, height int) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, width, height), color.Palette{color.Transparent, WaveformColor})
	lo, hi := w.Columns(width)
	row := func(v float64) int {
		v = math.Max(-1, math.Min(1, v))
		return int(math.Round((1 - v) / 2 * float64(height-1)))
	}
	for x := range lo {
		top, bot := row(hi[x]), row(lo[x])
		for y := top; y <= bot; y++ {
			img.SetColorIndex(x, y, 1)
		}
	}
	return img
}

// PNG encodes Image as PNG.
func (w *Waveform) PNG(width, height int) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, w.Image(width, height)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// boundsGo returns lo and hi lowered and raised to the samples of x, in
// order: a sample is taken where it is below lo (above hi), so NaNs
// never are, and of equal values the first stays (-0 or +0). bounds is
// boundsGo, or a kernel that returns the same values.
func boundsGo(x []float64, lo, hi float64) (float64, float64) {
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}
