package dsp

import (
	"context"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// TestAnalyzerNoClasses checks that leaving the classifier out changes
// nothing but the labels: the levels of a NoClasses pass are those of a
// full pass.
func TestAnalyzerNoClasses(t *testing.T) {
	const fs = 48000
	b := stereo(speechLike(fs, 6, 140, 3))
	run := func(o AnalyzerOptions) *Analysis {
		an, err := Analyze(context.Background(), audio.NewBufferSource(b, fs), o)
		if err != nil {
			t.Fatal(err)
		}
		return an
	}
	full, lv := run(AnalyzerOptions{}), run(AnalyzerOptions{NoClasses: true})
	if full.Classes == nil || len(full.Voiced) == 0 {
		t.Fatal("a full analysis has no labels")
	}
	if lv.Classes != nil || lv.Voiced != nil || lv.Music != nil {
		t.Errorf("NoClasses analysis has labels: classes %v, %d voiced, %d music", lv.Classes != nil, len(lv.Voiced), len(lv.Music))
	}
	if !slices.Equal(full.Energy, lv.Energy) || !slices.Equal(full.Raw, lv.Raw) || !slices.Equal(full.Peak, lv.Peak) {
		t.Error("NoClasses changed the block levels")
	}
	if full.Loudness.Integrated != lv.Loudness.Integrated || full.Loudness.LRA != lv.Loudness.LRA || full.Frames() != lv.Frames() {
		t.Errorf("NoClasses changed the loudness: %+v, full %+v", lv.Loudness, full.Loudness)
	}
}

// TestAnalyzerClassifyApart checks that an analysis whose classifier the
// caller writes to, here from a goroutine of its own, is the analysis of
// one that writes to it itself.
func TestAnalyzerClassifyApart(t *testing.T) {
	const fs = 48000
	b := stereo(speechLike(fs, 6, 140, 5))
	full, err := Analyze(context.Background(), audio.NewBufferSource(b, fs), AnalyzerOptions{Spectrum: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAnalyzer(audio.Format{SampleRate: fs, Channels: 2}, AnalyzerOptions{Spectrum: true, ClassifyApart: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Classifier() == nil {
		t.Fatal("no classifier to write to")
	}
	ps := audio.NewParallelSink(a, a.Classifier())
	defer ps.Close()
	if _, err := audio.Copy(context.Background(), ps, audio.NewBufferSource(b, fs)); err != nil {
		t.Fatal(err)
	}
	apart := a.Finish()
	if !slices.Equal(full.Voiced, apart.Voiced) || !slices.Equal(full.Music, apart.Music) || len(full.Classes.Segments) != len(apart.Classes.Segments) {
		t.Error("the labels differ")
	}
	if !slices.Equal(full.Energy, apart.Energy) || !slices.Equal(full.flatness, apart.flatness) || full.Loudness.Integrated != apart.Loudness.Integrated {
		t.Error("the levels differ")
	}
	if n, err := NewAnalyzer(audio.Format{SampleRate: fs, Channels: 2}, AnalyzerOptions{}); err != nil || n.Classifier() != nil {
		t.Errorf("an analyzer that classifies itself offers its classifier: %v", err)
	}
}
