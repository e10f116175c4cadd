package live_test

import (
	"math"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// TestPeakStage: voices whose peaks stand far above their loudness (the
// held-out half's codec2 voices, a synthetic glottal pulse train) lose
// less loudness to a -1 dBTP ceiling through the peak stage and the
// limiter than through the limiter alone, with no more distortion
// (SI-SDR against the input, whose scale it ignores), and the true peak
// stays under the ceiling; a plain voice is all but untouched.
func TestPeakStage(t *testing.T) {
	const rate, target, ceiling = realaudio.Rate, -16.0, -1.0
	voices := map[string][]float64{"synthetic": testaudio.SynthVoice(rate, 4, 110, 3)}
	c := realaudio.Load(t, realaudio.HeldOut)
	for _, cl := range c.Clips() {
		for _, who := range []string{"codec2/big_dog", "codec2/hts2", "asterisk/allison"} {
			if cl.Speaker == who && len(voices[who]) < 4*rate {
				voices[who] = append(voices[who], cl.Samples...)
			}
		}
	}
	measure := func(x []float64) (lufs, tp float64) {
		r, err := loudness.MeasureBuffer(audio.Buffer{x}, rate, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
		if err != nil {
			t.Fatal(err)
		}
		return r.Integrated, r.TruePeak
	}
	for name, x := range voices {
		l, _ := measure(x)
		x = testaudio.Scale(append([]float64(nil), x...), math.Pow(10, (target-l)/20))
		_, peak := measure(x)
		run := func(stage bool) (loss, sisdr, tp float64) {
			var s audio.Source = audio.NewBufferSource(audio.Buffer{x}, rate)
			if stage {
				ps, err := live.NewPeakStage(s, ceiling)
				if err != nil {
					t.Fatal(err)
				}
				s = ps
			}
			lim, err := dsp.NewLimiter(s, ceiling)
			if err != nil {
				t.Fatal(err)
			}
			out := readAll(t, lim, 4096)[0]
			l, tp := measure(out)
			return target - l, testaudio.SISDR(x, out), tp
		}
		l0, d0, _ := run(false)
		l1, d1, tp := run(true)
		t.Logf("%s (true peak %+.1f dBTP at %v LUFS): loudness taken %.2f LU, SI-SDR %.1f dB through the peak stage and the limiter; %.2f LU, %.1f dB through the limiter alone", name, peak, target, l1, d1, l0, d0)
		if tp > ceiling {
			t.Errorf("%s: true peak %.2f dBTP over the ceiling", name, tp)
		}
		if d1 < d0-0.5 {
			t.Errorf("%s: SI-SDR %.1f dB through the peak stage, %.1f through the limiter alone", name, d1, d0)
		}
		switch {
		case strings.HasPrefix(name, "asterisk"):
			if l1 > 0.1 {
				t.Errorf("%s, a plain voice: %.2f LU taken", name, l1)
			}
		case l1 > l0-0.1:
			t.Errorf("%s: %.2f LU taken through the peak stage, %.2f through the limiter alone: want 0.1 less", name, l1, l0)
		}
	}
}

func TestPeakStageContract(t *testing.T) {
	in := audio.Buffer(testaudio.SpeechLike(48000, 3, 0.9))
	out := audiotest.CheckSource(t, func() audio.Source {
		p, err := live.NewPeakStage(audio.NewBufferSource(in, 48000), -6)
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	ceil := dsp.DBToGain(-6)
	for c := range out {
		for i, v := range out[c] {
			if math.Abs(v) > ceil*(1+1e-9) {
				t.Fatalf("channel %d frame %d: %v over the ceiling %v", c, i, v, ceil)
			}
		}
	}
}
