package goaudio

import (
	"encoding/binary"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// quantized returns a test signal (a sine plus noise, different on every
// channel, reaching full scale at both ends) rounded to the grid of the bit
// depth, so that it survives integer PCM unchanged.
func quantized(channels, frames, bits int) audio.Buffer {
	b := audiotest.Noise(channels, frames, 0.5, uint64(bits))
	s := audiotest.Sine(1, 48000, 997, 0.5, frames)
	full := float64(int64(1) << (bits - 1))
	for c := range b {
		for i := range b[c] {
			b[c][i] = min(math.Round((b[c][i]+s[0][i])*full), full-1)/full + 0 // +0: no negative zero
		}
		if frames > 2 {
			b[c][0] = -1
			b[c][1] = (full - 1) / full
		}
	}
	return b
}

// equal reports whether two buffers hold the same bits, or describes the
// first difference.
func equal(a, b audio.Buffer) (bool, string) {
	if len(a) != len(b) {
		return false, "channel counts differ"
	}
	for c := range a {
		if len(a[c]) != len(b[c]) {
			return false, "lengths differ"
		}
		for i := range a[c] {
			if math.Float64bits(a[c][i]) != math.Float64bits(b[c][i]) {
				return false, "sample differs"
			}
		}
	}
	return true, ""
}

// riff builds a RIFF/WAVE file from chunks.
func riff(chunks ...[]byte) []byte {
	body := []byte("WAVE")
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

// chunk builds a chunk with its stated size, padding odd bodies.
func chunk(id string, body []byte) []byte {
	return chunkSized(id, uint32(len(body)), body)
}

// chunkSized builds a chunk that states size whatever body holds.
func chunkSized(id string, size uint32, body []byte) []byte {
	out := append([]byte(id), binary.LittleEndian.AppendUint32(nil, size)...)
	out = append(out, body...)
	if len(body)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// fmtBody is a 16-byte fmt chunk body.
func fmtBody(tag, channels, rate, bits int) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint16(b[0:], uint16(tag))
	binary.LittleEndian.PutUint16(b[2:], uint16(channels))
	binary.LittleEndian.PutUint32(b[4:], uint32(rate))
	binary.LittleEndian.PutUint32(b[8:], uint32(rate*channels*bits/8))
	binary.LittleEndian.PutUint16(b[12:], uint16(channels*bits/8))
	binary.LittleEndian.PutUint16(b[14:], uint16(bits))
	return b
}
