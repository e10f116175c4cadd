package engine

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestDecodedInputIsFFmpegs opens an Opus input three times in one run:
// the first open starts ffprobe and ffmpeg once, the others none, and all
// three read exactly the samples ffmpeg decodes, under the Info of the
// probe. Cleanup deletes the decoded file.
func TestDecodedInputIsFFmpegs(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	wav := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(48000, 2, 0.05), 48000)
	opus := filepath.Join(dir, "talk.opus")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", "libopus", "-y", opus).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want, _ := testaudio.ReadFile(t, opus)
	info, err := audio.ProbeFile(t.Context(), opus)
	if err != nil {
		t.Fatal(err)
	}

	pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
	ctx := procpool.With(t.Context(), pool)
	tmp := t.TempDir()
	r := &run{e: &Engine{TempDir: tmp}}
	for i := range 3 {
		d, err := r.open(ctx, opus, "input file")
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Info(); got.Format != info.Format || got.Frames != info.Frames || got.Length != info.Length || got.Bitrate != info.Bitrate {
			t.Errorf("open %d: Info %+v, the probe's %+v", i, got, info)
		}
		if got := testaudio.ReadAll(t, d); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("open %d: %d frames unlike ffmpeg's %d", i, got.Frames(), want.Frames())
		}
		d.Close()
	}
	if p, m := pool.Starts("ffprobe"), pool.Starts("ffmpeg"); p != 1 || m != 1 {
		t.Errorf("three opens started ffprobe %d and ffmpeg %d times, want once each", p, m)
	}
	if len(r.ffmpegInputs) != 0 {
		t.Errorf("the run plans %v as decoded by ffmpeg while it streams", r.ffmpegInputs)
	}
	r.cleanup(false)
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("cleanup left %d files in TempDir", len(left))
	}
}
