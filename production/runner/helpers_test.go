package runner_test

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

func speechLike(rate int, seconds float64, amp float64) audio.Buffer {
	return audio.Buffer(testaudio.SpeechLike(rate, seconds, amp))
}

func loudnessOf(b audio.Buffer, rate int) (float64, error) {
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		return 0, err
	}
	return r.Integrated, r.Err
}

func writeWAV(t testing.TB, path string, b audio.Buffer, rate int) {
	t.Helper()
	testaudio.WriteWAV(t, path, b, rate)
}
