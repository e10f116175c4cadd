package loudness

import (
	"math"

	"github.com/audiopost/audiopost/audio"
)

// seg is one piece of a test signal: a 1 kHz tone (or silence) on the
// channels given, at a peak level in dBFS.
type seg struct {
	dur   float64 // seconds
	level float64 // dBFS peak; -Inf = silence
}

// tones builds a stereo (or n-channel) signal of 1 kHz tone segments, the
// phase running on across segments, as the EBU test files are made. The
// tone repeats every rate/gcd(rate, 1000) samples (48 at 48 kHz, 441 at
// 44.1): one period is computed and repeated, sample i taking the sine
// at i modulo the period, the same phase without the rounding of a large
// argument; a math.Sin a sample was 40% of the EBU tests' CPU.
func tones(rate, channels int, segs ...seg) audio.Buffer {
	total := 0
	for _, s := range segs {
		total += int(math.Round(s.dur * float64(rate)))
	}
	period := rate / gcd(rate, 1000)
	sine := make([]float64, period)
	for i := range sine {
		sine[i] = math.Sin(2 * math.Pi * 1000 * float64(i) / float64(rate))
	}
	b := audio.NewBuffer(channels, total)
	i := 0
	for _, s := range segs {
		n := int(math.Round(s.dur * float64(rate)))
		amp := dbToLin(s.level)
		for k := 0; k < n; k, i = k+1, i+1 {
			v := amp * sine[i%period]
			for c := range b {
				b[c][i] = v
			}
		}
	}
	return b
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func dbToLin(db float64) float64 {
	if math.IsInf(db, -1) {
		return 0
	}
	return math.Pow(10, db/20)
}

// sineTP is a Tech 3341 true-peak test tone: frequency f, amplitude amp,
// initial phase in degrees, with 10 ms raised-cosine fades.
func sineTP(rate int, f, amp, phaseDeg, dur float64) audio.Buffer {
	n := int(dur * float64(rate))
	b := audio.NewBuffer(2, n)
	fade := int(0.010 * float64(rate))
	ph := phaseDeg * math.Pi / 180
	for i := 0; i < n; i++ {
		v := amp * math.Sin(2*math.Pi*f*float64(i)/float64(rate)+ph)
		v *= taper(i, n, fade)
		b[0][i], b[1][i] = v, v
	}
	return b
}

func taper(i, n, fade int) float64 {
	switch {
	case i < fade:
		return 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(fade))
	case i >= n-fade:
		return 0.5 - 0.5*math.Cos(math.Pi*float64(n-1-i)/float64(fade))
	}
	return 1
}

// burstTP builds Tech 3341 cases 20-23: a sine at f1 (amplitude 0.5)
// containing one period of a sine at f2 (amplitude 1), continuous in phase,
// synthesised at 4x the rate, low-pass filtered and decimated with the
// given offset (0-3) at the 4x rate.
func burstTP(rate int, f1, f2 float64, offset int) audio.Buffer {
	hi := 4 * float64(rate)
	n := 4 * rate // 1 s at the 4x rate
	x := make([]float64, n)
	// Start the single period at a positive-going zero crossing of the
	// slow sine, so both joins are continuous.
	period1 := hi / f1
	start := int(math.Round(period1 * math.Round(float64(n/2)/period1)))
	len2 := int(math.Round(hi / f2))
	for i := 0; i < n; i++ {
		switch {
		case i < start:
			x[i] = 0.5 * math.Sin(2*math.Pi*f1*float64(i)/hi)
		case i < start+len2:
			x[i] = math.Sin(2 * math.Pi * f2 * float64(i-start) / hi)
		default:
			x[i] = 0.5 * math.Sin(2*math.Pi*f1*float64(i-start-len2)/hi)
		}
		x[i] *= taper(i, n, int(0.01*hi))
	}
	// Anti-aliasing: windowed sinc at 0.45 of the target rate.
	const half = 256
	h := make([]float64, 2*half+1)
	fc := 0.45 * float64(rate) / hi
	for k := range h {
		t := float64(k - half)
		w := 0.42 - 0.5*math.Cos(2*math.Pi*float64(k)/float64(2*half)) + 0.08*math.Cos(4*math.Pi*float64(k)/float64(2*half))
		h[k] = 2 * fc * sinc(2*fc*t) * w
	}
	m := n / 4
	b := audio.NewBuffer(2, m)
	for j := 0; j < m; j++ {
		c := 4*j + offset
		var y float64
		for k := range h {
			if p := c + k - half; p >= 0 && p < n {
				y += h[k] * x[p]
			}
		}
		b[0][j], b[1][j] = y, y
	}
	return b
}

// cat joins buffers of the same channel count.
func cat(bs ...audio.Buffer) audio.Buffer {
	out := make(audio.Buffer, len(bs[0]))
	for _, b := range bs {
		for c := range out {
			out[c] = append(out[c], b[c]...)
		}
	}
	return out
}

// writeBlocks writes b to m in blocks of n frames, calling each after
// every block.
func writeBlocks(m *Meter, b audio.Buffer, n int, each func()) error {
	view := make(audio.Buffer, len(b))
	for off := 0; off < b.Frames(); off += n {
		if err := m.Write(b.SliceInto(view, off, min(off+n, b.Frames()))); err != nil {
			return err
		}
		if each != nil {
			each()
		}
	}
	return nil
}

func fmtStereo(rate int) audio.Format { return audio.Format{SampleRate: rate, Channels: 2} }
