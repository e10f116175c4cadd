package benchmarks

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

// speechFile returns a cached 48 kHz stereo 16-bit WAV of secs seconds of
// speech: a minute of espeak-ng sentences in six voices with pauses, over
// a room noise 60 dB down, repeated to the length. The right channel is
// the left 2 dB down with its own noise, as two microphones of one room.
func speechFile(tb testing.TB, secs float64) string {
	tb.Helper()
	const rate = 48000
	dir := filepath.Join(os.TempDir(), "audiopost-bench")
	path := filepath.Join(dir, fmt.Sprintf("speech-%gs-48k-s16.wav", secs))
	frames := int64(secs * rate)
	if fi, err := os.Stat(path); err == nil && fi.Size() == 44+4*frames {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	var texts []string
	for len(texts) < 18 {
		texts = append(texts, testaudio.Sentences...)
	}
	x, _ := testaudio.Phrases(tb, rate, texts, 0.6, testaudio.Voices...)
	x = testaudio.Scale(x, 0.5)
	l := testaudio.Add(x, testaudio.PinkNoise(len(x), 1e-3, 7))
	r := testaudio.Add(testaudio.Scale(append([]float64(nil), x...), math.Pow(10, -2.0/20)), testaudio.PinkNoise(len(x), 1e-3, 8))
	writeStereoRepeated(tb, path, l, r, rate, frames)
	return path
}

// writeStereoRepeated writes the stereo loop (l, r) over and over into a
// 16-bit WAV of frames, through a temporary file renamed at the end so a
// cached file is always complete.
func writeStereoRepeated(tb testing.TB, path string, l, r []float64, rate int, frames int64) {
	tb.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(path), "stereo-*.tmp")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	hdr := make([]byte, 44)
	copy(hdr, "RIFF")
	binary.LittleEndian.PutUint32(hdr[4:], uint32(36+frames*4))
	copy(hdr[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(hdr[16:], 16)
	binary.LittleEndian.PutUint16(hdr[20:], 1)
	binary.LittleEndian.PutUint16(hdr[22:], 2)
	binary.LittleEndian.PutUint32(hdr[24:], uint32(rate))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(rate*4))
	binary.LittleEndian.PutUint16(hdr[32:], 4)
	binary.LittleEndian.PutUint16(hdr[34:], 16)
	copy(hdr[36:], "data")
	binary.LittleEndian.PutUint32(hdr[40:], uint32(frames*4))
	w.Write(hdr)
	pcm := func(v float64) uint16 {
		return uint16(int16(max(-32768, min(32767, math.Round(v*32767)))))
	}
	var s [4]byte
	n := int64(len(l))
	for i := int64(0); i < frames; i++ {
		binary.LittleEndian.PutUint16(s[:], pcm(l[i%n]))
		binary.LittleEndian.PutUint16(s[2:], pcm(r[i%n]))
		w.Write(s[:])
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

func TestSpeechFileGen(t *testing.T) {
	if os.Getenv("GEN") == "" {
		t.Skip()
	}
	t.Log(speechFile(t, 300))
}
