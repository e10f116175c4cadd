package runner

import (
	"testing"

	"github.com/audiopost/audiopost/production"
)

// TestProgressWithRecognition follows the statuses the engine reports for
// a production with speech recognition (Audio Processing while it probes
// and decodes, Speech Recognition, Audio Processing again, Audio
// Encoding): the bar must rise through the recognition, not jump to Audio
// Processing's later span at the start and stand there.
func TestProgressWithRecognition(t *testing.T) {
	steps := []struct {
		s        production.Status
		frac     float64
		min, max int
	}{
		{production.StatusAudioProcessing, 0, 0, 0},
		{production.StatusAudioProcessing, 0.25, 0, 2}, // the inputs decoded
		{production.StatusSpeechRecognition, 0, 1, 2},
		{production.StatusSpeechRecognition, 0.5, 20, 30},
		{production.StatusSpeechRecognition, 1, 49, 50},
		{production.StatusAudioProcessing, 0, 50, 50},
		{production.StatusAudioProcessing, 1, 66, 67},
		{production.StatusAudioEncoding, 0.5, 80, 82},
	}
	j := &jobRun{spans: speechStageSpan}
	for _, st := range steps {
		j.percent = j.percentDone(st.s, st.frac)
		if j.percent < st.min || j.percent > st.max {
			t.Fatalf("%s at %.2f: %d%%, want %d-%d%%", st.s, st.frac, j.percent, st.min, st.max)
		}
	}
	// Without recognition the plain spans hold from the start.
	j = &jobRun{}
	if got := j.percentDone(production.StatusAudioProcessing, 0.5); got != 17 {
		t.Errorf("plain Audio Processing at 0.50: %d%%, want 17%%", got)
	}
}
