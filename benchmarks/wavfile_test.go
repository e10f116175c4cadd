package benchmarks

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// writePCM16 writes a 16-bit PCM WAV of frames frames and channels
// channels at rate to path, taking each sample from sample in order (frame
// by frame, channel by channel), through a temporary file renamed at the
// end so that a cached benchmark input is always complete. The long
// benchmark inputs are written this way, block by block, because they are
// larger than the memory the benchmarks measure.
func writePCM16(tb testing.TB, path string, channels, rate int, frames int64, sample func(frame int64, ch int) int16) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "pcm16-*.tmp")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	align := 2 * channels
	hdr := make([]byte, 44)
	copy(hdr, "RIFF")
	binary.LittleEndian.PutUint32(hdr[4:], uint32(36+frames*int64(align)))
	copy(hdr[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(hdr[16:], 16)
	binary.LittleEndian.PutUint16(hdr[20:], 1)
	binary.LittleEndian.PutUint16(hdr[22:], uint16(channels))
	binary.LittleEndian.PutUint32(hdr[24:], uint32(rate))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(rate*align))
	binary.LittleEndian.PutUint16(hdr[32:], uint16(align))
	binary.LittleEndian.PutUint16(hdr[34:], 16)
	copy(hdr[36:], "data")
	binary.LittleEndian.PutUint32(hdr[40:], uint32(frames*int64(align)))
	w.Write(hdr)
	var s [2]byte
	for i := range frames {
		for c := range channels {
			binary.LittleEndian.PutUint16(s[:], uint16(sample(i, c)))
			w.Write(s[:])
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		tb.Fatal(err)
	}
}

// looped returns a writePCM16 sample function that repeats the channels
// (of equal length) over and over, scaled by 32767 and rounded.
func looped(chans ...[]float64) func(int64, int) int16 {
	n := int64(len(chans[0]))
	return func(i int64, c int) int16 {
		return int16(max(-32768, min(32767, math.Round(chans[c][i%n]*32767))))
	}
}
