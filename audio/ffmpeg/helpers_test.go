package ffmpeg

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// makeFile runs ffmpeg with args (which must end in the output name, made
// relative to a fresh temp dir) and returns the output path.
func makeFile(t testing.TB, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	full := append([]string{"-nostdin", "-v", "error", "-y"}, args...)
	full = append(full, out)
	cmd := exec.Command("ffmpeg", full...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(full, " "), err, msg)
	}
	return out
}

// ffmpegRaw decodes path with the ffmpeg CLI to interleaved float64: the
// reference the adapter must agree with.
func ffmpegRaw(t testing.TB, path string, channels, rate int) []float64 {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0",
		"-f", "f64le", "-ac", strconv.Itoa(channels), "-ar", strconv.Itoa(rate), "pipe:1")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference decode of %s: %v", path, err)
	}
	raw := out.Bytes()
	s := make([]float64, len(raw)/8)
	for i := range s {
		s[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[i*8:]))
	}
	return s
}

// testJPEG encodes a small gradient as JPEG: real cover art bytes.
func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rmsDB is the RMS level of x in dBFS.
func rmsDB(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return 10 * math.Log10(s/float64(len(x)))
}

// toneDB is the level in dBFS of the frequency-f component of x (a
// single-bin DFT, Goertzel style), scaled so a full-scale sine gives -3 dB.
func toneDB(x []float64, f float64, rate int) float64 {
	var re, im float64
	for i, v := range x {
		ph := 2 * math.Pi * f * float64(i) / float64(rate)
		re += v * math.Cos(ph)
		im += v * math.Sin(ph)
	}
	amp := 2 * math.Hypot(re, im) / float64(len(x))
	return 20*math.Log10(amp) - 3.0103
}
