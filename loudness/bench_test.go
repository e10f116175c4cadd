package loudness

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// benchMeter writes 10 s of programme material per op in 4096-frame
// blocks and reports the speed as a multiple of real time.
func benchMeter(b *testing.B, mode Mode) {
	const rate, secs = 48000, 10
	prog := programme(rate, secs, 5)
	m, err := NewMeter(audio.Format{SampleRate: rate, Channels: 2}, Options{Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	view := make(audio.Buffer, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for off := 0; off < prog.Frames(); off += 4096 {
			m.Write(prog.SliceInto(view, off, min(off+4096, prog.Frames())))
		}
	}
	b.ReportMetric(float64(secs)*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}

func BenchmarkMeterILRATruePeak(b *testing.B) { benchMeter(b, ModeI|ModeLRA|ModeTruePeak) }
func BenchmarkMeterEBU(b *testing.B)          { benchMeter(b, ModeEBU) }
func BenchmarkMeterKWeightOnly(b *testing.B)  { benchMeter(b, ModeI) }
func BenchmarkMeterTruePeakOnly(b *testing.B) { benchMeter(b, ModeTruePeak) }

// BenchmarkTruePeakDetector measures the interpolator without skipping.
func BenchmarkTruePeakDetector(b *testing.B) {
	x := programme(48000, 1, 6)[0]
	d := NewTruePeakDetector(48000, 1)
	b.ReportAllocs()
	for b.Loop() {
		d.Process(0, x)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
