package spectral

import (
	"testing"

	"github.com/audiopost/audiopost/internal/peers"
)

// The peers our denoiser is measured against are internal/peers's
// Denoisers, each run as a user would run it on the noisy recording
// alone: what a peer is told about the noise (a profile, a level) it
// learns from the pauses the classifier's voice activity mask finds in
// the same recording (peers.Pauses), never from the clean noise track.
// internal/peers says how each is configured.

// peerRecording is what a user has of mono x at fs: x and its pauses by
// the voice activity mask vad.
func peerRecording(x []float64, vad []bool) peers.Recording {
	return peers.Recording{X: x, Rate: fs, Pauses: peers.Pauses(x, vad, BlockFrames(fs), fs)}
}

// ffRun runs an ffmpeg audio filter chain over mono x at fs and returns
// its output as it comes, for filters without delay (a chain of notches).
func ffRun(t testing.TB, x []float64, af string) []float64 {
	t.Helper()
	return peers.FFmpegRaw(t, x, fs, af)
}
