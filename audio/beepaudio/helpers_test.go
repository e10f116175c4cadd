package beepaudio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
)

// memFile is an in-memory io.WriteSeeker for encoders that patch their
// header on Close.
type memFile struct {
	b   []byte
	off int64
}

func (m *memFile) Write(p []byte) (int, error) {
	end := int(m.off) + len(p)
	if end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	copy(m.b[m.off:], p)
	m.off = int64(end)
	return len(p), nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += m.off
	case io.SeekEnd:
		off += int64(len(m.b))
	}
	if off < 0 {
		return 0, errors.New("memFile: negative offset")
	}
	m.off = off
	return off, nil
}

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

// encodeWAV writes b with audiopost's encoder at the bit depth.
func encodeWAV(t testing.TB, b audio.Buffer, rate, bits int) []byte {
	t.Helper()
	m := &memFile{}
	e, err := wav.NewEncoder(context.Background(), m, audio.Format{SampleRate: rate, Channels: len(b)}, audio.EncodeOptions{BitDepth: bits})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return m.b
}

// decodeWAV decodes a file with audiopost's decoder.
func decodeWAV(t testing.TB, file []byte) audio.Buffer {
	t.Helper()
	d, err := wav.NewDecoder(context.Background(), bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
