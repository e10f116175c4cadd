package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// writeTestWAV writes 12 s of a quiet, dynamic tone-and-noise programme.
func writeTestWAV(t *testing.T, path string) {
	t.Helper()
	const fs = 48000
	b := audio.NewBuffer(2, 12*fs)
	s := uint64(7)
	for i := range b[0] {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		nz := float64(s>>11)/float64(1<<53)*2 - 1
		tt := float64(i) / fs
		env := 0.5 + 0.5*math.Sin(2*math.Pi*3*tt)
		if int(tt)%4 == 3 {
			env *= 0.1
		}
		v := env * (0.05*math.Sin(2*math.Pi*220*tt) + 0.02*math.Sin(2*math.Pi*660*tt) + 0.01*nz)
		b[0][i], b[1][i] = v, v
	}
	testaudio.WriteWAV(t, path, b, fs)
}

func TestProcessWAVToFLAC(t *testing.T) {
	if testing.Short() {
		t.Skip("single-threaded processing; the plain run covers it")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out.flac")
	writeTestWAV(t, in)
	preset := filepath.Join(dir, "preset.json")
	os.WriteFile(preset, []byte(`{"preset_name": "x", "algorithms": {"loudnesstarget": -23, "maxpeak": -2}}`), 0o644)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"process", "-preset", preset, "-algorithms", `{"loudnesstarget": -20}`, "-o", out, in}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var st struct {
		Levels struct {
			Output map[string][2]any `json:"output"`
			Input  map[string][2]any `json:"input"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatalf("stdout is not the statistics JSON: %v\n%s", err, stdout.String())
	}
	for _, k := range []string{"lra", "max_shortterm", "max_momentary", "gain_min", "peak", "gain_mean", "loudness", "gain_max"} {
		if _, ok := st.Levels.Output[k]; !ok {
			t.Errorf("levels.output.%s missing", k)
		}
	}
	for _, k := range []string{"lra", "noise_level", "max_momentary", "signal_level", "snr", "max_shortterm", "loudness"} {
		if _, ok := st.Levels.Input[k]; !ok {
			t.Errorf("levels.input.%s missing", k)
		}
	}
	d, err := audio.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, err := loudness.Measure(context.Background(), d, loudness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The flag's target (-20) overrides the preset's (-23); the preset's
	// maxpeak (-2) still applies.
	if math.Abs(r.Integrated+20) > 0.3 || r.TruePeak > -2+0.1 {
		t.Errorf("output %.2f LUFS, %.2f dBTP; want -20 LUFS, <= -2 dBTP", r.Integrated, r.TruePeak)
	}
	if stderr.Len() != 0 {
		t.Errorf("progress written to a non-terminal stderr: %q", stderr.String())
	}
}

func TestProcessRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wav")
	writeTestWAV(t, in)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"process", "-algorithms", `{"loudnesstarget": -17}`, "-o", filepath.Join(dir, "o.wav"), in}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "loudnesstarget") {
		t.Errorf("bad target: err = %v, want it to name loudnesstarget", err)
	}
	err = run(context.Background(), []string{"process", "-o", filepath.Join(dir, "o.xyz"), in}, &stdout, &stderr)
	if err == nil {
		t.Error("unknown output extension accepted")
	}
	err = run(context.Background(), []string{"process", in}, &stdout, &stderr)
	if err == nil {
		t.Error("missing -o accepted")
	}
}

// TestProcessTempDiskLimit: an Opus input whose decode into 32-bit
// floats exceeds -max-temp-disk-mb fails before the decode, naming the
// input and the limit, and writes no output.
func TestProcessTempDiskLimit(t *testing.T) {
	ffmpeg := need.Program(t, "ffmpeg")
	dir := t.TempDir()
	wav, in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "in.opus"), filepath.Join(dir, "out.flac")
	writeTestWAV(t, wav)
	if b, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", wav, "-c:a", "libopus", "-y", in).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"process", "-max-temp-disk-mb", "1", "-o", out, in}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "input_file: the input decodes to 5.4 MB as 32-bit floats") || !strings.Contains(err.Error(), "in at most 1.0 MB of temporary disk") {
		t.Errorf("err = %v, want the disk limit's", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written: %v", err)
	}
}

func TestProcessChaptersAndCover(t *testing.T) {
	if testing.Short() {
		t.Skip("single-threaded processing; the plain run covers it")
	}
	need.Program(t, "ffmpeg") // the MP3 encoder
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "ep.mp3")
	writeTestWAV(t, in)
	chapters := filepath.Join(dir, "chapters.txt")
	os.WriteFile(chapters, []byte("00:00:00 Welcome\n00:00:05.500 News <https://example.org/news>\n"), 0o644)
	cover := filepath.Join(dir, "cover.png")
	var pb bytes.Buffer
	png.Encode(&pb, image.NewRGBA(image.Rect(0, 0, 32, 32)))
	os.WriteFile(cover, pb.Bytes(), 0o644)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"process", "-chapters", chapters, "-cover", cover, "-o", out, in}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chs, err := id3.ReadChapters(f)
	if err != nil || len(chs) != 2 || chs[0].Title != "Welcome" || chs[1].Start != 5500*time.Millisecond || chs[1].URL != "https://example.org/news" {
		t.Errorf("chapters in the MP3: %+v, %v", chs, err)
	}
	f.Seek(0, io.SeekStart)
	info, err := audio.Probe(context.Background(), f)
	if err != nil || info.Tags.Cover == nil || info.Tags.Cover.Size != pb.Len() {
		t.Errorf("cover in the MP3: %+v, %v", info.Tags.Cover, err)
	}

	// A malformed chapters file names its line.
	os.WriteFile(chapters, []byte("00:00:00 Welcome\nbogus\n"), 0o644)
	err = run(context.Background(), []string{"process", "-chapters", chapters, "-o", out, in}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad chapters file: err = %v, want it to name line 2", err)
	}
}
