package beepaudio

import (
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// quantized returns noise plus a sine on the grid of the bit depth, within
// the integer range, without negative zeros: it survives PCM unchanged.
func quantized(channels, frames, bits int) audio.Buffer {
	b := audiotest.Noise(channels, frames, 0.5, uint64(bits))
	s := audiotest.Sine(1, 48000, 997, 0.5, frames)
	full := float64(int64(1) << (bits - 1))
	for c := range b {
		for i := range b[c] {
			b[c][i] = min(math.Round((b[c][i]+s[0][i])*full), full-1)/full + 0
		}
		b[c][0] = -1
	}
	return b
}
