// Package conversation measures what a leveler made of a conversation whose
// speakers take turns at different levels (testaudio.Conversation): the
// loudness after each change of speaker, the integrated loudness, the
// true peak, the spread of the short-term loudness and whether pauses
// were raised against the speech around them. The live tests of several
// packages share it, with the programmes they play: RealProgramme builds
// one from the real recordings of internal/realaudio (speakers taking
// turns, music, noise), and Liquidsoap runs the peer the live graph is
// measured beside on it.
package conversation

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// Figures are what a leveler did to a testaudio.Conversation (see Measure).
type Figures struct {
	// WorstJump is the largest distance in LU from the target of the
	// short-term loudness 5 s after a turn's start (the window ending
	// there), over every turn after the first.
	WorstJump float64
	// WorstTurn is the index of that turn (0 when there is none), and
	// AfterJump holds the short-term loudness 5 s into every turn after
	// the first that the output covers, in LUFS, in order.
	WorstTurn int
	AfterJump []float64
	// Integrated loudness (LUFS) and true peak (dBTP) of the output.
	Integrated, TruePeak float64
	// RatioChange is how much the ratio of the speech level to the pause
	// level changed, output less input, in dB, on average over the pauses:
	// each pause (50 ms in from its edges) against the two phrases around
	// it, RMS levels above 150 Hz (so that a high-pass filter's removal of
	// rumble does not count). Negative when pauses were raised against
	// their neighbouring speech.
	RatioChange float64
	// ShortTermSpread is the standard deviation in LU of the output's
	// short-term loudness (every 100 ms) over the windows that are mostly
	// speech, after the first turn.
	ShortTermSpread float64
}

// Measure measures out, the processed in, a mono testaudio.Conversation at
// rate with its phrases and turns, against a loudness target. The two must
// be aligned and equally long. With dualMono, out is one channel of a
// stereo stream whose channels are the same, and is measured as such
// (+3 LU).
func Measure(t testing.TB, in, out []float64, rate int, spans []audio.Span, turns []testaudio.Turn, target float64, dualMono bool) Figures {
	t.Helper()
	return measure(t, in, out, rate, spans, turns, nil, target, dualMono)
}

// MeasureProgramme measures out, the processed p.Input (or a stretch of
// it from the start, both aligned), as Measure does; the stretches of
// music alone are not pauses.
func MeasureProgramme(t testing.TB, p Programme, out []float64, target float64, dualMono bool) Figures {
	t.Helper()
	n := min(len(p.Input), len(out))
	var spans []audio.Span
	for _, s := range p.Phrases {
		if s.End <= int64(n) {
			spans = append(spans, s)
		}
	}
	var turns []testaudio.Turn
	for _, tr := range p.Turns {
		if tr.Start < n {
			turns = append(turns, tr)
		}
	}
	return measure(t, p.Input[:n], out[:n], realaudio.Rate, spans, turns, p.Music, target, dualMono)
}

func measure(t testing.TB, in, out []float64, rate int, spans []audio.Span, turns []testaudio.Turn, music []audio.Span, target float64, dualMono bool) Figures {
	t.Helper()
	var f Figures
	r, err := loudness.MeasureBuffer(audio.Buffer{out}, rate, loudness.Options{DualMono: dualMono})
	if err != nil {
		t.Fatal(err)
	}
	f.Integrated, f.TruePeak = r.Integrated, r.TruePeak
	var steps []float64
	m, err := loudness.NewMeter(audio.Format{SampleRate: rate, Channels: 1}, loudness.Options{Mode: loudness.ModeM, DualMono: dualMono, OnStep: func(e float64) { steps = append(steps, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(audio.Buffer{out}); err != nil {
		t.Fatal(err)
	}
	st := loudness.WindowLoudness(steps, loudness.ShortTermSteps)
	sf := loudness.StepFrames(rate)
	for i, tr := range turns[1:] {
		k := (tr.Start+5*rate)/sf - loudness.ShortTermSteps // the window ending 5 s in
		if k >= len(st) {
			break
		}
		f.AfterJump = append(f.AfterJump, st[k])
		if d := math.Abs(st[k] - target); d > f.WorstJump {
			f.WorstJump, f.WorstTurn = d, i+1
		}
	}
	// Speech share of each window, for the spread.
	speech := make([]float64, len(steps))
	for _, sp := range spans {
		for i := sp.Start; i < sp.End; i++ {
			if k := int(i) / sf; k < len(speech) {
				speech[k] += 1 / float64(sf)
			}
		}
	}
	var sum, sum2 float64
	n := 0
	for k, v := range st {
		if len(turns) > 1 && k*sf < turns[1].Start || !loudness.Defined(v) {
			continue
		}
		var share float64
		for _, s := range speech[k : k+loudness.ShortTermSteps] {
			share += s / loudness.ShortTermSteps
		}
		if share < 0.6 {
			continue
		}
		sum += v
		sum2 += v * v
		n++
	}
	if n > 1 {
		mean := sum / float64(n)
		f.ShortTermSpread = math.Sqrt(max(0, sum2/float64(n)-mean*mean))
	}
	// Each pause against the phrases on either side of it.
	hin, hout := highPass(in, 150, rate), highPass(out, 150, rate)
	var change float64
	pauses := 0
	for k := 0; k+1 < len(spans); k++ {
		p := audio.Span{Start: spans[k].End + int64(rate/20), End: spans[k+1].Start - int64(rate/20)}
		if p.Len() < int64(rate/10) || overlaps(p, music) {
			continue
		}
		near := spans[k : k+2]
		ratio := func(x []float64) float64 { return testaudio.SpanDB(x, near) - testaudio.SpanDB(x, []audio.Span{p}) }
		change += ratio(hout) - ratio(hin)
		pauses++
	}
	if pauses > 0 {
		f.RatioChange = change / float64(pauses)
	}
	return f
}

func overlaps(s audio.Span, spans []audio.Span) bool {
	for _, o := range spans {
		if s.Start < o.End && o.Start < s.End {
			return true
		}
	}
	return false
}

// highPass returns x through a 4th-order Butterworth high-pass at fc Hz
// (two cascaded biquads, the bilinear transform).
func highPass(x []float64, fc float64, rate int) []float64 {
	y := append([]float64(nil), x...)
	k := math.Tan(math.Pi * fc / float64(rate))
	for _, q := range []float64{0.5411961, 1.3065630} {
		n := 1 / (1 + k/q + k*k)
		b0, b1, b2 := n, -2*n, n
		a1, a2 := 2*(k*k-1)*n, (1-k/q+k*k)*n
		var x1, x2, y1, y2 float64
		for i, v := range y {
			o := b0*v + b1*x1 + b2*x2 - a1*y1 - a2*y2
			x2, x1, y2, y1 = x1, v, y1, o
			y[i] = o
		}
	}
	return y
}
