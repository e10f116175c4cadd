package engine

import (
	"testing"
	"time"

	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/speech"
)

// With a recognition, the filler cutter cuts the filler words it heard,
// keeps acoustic cuts of other reasons and acoustic fillers where no word
// was heard, and drops acoustic fillers that fall on a recognised word.
func TestRefineCuts(t *testing.T) {
	const rate = 1000
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	r := &run{transcript: &speech.Transcript{Words: []speech.Word{
		{Text: "hello", Start: ms(100), End: ms(400), Confidence: 0.9},
		{Text: "um", Start: ms(600), End: ms(900), Confidence: 0.9},
		{Text: "world", Start: ms(1200), End: ms(1600), Confidence: 0.9},
	}}}
	refine := r.refineCuts(rate)
	got := refine(classify.Cuts{
		{Start: 200, End: 300, Reason: classify.CutFiller},   // on "hello": a word, dropped
		{Start: 1000, End: 1100, Reason: classify.CutFiller}, // between words: kept
		{Start: 2000, End: 3000, Reason: classify.CutSilence},
	})
	want := classify.Cuts{
		{Start: 580, End: 920, Reason: classify.CutFiller}, // "um" with its 20 ms pad
		{Start: 1000, End: 1100, Reason: classify.CutFiller},
		{Start: 2000, End: 3000, Reason: classify.CutSilence},
	}
	if len(got) != len(want) {
		t.Fatalf("cuts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cut %d: %v, want %v", i, got[i], want[i])
		}
	}
	if (&run{}).refineCuts(rate) != nil {
		t.Error("without a recognition the detection is left alone")
	}
}
