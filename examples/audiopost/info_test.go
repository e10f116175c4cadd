package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
)

// runInfoJSON runs "audiopost info path" and decodes its output.
func runInfoJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"info", path}, &stdout, &stderr); err != nil {
		t.Fatalf("info %s: %v\n%s", path, err, stderr.String())
	}
	var m map[string]any
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("output is not a JSON object: %v", err)
	}
	if dec.More() {
		t.Fatal("output holds more than one JSON value")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"bitrate", "channels", "format", "has_video", "length", "samplerate", "tags"}; !slices.Equal(keys, want) {
		t.Fatalf("fields %v, want exactly %v", keys, want)
	}
	return m
}

func TestInfoWAV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tone.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := audio.NewEncoder(context.Background(), "wav", f, audio.Format{SampleRate: 22050, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(audiotest.Sine(2, 22050, 440, 0.5, 22050*3/2)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m := runInfoJSON(t, path)
	if m["format"] != "wav" || m["channels"] != 2.0 || m["samplerate"] != 22050.0 || m["has_video"] != false {
		t.Errorf("info %v", m)
	}
	if l := m["length"].(float64); math.Abs(l-1.5) > 1e-9 {
		t.Errorf("length %v, want 1.5", l)
	}
	if b := m["bitrate"].(float64); math.Abs(b-22050*2*16/1000.0) > 1 {
		t.Errorf("bitrate %v kbps, want 705.6", b)
	}
	if tags, ok := m["tags"].(map[string]any); !ok || len(tags) != 0 {
		t.Errorf("tags %v, want an empty object", m["tags"])
	}
}

func TestInfoFFmpegFormats(t *testing.T) {
	testsize.SkipRace(t, "info probes files in one goroutine; the plain run checks what it prints")
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	cover := filepath.Join(dir, "cover.png")
	mk := func(name string, args ...string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-v", "error", "-y"}, args...), out)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v\n%s", args, err, msg)
		}
		return out
	}
	mk("cover.png", "-f", "lavfi", "-i", "testsrc=size=32x32", "-frames:v", "1")
	coverFI, err := os.Stat(cover)
	if err != nil {
		t.Fatal(err)
	}
	m4a := mk("a.m4a", "-f", "lavfi", "-i", "sine=duration=2", "-i", cover, "-map", "0:a", "-map", "1:v",
		"-c:a", "aac", "-b:a", "64k", "-c:v", "copy", "-disposition:v", "attached_pic",
		"-metadata", "title=Episode", "-metadata", "artist=Host", "-metadata", "date=2023")
	m := runInfoJSON(t, m4a)
	if m["format"] != "aac" || m["channels"] != 1.0 || m["samplerate"] != 44100.0 || m["has_video"] != false {
		t.Errorf("m4a info %v", m)
	}
	if l := m["length"].(float64); math.Abs(l-2) > 0.05 {
		t.Errorf("length %v, want 2", l)
	}
	tags := m["tags"].(map[string]any)
	if tags["title"] != "Episode" || tags["artist"] != "Host" || tags["year"] != "2023" {
		t.Errorf("tags %v", tags)
	}
	c, ok := tags["cover"].(map[string]any)
	if !ok || c["mime_type"] != "image/png" || c["size"] != float64(coverFI.Size()) || len(c) != 2 {
		t.Errorf("cover %v, want {mime_type: image/png, size: %d}", tags["cover"], coverFI.Size())
	}

	mp4 := mk("v.mp4", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac")
	if m := runInfoJSON(t, mp4); m["has_video"] != true || m["format"] != "aac" {
		t.Errorf("mp4 info %v, want has_video with aac", m)
	}
}

func TestInfoErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"info"}, &stdout, &stderr); err == nil {
		t.Error("info without a file succeeded")
	}
	err := run(context.Background(), []string{"info", filepath.Join(t.TempDir(), "missing.wav")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "missing.wav") {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("output %q on failure", stdout.String())
	}
}
