package artwork

import (
	"bytes"
	"image/png"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// waveSignal is 10 s at 8 kHz: a 0.5 peak sine for 4 s, silence for 2 s,
// then a 0.9 peak sine on the left channel only.
func waveSignal() audio.Buffer {
	const rate = 8000
	b := audio.NewBuffer(2, 10*rate)
	s1 := audiotest.Sine(1, rate, 220, 0.5, 4*rate)
	s2 := audiotest.Sine(1, rate, 330, 0.9, 4*rate)
	for c := range b {
		copy(b[c], s1[0])
	}
	copy(b[0][6*rate:], s2[0])
	return b
}

func writeBlocks(w *Waveform, b audio.Buffer, block int) {
	view := make(audio.Buffer, len(b))
	for i := 0; i < b.Frames(); i += block {
		w.Write(b.SliceInto(view, i, min(i+block, b.Frames())))
	}
}

func TestWaveformColumns(t *testing.T) {
	sig := waveSignal()
	const width = 100
	var ref [2][]float64
	for _, block := range audiotest.BlockSizes {
		w := NewWaveform(8000, width)
		writeBlocks(w, sig, block)
		if w.Frames() != int64(sig.Frames()) {
			t.Fatalf("block %d: %d frames counted, want %d", block, w.Frames(), sig.Frames())
		}
		lo, hi := w.Columns(width)
		if ref[0] == nil {
			ref = [2][]float64{lo, hi}
		} else {
			for x := range lo {
				if lo[x] != ref[0][x] || hi[x] != ref[1][x] {
					t.Fatalf("block %d: column %d differs from block %d", block, x, audiotest.BlockSizes[0])
				}
			}
		}
		// Each column is 0.1 s; a 220 Hz sine reaches its peak in it.
		for x := 0; x < width; x++ {
			var want float64
			switch {
			case x < 40:
				want = 0.5
			case x >= 60:
				want = 0.9
			}
			if math.Abs(hi[x]-want) > 0.01 || math.Abs(lo[x]+want) > 0.01 {
				t.Errorf("block %d column %d: [%.3f, %.3f], want ±%.1f", block, x, lo[x], hi[x], want)
			}
		}
	}
}

// A stream much longer than the bins hold merges bins and still places
// features at the right column.
func TestWaveformLongStream(t *testing.T) {
	const rate, width = 1000, 50
	w := NewWaveform(rate, width)
	// 1000 s of silence with one click at 750 s.
	block := audio.NewBuffer(1, rate)
	for s := 0; s < 1000; s++ {
		block.Zero()
		if s == 750 {
			block[0][500] = 1
		}
		w.Write(block)
	}
	lo, hi := w.Columns(width)
	for x := range hi {
		want := 0.0
		if x == 37 { // 750 s of 1000 s over 50 columns
			want = 1
		}
		if hi[x] != want || lo[x] != 0 {
			t.Errorf("column %d: [%v, %v], want max %v", x, lo[x], hi[x], want)
		}
	}
}

func TestWaveformPNG(t *testing.T) {
	w := NewWaveform(8000, 200)
	w.Write(waveSignal())
	data, err := w.PNG(200, 101)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ink := func(x, y int) bool { _, _, _, a := img.At(x, y).RGBA(); return a != 0 }
	// Column 10 (0.5 peak): rows 25..75 inked, 20 and 80 not.
	if !ink(10, 26) || !ink(10, 74) || ink(10, 20) || ink(10, 80) {
		t.Error("0.5 peak column not drawn from row 25 to 75")
	}
	// Silent column 100: only the center row.
	if !ink(100, 50) || ink(100, 48) || ink(100, 52) {
		t.Error("silent column not a single center dot")
	}
	// Column 150 (0.9 peak): rows 5..95.
	if !ink(150, 6) || !ink(150, 94) || ink(150, 2) {
		t.Error("0.9 peak column not drawn from row 5 to 95")
	}
}

func TestWaveformWriteAllocs(t *testing.T) {
	w := NewWaveform(48000, WaveformWidth)
	b := audiotest.Noise(2, audio.DefaultBlock, 0.5, 1)
	allocs := testing.AllocsPerRun(2000, func() { w.Write(b) })
	if allocs != 0 {
		t.Errorf("Write allocates %.1f times per block", allocs)
	}
}

func BenchmarkWaveformWrite(b *testing.B) {
	w := NewWaveform(48000, WaveformWidth)
	buf := audiotest.Noise(2, audio.DefaultBlock, 0.5, 1)
	b.ReportAllocs()
	b.SetBytes(int64(8 * 2 * audio.DefaultBlock))
	for b.Loop() {
		w.Write(buf)
	}
}
