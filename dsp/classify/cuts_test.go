package classify

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

func TestNormalize(t *testing.T) {
	got := Normalize([]Cut{
		{50, 60, CutCough}, {10, 20, CutSilence}, {15, 30, CutFiller}, {30, 40, CutMusic},
		{42, 45, CutSilence}, {70, 70, CutTrim}, {-5, 3, CutTrim},
	}, 3)
	want := Cuts{{0, 3, CutTrim}, {10, 45, CutSilence | CutFiller | CutMusic}, {50, 60, CutCough}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReasonString(t *testing.T) {
	for _, r := range []Reason{CutSilence, CutFiller | CutCough, CutSilence | CutFiller | CutCough | CutMusic | CutTrim} {
		back, err := ParseReason(r.String())
		if err != nil || back != r {
			t.Errorf("%v: parsed back as %v, %v", r, back, err)
		}
	}
	if s := (CutSilence | CutFiller).String(); s != "silence+filler" {
		t.Errorf("String = %q", s)
	}
	if _, err := ParseReason("applause"); err == nil {
		t.Error("unknown reason parsed")
	}
}

func TestTrimAndKept(t *testing.T) {
	c := Normalize(append(Trim(48000, 48000, 0.25, 0.5), Cut{20000, 21000, CutSilence}), 0)
	want := Cuts{{0, 12000, CutTrim}, {20000, 21000, CutSilence}, {24000, 48000, CutTrim}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("trim cuts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]audio.Span{{Start: 12000, End: 20000}, {Start: 21000, End: 24000}}, c.Kept(48000)); diff != "" {
		t.Errorf("Kept (-want +got):\n%s", diff)
	}
	if got := Trim(1000, 48000, 1, 1); len(got) != 1 || got[0] != (Cut{0, 1000, CutTrim}) {
		t.Errorf("trimming more than everything: %v", got)
	}
}

func TestTimeMap(t *testing.T) {
	m, err := NewTimeMap(Cuts{{100, 200, CutSilence}, {300, 350, CutFiller}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[int64]int64{0: 0, 99: 99, 100: 100, 150: 100, 199: 100, 200: 100, 250: 150, 299: 199, 300: 200, 320: 200, 350: 200, 400: 250} {
		if got := m.Frame(in); got != want {
			t.Errorf("Frame(%d) = %d, want %d", in, got, want)
		}
	}
	if got := m.Seconds(0.4); got != 0.25 {
		t.Errorf("Seconds(0.4) = %g, want 0.25", got)
	}
	if _, err := NewTimeMap(Cuts{{5, 3, 0}}, 1000); err == nil {
		t.Error("invalid list accepted")
	}
}

// phrasesWithPauses returns phrases separated by pause seconds of
// silence, and their spans.
func phrasesWithPauses(t testing.TB, pause float64, voice testaudio.Voice) ([]float64, []audio.Span) {
	return testaudio.Phrases(t, testFS, testaudio.Sentences[:6], pause, voice)
}

// render runs x through a Cutter and returns the output.
func render(t testing.TB, x []float64, cuts Cuts, o CutterOptions) []float64 {
	t.Helper()
	c, err := NewCutter(audio.NewBufferSource(audio.Buffer{x}, testFS), cuts, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := audio.ReadAll(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func TestSilenceCutter(t *testing.T) {
	for v := 0; v < shortN(3, 1); v++ {
		x, spans := phrasesWithPauses(t, 3, testaudio.Voices[v])
		r := analyse(t, x, Auto)
		cuts := r.Cuts(CutOptions{Silence: true})
		m, err := NewTimeMap(cuts, testFS)
		if err != nil {
			t.Fatal(err)
		}
		// Pauses in the output: between the mapped end of a phrase and
		// the mapped start of the next.
		var longest float64
		var speech, kept int64
		for i, s := range spans {
			speech += int64(s.End - s.Start)
			kept += int64(s.End-s.Start) - overlap(cuts, int64(s.Start), int64(s.End))
			if i > 0 {
				gap := float64(m.Frame(int64(s.Start))-m.Frame(int64(spans[i-1].End))) / testFS
				longest = max(longest, gap)
			}
		}
		loss := 1 - float64(kept)/float64(speech)
		out := render(t, x, cuts, CutterOptions{Fade: DefaultFade})
		t.Logf("voice %d: 3 s pauses come out at most %.2f s; %.2f%% of speech cut; %.1f s -> %.1f s",
			v, longest, 100*loss, float64(len(x))/testFS, float64(len(out))/testFS)
		if longest > 1.0 {
			t.Errorf("voice %d: a 3 s pause comes out %.2f s long, want <= 1 s", v, longest)
		}
		if loss > 0.02 {
			t.Errorf("voice %d: %.2f%% of the speech is cut, want <= 2%%", v, 100*loss)
		}
		if want := int64(len(x)) - cuts.Removed(); int64(len(out)) != want {
			t.Errorf("output %d frames, want %d", len(out), want)
		}
	}
}

// TestJoinsDoNotClick cuts the pauses of speech over a steady sine (the
// worst case for a join: the sine's phase jumps) and measures the largest
// sample-to-sample step within a fade of every join. The sine itself steps
// by at most 2*pi*220/48000*0.1 (-50.8 dBFS); a hard join jumps by up to
// twice its amplitude.
func TestJoinsDoNotClick(t *testing.T) {
	x, _ := phrasesWithPauses(t, 3, testaudio.Voices[0])
	x = testaudio.Add(x, testaudio.Hum(len(x), testFS, 220, 220, 0.1/math.Sqrt2)) // peak 0.1
	r := analyse(t, x, Auto)
	cuts := r.Cuts(CutOptions{Silence: true})
	if len(cuts) < 5 {
		t.Fatalf("only %d cuts", len(cuts))
	}
	m, _ := NewTimeMap(cuts, testFS)
	for _, tc := range []struct {
		fade  float64
		shape FadeShape
		limit float64 // dBFS
	}{{DefaultFade, EqualPower, -40}, {DefaultFade, Linear, -40}, {0.01, EqualPower, -40}, {0, EqualPower, 0}} {
		out := render(t, x, cuts, CutterOptions{Fade: tc.fade, Shape: tc.shape})
		worst := 0.0
		for _, c := range cuts {
			j := int(m.Frame(c.Start))
			w := int(max(tc.fade, 0.002) * testFS)
			for i := max(1, j-w); i < min(len(out), j+w); i++ {
				worst = max(worst, math.Abs(out[i]-out[i-1]))
			}
		}
		db := 20 * math.Log10(worst)
		t.Logf("fade %.0f ms %v: largest step at a join %.1f dBFS", 1000*tc.fade, tc.shape, db)
		if tc.limit < 0 && db > tc.limit {
			t.Errorf("fade %.0f ms: a join steps by %.1f dBFS, want <= %.0f", 1000*tc.fade, db, tc.limit)
		}
		if tc.fade == 0 && db < -30 {
			t.Errorf("hard joins step by only %.1f dBFS: the test cannot see clicks", db)
		}
	}
}

// TestTimeMapFollowsContent checks that a marker at the start of the
// words after each cut lands where those words start in the output,
// found by cross-correlation.
func TestTimeMapFollowsContent(t *testing.T) {
	x, spans := phrasesWithPauses(t, 2.5, testaudio.Voices[1])
	r := analyse(t, x, Auto)
	cuts := r.Cuts(CutOptions{Silence: true, TrimStart: 0.5})
	m, _ := NewTimeMap(cuts, testFS)
	out := render(t, x, cuts, CutterOptions{Fade: DefaultFade})
	worst := 0.0
	for _, s := range spans {
		ref := x[s.Start : s.Start+testFS/8]
		at := int(m.Frame(int64(s.Start)))
		// Search +-0.3 s around the mapped position.
		best, bestD := math.Inf(-1), 0
		for d := -testFS * 3 / 10; d <= testFS*3/10; d += 12 {
			if at+d < 0 || at+d+len(ref) > len(out) {
				continue
			}
			var c float64
			for i, v := range ref {
				c += v * out[at+d+i]
			}
			if c > best {
				best, bestD = c, d
			}
		}
		worst = max(worst, math.Abs(float64(bestD))/testFS)
	}
	t.Logf("markers at the starts of %d phrases land within %.3f s of the words in the output", len(spans), worst)
	if worst > 0.1 {
		t.Errorf("a marker lands %.3f s from its words, want <= 0.1 s", worst)
	}
}

// TestExportMatchesApply: export_uncut_audio passes the audio through,
// and the cut list it exports (EDL and Audacity labels, read back) is
// exactly the list apply_cuts removes.
func TestExportMatchesApply(t *testing.T) {
	h := makeHesitant(t, testaudio.Sentences[:5], testaudio.Voices[2], 7, fillerPhonemes)
	x := h.x
	r := analyse(t, x, Auto)
	cuts := r.Cuts(CutOptions{Silence: true, Filler: true, Cough: true, TrimEnd: 0.3})
	if len(cuts) == 0 {
		t.Fatal("no cuts")
	}
	uncut := render(t, x, cuts, CutterOptions{Mode: ExportCuts, Fade: DefaultFade})
	if len(uncut) != len(x) {
		t.Fatalf("export mode: %d frames, want the input's %d", len(uncut), len(x))
	}
	for i := range x {
		if uncut[i] != x[i] {
			t.Fatalf("export mode changed frame %d", i)
		}
	}
	silenced := render(t, x, cuts, CutterOptions{Mode: SilenceCuts, Fade: DefaultFade})
	if len(silenced) != len(x) {
		t.Errorf("silence mode: %d frames, want %d", len(silenced), len(x))
	}
	applied := render(t, x, cuts, CutterOptions{Fade: DefaultFade})

	var edl bytes.Buffer
	if err := WriteEDL(&edl, cuts, testFS, int64(len(x))); err != nil {
		t.Fatal(err)
	}
	var e EDL
	if err := json.Unmarshal(edl.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	fromEDL, err := e.CutList()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cuts, fromEDL); diff != "" {
		t.Errorf("EDL cut list differs from the applied one (-applied +exported):\n%s", diff)
	}
	if e.OutputFrames != int64(len(applied)) {
		t.Errorf("EDL output_frames %d, apply_cuts rendered %d", e.OutputFrames, len(applied))
	}
	var kept int64
	for _, k := range e.Kept {
		kept += k.EndFrame - k.StartFrame
	}
	if kept != int64(len(applied)) {
		t.Errorf("kept ranges hold %d frames, apply_cuts rendered %d", kept, len(applied))
	}
	var labels bytes.Buffer
	if err := WriteAudacityLabels(&labels, cuts, testFS); err != nil {
		t.Fatal(err)
	}
	fromLabels, err := ReadAudacityLabels(&labels, testFS)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cuts, fromLabels); diff != "" {
		t.Errorf("label cut list differs from the applied one (-applied +exported):\n%s", diff)
	}
	t.Logf("%d cuts (%d of them fillers), %.2f s -> %.2f s; EDL and labels read back identical",
		len(cuts), countReason(cuts, CutFiller), float64(len(x))/testFS, float64(len(applied))/testFS)
}

func countReason(c Cuts, r Reason) int {
	n := 0
	for _, x := range c {
		if x.Reason&r != 0 {
			n++
		}
	}
	return n
}

func TestMusicCutter(t *testing.T) {
	p := makeProgramme(t, "speech:20", "music-testaudio:25", "speech:15", "music-beat:12", "speech:10")
	r := analyse(t, p.x, Auto)
	for _, silence := range []bool{false, true} {
		cuts := r.Cuts(CutOptions{Music: true, Silence: silence})
		var music, musicCut, speechCut int64
		for _, s := range p.parts {
			o := overlap(cuts, int64(s.start), int64(s.end))
			if s.label == "music" {
				music += int64(s.end - s.start)
				musicCut += o
			} else {
				speechCut += o
			}
		}
		// Speech cut beyond its pauses: count only audible speech.
		var audibleCut int64
		for _, s := range p.parts {
			if s.label != "speech" {
				continue
			}
			for _, sp := range activeSpans(p.x[s.start:s.end]) {
				audibleCut += overlap(cuts, int64(s.start+sp.start), int64(s.start+sp.end))
			}
		}
		t.Logf("silence cutter %v: %.1f%% of the music cut, %.2f s of speech parts cut (%.0f ms audible)", silence,
			100*float64(musicCut)/float64(music), float64(speechCut)/testFS, 1000*float64(audibleCut)/testFS)
		if float64(musicCut) < 0.98*float64(music) {
			t.Errorf("only %.1f%% of the music cut", 100*float64(musicCut)/float64(music))
		}
		if audibleCut > testFS/20 {
			t.Errorf("%.0f ms of audible speech cut", 1000*float64(audibleCut)/testFS)
		}
	}
}

// activeSpans returns the stretches of x where the 10 ms RMS is above
// -50 dBFS.
func activeSpans(x []float64) []span {
	var out []span
	const w = testFS / 100
	for i := 0; i+w <= len(x); i += w {
		if testaudio.DB(x[i:i+w]) > -50 {
			if n := len(out); n > 0 && out[n-1].end == i {
				out[n-1].end = i + w
			} else {
				out = append(out, span{i, i + w, ""})
			}
		}
	}
	return out
}
