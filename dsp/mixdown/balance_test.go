package mixdown_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// dialogLUFS is the gated loudness of x over the spans (BS.1770 over the
// 400 ms blocks centred in them).
func dialogLUFS(t testing.TB, x []float64, spans []span) float64 {
	t.Helper()
	r, err := loudness.MeasureBuffer(audio.Buffer{x}, fs, loudness.Options{Mode: loudness.ModeI, Speech: spans})
	if err != nil {
		t.Fatal(err)
	}
	return r.Dialog
}

// The balance acceptance: two speakers recorded 15 dB apart on their own
// microphones (each also carrying the other's bleed 20 dB down and its
// own noise) come out within 1 dB of each other, measured as the dialog
// loudness of each speaker's phrases on its processed track.
func TestBalance(t *testing.T) {
	texts := [][]string{testaudio.Sentences[0:4], testaudio.Sentences[4:8]}
	for _, c := range []struct {
		gain     []float64
		strength float64
	}{
		{[]float64{0, -15}, 1}, {[]float64{-15, 0}, 1}, {[]float64{0, -15}, 0}, {[]float64{0, -15}, 0.5}, {[]float64{-6, -21}, 1},
	} {
		if testing.Short() && (c.strength != 1 || c.gain[0] != 0) {
			continue
		}
		t.Run(fmt.Sprintf("%v strength %v", c.gain, c.strength), func(t *testing.T) {
			// The recording and its analysis depend on the gains alone:
			// the three cases at 0 and -15 dB, which differ in strength,
			// share them (analysed once, not three times).
			type scene struct {
				mics  [][]float64
				spans [][]span
				an    *mixdown.Analysis
			}
			sc := cached(fmt.Sprint("balance ", c.gain), func() scene {
				clean, spans := conversation(t, texts, testaudio.Voices[:2], 1, 0.7, 1)
				for k := range clean { // both speakers at -20 LUFS before the microphone gains
					testaudio.Scale(clean[k], dbAmp(-20-dialogLUFS(t, clean[k], spans[k])))
				}
				mics, _ := microphones(clean, c.gain, -20, -65)
				return scene{mics, spans, analyse(t, mics, nil, nil)}
			})
			mics, spans, an := sc.mics, sc.spans, sc.an
			var lv [2]float64
			for k := range mics {
				b, err := mixdown.NewBalance(monoSource(mics[k]), an, k, mixdown.BalanceOptions{Strength: c.strength})
				if err != nil {
					t.Fatal(err)
				}
				out := testaudio.ReadAll(t, b)[0]
				lv[k] = dialogLUFS(t, out, spans[k])
			}
			in0, in1 := dialogLUFS(t, mics[0], spans[0]), dialogLUFS(t, mics[1], spans[1])
			t.Logf("in %.2f and %.2f LUFS (%.2f apart), out %.2f and %.2f LUFS (%.2f apart); common level %.2f LUFS",
				in0, in1, in0-in1, lv[0], lv[1], lv[0]-lv[1], an.SpeechLUFS())
			if d := math.Abs(lv[0] - lv[1]); d > 1 {
				t.Errorf("speakers %.2f dB apart after the balance, want <= 1", d)
			}
		})
	}
}

// Within a track the leveler evens out the speaker's phrases as Strength
// says, using only the track's own speech.
func TestBalanceLevelsPhrases(t *testing.T) {
	clean, spans := conversation(t, [][]string{testaudio.Sentences[0:4], testaudio.Sentences[4:6]}, testaudio.Voices[:2], 1, 0.7, 1)
	// The host's second and fourth phrases 10 dB quieter.
	for k, s := range spans[0] {
		if k%2 == 1 {
			testaudio.Scale(clean[0][s.Start:s.End], dbAmp(-10))
		}
	}
	mics, _ := microphones(clean, []float64{0, 0}, -20, -65)
	an := analyse(t, mics, nil, nil)
	spread := func(x []float64) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range spans[0] {
			l := dialogLUFS(t, x, []span{s})
			lo, hi = math.Min(lo, l), math.Max(hi, l)
		}
		return hi - lo
	}
	in := spread(mics[0])
	for _, st := range []float64{0, 0.5, 1} {
		b, err := mixdown.NewBalance(monoSource(mics[0]), an, 0, mixdown.BalanceOptions{Strength: st})
		if err != nil {
			t.Fatal(err)
		}
		out := spread(testaudio.ReadAll(t, b)[0])
		t.Logf("strength %.1f: phrases %.1f dB apart (%.1f in)", st, out, in)
		if want := (1 - st) * in; math.Abs(out-want) > 2 {
			t.Errorf("strength %.1f: phrases %.1f dB apart, want about %.1f", st, out, want)
		}
	}
}
