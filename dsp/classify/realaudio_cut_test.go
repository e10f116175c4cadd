package classify_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
)

var realFull = flag.Bool("realfull", false, "TestSilenceCutterHeldOut: measure the word error rates before and after cutting (PocketSphinx, a minute of CPU)")

// TestSilenceCutterHeldOut is issue 30's acceptance of the silence cutter
// on real speech: the held-out prompts (Allison, asterisk-core-sounds-en)
// joined by pauses of 0.5 to 3.2 s of their own room tone, through the
// Classifier and the cutter as the product runs them (MaxPause 1 s,
// KeepPause 0.7 s). Every pause over a second comes out at most a second
// long, and no word is cut: the word error rate of PocketSphinx
// (speech/pocketsphinx) against the transcripts after cutting lies within
// 2 points of its rate before. The recogniser is the slow part and runs
// with -realfull only:
//
//	go test ./dsp/classify -run TestSilenceCutterHeldOut -realfull -v
//
// Without it, no cut may take more than 20 ms of the phrases' sound within
// 30 dB of their loudest 10 ms. Not in -short.
func TestSilenceCutterHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts and recognises held-out speech; not in -short")
	}
	var rec *pocketsphinx.Recognizer
	if *realFull {
		rec = recognizer(t)
	}
	c := realaudio.Load(t, realaudio.HeldOut)
	measureCutter(t, rec, c.Paused())
}

// recognizer returns the offline recognizer the -realfull runs count
// words with.
func recognizer(t *testing.T) *pocketsphinx.Recognizer {
	t.Helper()
	need.Program(t, pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	rec, err := pocketsphinx.New(speech.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestSilenceCutterNoisyHeldOut is the silence cutter on the held-out
// paused speech with a real noise under the whole file, which activity
// alone calls sound in the pauses: realaudio's PausedUnder (a machine or
// a crowd, steady, 30, 40 and 50 dB under the speech) and the half's
// fluctuating noises (NoiseUnder: wind, traffic, a crowd's applause) 30
// and 40 dB under. The same acceptance as TestSilenceCutterHeldOut. The
// plain run takes the steady noise 40 dB under and three files; -realfull
// every level and file, with the word error rates under the steady noises
// (the fluctuating ones are measured without the recogniser):
//
//	go test ./dsp/classify -run TestSilenceCutterNoisyHeldOut -realfull -v
//
// With -tuning it measures the tuning half instead, to tune on, without a
// recogniser (its prompts are French and Italian): its English file and
// PausedOtherLanguages' twelve under each of its eight noises, steady or
// not, at 30, 40 and 50 dB.
func TestSilenceCutterNoisyHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("cuts and recognises held-out speech; not in -short")
	}
	// -tuning is TestSpeechMusicHeldOut's flag, of the package's
	// internal tests.
	if f := flag.Lookup("tuning"); f != nil && f.Value.String() == "true" {
		c := realaudio.Load(t, realaudio.Tuning)
		ps := append(c.Paused(), c.PausedOtherLanguages()...)
		for _, nz := range c.Noises {
			for _, under := range realaudio.NoiseUnderDBs {
				t.Run(fmt.Sprintf("%s/%gdB", nz.ID, under), func(t *testing.T) {
					measureCutter(t, nil, c.NoiseUnder(ps, under, []realaudio.Noise{nz}))
				})
			}
		}
		return
	}
	var rec *pocketsphinx.Recognizer
	levels := []float64{40}
	if *realFull {
		rec = recognizer(t)
		levels = realaudio.NoiseUnderDBs
	}
	c := realaudio.Load(t, realaudio.HeldOut)
	for _, under := range levels {
		ps := c.PausedUnder(under)
		if len(ps) == 0 {
			t.Fatal("no steady noise in the held-out half")
		}
		if !*realFull {
			ps = ps[:min(3, len(ps))]
		}
		t.Run(fmt.Sprintf("%gdB", under), func(t *testing.T) { measureCutter(t, rec, ps) })
	}
	if !*realFull {
		return
	}
	var fluct []realaudio.Noise
	for _, n := range c.Noises {
		if !n.Stationary {
			fluct = append(fluct, n)
		}
	}
	for _, under := range []float64{30, 40} {
		ps := c.NoiseUnder(c.Paused(), under, fluct)
		if len(ps) == 0 {
			t.Fatal("no fluctuating noise in the held-out half")
		}
		// The recogniser's minutes go to the steady noises, the issue's
		// scenario; here the pauses and the loud speech cut.
		t.Run(fmt.Sprintf("fluctuating/%gdB", under), func(t *testing.T) { measureCutter(t, nil, ps) })
	}
}

// measureCutter cuts the pauses of ps as the product does and checks that
// every pause over a second comes out at most a second long and that no
// word is cut (with rec, the word error rate after cutting within 2
// points of before; without, no cut takes more than 20 ms of the phrases'
// sound within 30 dB of their loudest 10 ms).
func measureCutter(t *testing.T, rec *pocketsphinx.Recognizer, ps []realaudio.Paused) {
	t.Helper()
	const fs = realaudio.Rate
	src := func(x []float64) audio.Source { return audio.NewBufferSource(audio.Buffer{x}, fs) }
	recognise := func(x []float64) string {
		tr, err := rec.Recognize(context.Background(), src(x), speech.Options{Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for _, word := range tr.Words {
			w = append(w, word.Text)
		}
		return strings.Join(w, " ")
	}
	var edBefore, edAfter, words int
	longest := 0.0
	for _, p := range ps {
		a, err := classify.NewClassifier(audio.Format{SampleRate: fs, Channels: 1}, classify.Auto)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Write(audio.Buffer{p.Input}); err != nil {
			t.Fatal(err)
		}
		cuts := a.Finish().Cuts(classify.CutOptions{Silence: true})
		tm, err := classify.NewTimeMap(cuts, fs)
		if err != nil {
			t.Fatal(err)
		}
		lp := 0.0
		for _, s := range p.Pauses {
			lp = max(lp, float64(tm.Frame(int64(s.End))-tm.Frame(int64(s.Start)))/fs)
		}
		longest = max(longest, lp)
		if lp > 1.0001 {
			t.Errorf("%s: a pause of %.2f s after cutting, want at most 1 s", p.ID, lp)
		}
		// Speech cut: 10 ms windows of the phrases within 30 dB of
		// their loudest that a cut takes.
		var loudCut int64
		for _, ph := range p.Phrases {
			const w = fs / 100
			x := p.Input[ph.Start:ph.End]
			lv := make([]float64, len(x)/w)
			top := math.Inf(-1)
			for k := range lv {
				var e float64
				for _, v := range x[k*w : (k+1)*w] {
					e += v * v
				}
				lv[k] = 10 * math.Log10(e/w+1e-20)
				top = max(top, lv[k])
			}
			for k, l := range lv {
				if l < top-30 {
					continue
				}
				a, b := ph.Start+int64(k*w), ph.Start+int64((k+1)*w)
				for _, c := range cuts {
					loudCut += max(0, min(b, c.End)-max(a, c.Start))
				}
			}
		}
		if loudCut > fs/50 {
			t.Errorf("%s: %.0f ms of speech within 30 dB of its loudest cut, want at most 20 ms", p.ID, 1000*float64(loudCut)/fs)
		}
		if rec == nil {
			t.Logf("%s: %d pauses over 1 s, the longest %.2f s after cutting; %.0f ms of speech cut", p.ID, len(p.Pauses), lp, 1000*float64(loudCut)/fs)
			continue
		}
		cutter, err := classify.NewCutter(src(p.Input), cuts, classify.CutterOptions{Fade: classify.DefaultFade})
		if err != nil {
			t.Fatal(err)
		}
		out, err := audio.ReadAll(context.Background(), cutter)
		if err != nil {
			t.Fatal(err)
		}
		ref := spellDigits(p.Transcript)
		_, eb, n := speech.WordErrorRate(ref, recognise(p.Input))
		_, ea, _ := speech.WordErrorRate(ref, recognise(out[0]))
		edBefore, edAfter, words = edBefore+eb, edAfter+ea, words+n
		t.Logf("%s: %d pauses over 1 s, the longest %.2f s after cutting (%.1f s -> %.1f s); %.0f ms of speech cut; WER %.1f%% before, %.1f%% after",
			p.ID, len(p.Pauses), lp, float64(len(p.Input))/fs, float64(out.Frames())/fs, 1000*float64(loudCut)/fs, 100*float64(eb)/float64(n), 100*float64(ea)/float64(n))
	}
	if rec == nil {
		t.Logf("longest pause after cutting %.2f s (no word error rates in this run)", longest)
		return
	}
	before, after := 100*float64(edBefore)/float64(words), 100*float64(edAfter)/float64(words)
	t.Logf("longest pause after cutting %.2f s; WER %.1f%% before, %.1f%% after (%+.1f points) over %d words", longest, before, after, after-before, words)
	if after-before > 2 {
		t.Errorf("WER %.1f%% after cutting, %.1f%% before: more than 2 points worse", after, before)
	}
}

var digitWords = strings.NewReplacer("0", " zero ", "1", " one ", "2", " two ", "3", " three ", "4", " four ",
	"5", " five ", "6", " six ", "7", " seven ", "8", " eight ", "9", " nine ", "#", " pound ", "*", " star ")

// spellDigits spells out the digits and keys of a prompt's transcript as
// the recogniser's dictionary has them.
func spellDigits(s string) string { return digitWords.Replace(s) }
