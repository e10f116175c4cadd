package classify

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// analyse runs an Analyzer over mono x at testFS in one Write.
func analyse(t testing.TB, x []float64, m Mode) *Result {
	t.Helper()
	a, err := NewAnalyzer(audio.Format{SampleRate: testFS, Channels: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(audio.Buffer{x}); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}
