package loudness

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// FuzzMeter feeds arbitrary samples (NaN, Inf, huge and subnormal values
// included), cut into arbitrary blocks, to a meter in an arbitrary mode
// and layout: it must neither panic nor report NaN or +Inf.
func FuzzMeter(f *testing.F) {
	seed := make([]byte, 8*64)
	for i := 0; i < 64; i++ {
		binary.LittleEndian.PutUint64(seed[8*i:], math.Float64bits(math.Sin(float64(i))))
	}
	f.Add(uint8(0), uint8(2), uint16(7), false, seed)
	nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	f.Add(uint8(255), uint8(1), uint16(1), true, append(nan, seed...))
	inf := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(1)))
	f.Add(uint8(3), uint8(6), uint16(300), false, append(seed, inf...))
	f.Fuzz(func(t *testing.T, mode, channels uint8, block uint16, dual bool, data []byte) {
		ch := int(channels%8) + 1
		// Low rates keep an execution cheap; 48 kHz still gets its share.
		rate := []int{8000, 8000, 16000, 48000}[int(mode)%4]
		opts := Options{Mode: Mode(mode), DualMono: dual && ch == 1}
		m, err := NewMeter(audio.Format{SampleRate: rate, Channels: ch}, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Repeat the data so that the windows (up to 3 s) fill.
		frames := len(data) / 8 / ch
		if frames == 0 {
			return
		}
		b := audio.NewBuffer(ch, frames)
		for i := 0; i < frames; i++ {
			for c := 0; c < ch; c++ {
				b[c][i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*(i*ch+c):]))
			}
		}
		bs := int(block)%4096 + 1
		for written := 0; written < rate*32/10; written += frames {
			if err := writeBlocks(m, b, bs, nil); err != nil {
				t.Fatal(err)
			}
		}
		r := m.Result()
		for name, v := range map[string]float64{"I": r.Integrated, "LRA": r.LRA, "LRALow": r.LRALow, "LRAHigh": r.LRAHigh,
			"M": r.MaxMomentary, "S": r.MaxShortTerm, "TP": r.TruePeak, "SP": r.SamplePeak, "RMS": r.RMS,
			"noise": r.NoiseLevel, "signal": r.SignalLevel, "SNR": r.SNR, "dialog": r.Dialog,
			"momentary": m.Momentary(), "shortterm": m.ShortTerm()} {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				t.Fatalf("%s = %v", name, v)
			}
		}
	})
}

func TestNonFiniteSamples(t *testing.T) {
	b := tones(48000, 2, seg{5, -23})
	clean := measure(t, 48000, Options{}, b)
	// At zero crossings of the tone, so zeroing them leaves no click.
	b[0][1008], b[1][2016], b[0][3000] = math.NaN(), math.Inf(1), 1e300
	r := measure(t, 48000, Options{}, b)
	within(t, "I with garbage samples", r.Integrated, clean.Integrated, -0.01, 0.01)
	within(t, "TP with garbage samples", r.TruePeak, clean.TruePeak, -0.01, 0.01)
	within(t, "SP with garbage samples", r.SamplePeak, clean.SamplePeak, -0.001, 0.001)
}
