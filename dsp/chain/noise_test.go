package chain

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// renderMono runs the pipeline over a mono programme and returns the
// output.
func renderMono(t *testing.T, x []float64, cfg Config) []float64 {
	t.Helper()
	out, _, _ := renderCounting(t, audio.Buffer{x}, cfg)
	return out[0]
}

// The leveler does not pump noise up: on speech in white noise at about
// 9 dB SNR, the default chain keeps the speech-to-pause ratio of the input
// within 0.5 dB.
func TestLevelerKeepsSpeechToPauseRatio(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	speech, spans := testaudio.Phrases(t, fs, testaudio.Sentences[:6], 1.2, testaudio.Voices[0], testaudio.Voices[2])
	speech = testaudio.Scale(speech, 0.25)
	x, _ := testaudio.MixAtSNR(speech, testaudio.WhiteNoise(len(speech), 1, 7), 9)
	pauses := testaudio.Complement(spans, len(x), fs/5)
	ratio := func(y []float64) float64 { return testaudio.SpanDB(y, spans) - testaudio.SpanDB(y, pauses) }
	cfg := DefaultConfig()
	cfg.Filter = dsp.FilterAutoEQ // the API's default
	y := renderMono(t, x, cfg)
	in, out := ratio(x), ratio(y)
	t.Logf("speech-to-pause ratio %.2f dB in, %.2f dB out", in, out)
	if math.Abs(out-in) > 0.5 {
		t.Errorf("speech-to-pause ratio moved %+.2f dB, want within 0.5", out-in)
	}
}

// A constant hum stays constant across a quiet and a loud speaker: the
// leveler evens the speakers, not the hum in the pauses between them.
func TestLevelerKeepsHumConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	var x []float64
	var quietPauses, loudPauses []audio.Span
	for i, s := range testaudio.Sentences[:6] {
		v := testaudio.TrimSilence(testaudio.Speech(t, fs, s, testaudio.Voices[i%2]), 1e-4)
		g := 0.3
		if i%2 == 1 {
			g *= math.Pow(10, -15.0/20) // the second speaker 15 dB quieter
		}
		x = append(x, testaudio.Scale(v, g)...)
		p := audio.Span{Start: int64(len(x) + fs/5), End: int64(len(x) + fs - fs/5)}
		if i%2 == 1 {
			quietPauses = append(quietPauses, p)
		} else {
			loudPauses = append(loudPauses, p)
		}
		x = append(x, make([]float64, fs)...)
	}
	x = testaudio.Add(x, testaudio.Hum(len(x), fs, 50, 300, math.Pow(10, -50.0/20)))
	cfg := DefaultConfig()
	cfg.Filter = dsp.FilterAutoEQ
	y := renderMono(t, x, cfg)
	q, l := testaudio.SpanDB(y, quietPauses), testaudio.SpanDB(y, loudPauses)
	t.Logf("hum in pauses: %.2f dB after the quiet speaker, %.2f dB after the loud one (input %.2f / %.2f)",
		q, l, testaudio.SpanDB(x, quietPauses), testaudio.SpanDB(x, loudPauses))
	if math.Abs(q-l) > 1 {
		t.Errorf("hum differs by %.2f dB between the speakers' pauses, want within 1", q-l)
	}
}
