package classify

import (
	"flag"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// analyse runs an Classifier over mono x at testFS in one Write.
func analyse(t testing.TB, x []float64, m Mode) *Result {
	t.Helper()
	a, err := NewClassifier(audio.Format{SampleRate: testFS, Channels: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(audio.Buffer{x}); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

// shortN returns n, or at most k in -short mode: the acceptance tests run
// on every voice and case normally and on a few under -short (and -race,
// which slows the analysis tenfold).
func shortN(n, k int) int {
	if testing.Short() {
		return min(n, k)
	}
	return n
}

// fullSweep makes TestSpeechMusic and TestSpeechMusicSweep run every one
// of their synthetic programmes; the plain run takes a few, to keep CI
// short:
//
//	go test ./dsp/classify -run 'TestSpeechMusic' -sweep
var fullSweep = flag.Bool("sweep", false, "TestSpeechMusic, TestSpeechMusicSweep: every synthetic programme, not a few")
