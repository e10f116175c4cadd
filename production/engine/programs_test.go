package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// opusInput writes seconds of speech-like stereo as Opus, an input only
// ffmpeg decodes (one program while a decoder is open).
func opusInput(t *testing.T, dir, name string, seconds float64) string {
	return encodedInput(t, dir, name+".opus", seconds, "-c:a", "libopus", "-b:a", "96k")
}

// deepInput writes seconds of speech-like stereo as 32-bit AIFF: lossless
// audio deeper than the 32-bit floats an input decoded once is kept in,
// so ffmpeg decodes it on every pass (one program while a decoder is
// open).
func deepInput(t *testing.T, dir, name string, seconds float64) string {
	return encodedInput(t, dir, name+".aiff", seconds, "-c:a", "pcm_s32be")
}

// encodedInput writes seconds of speech-like stereo to dir/file through
// ffmpeg with the codec arguments given.
func encodedInput(t *testing.T, dir, file string, seconds float64, codec ...string) string {
	t.Helper()
	need.Program(t, "ffmpeg")
	need.Program(t, "ffprobe")
	wav := filepath.Join(dir, file+".wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(48000, seconds, 0.05), 48000)
	out := filepath.Join(dir, file)
	args := append([]string{"-nostdin", "-v", "error", "-i", wav}, codec...)
	run(t, "ffmpeg", append(args, "-y", out)...)
	return out
}

// programsRequest has two lossy outputs (an encoder and a verifying
// decoder each), one of them split on two chapters, and a FLAC output.
const programsRequest = `{"input_file": "https://example.org/talk.opus", "output_basename": "talk",
	"algorithms": {"loudnesstarget": -16, "maxpeak": -1},
	"chapters": [{"start": "00:00:00", "title": "One"}, {"start": "00:00:03", "title": "Two"}],
	"output_files": [{"format": "mp3"}, {"format": "opus", "split_on_chapters": true}, {"format": "flac"}]}`

// TestProgramsFitThePool runs a production whose render needs four
// programs at once (two encoders and their verifying decoders; the Opus
// input was decoded once before) in a pool of three. The run reserves what one pass
// needs, encodes the outputs in batches that fit, and verifies them all:
// no more than three programs ever run, none beyond the reservation, every
// output reaches the target, and the files decode as those of a run in a
// pool large enough for one pass. Without the reservation and the batches
// the render's encoders wait for each other's slots forever.
func TestProgramsFitThePool(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a production three times")
	}
	dir := t.TempDir()
	input := opusInput(t, dir, "talk", 6)
	runIn := func(size int) (*production.Production, map[string]audio.Buffer, *procpool.Pool) {
		t.Helper()
		pool := procpool.New(procpool.Config{Size: size, Logger: slog.New(slog.DiscardHandler)})
		eng := &engine.Engine{Processes: pool, Logger: slog.New(slog.DiscardHandler), TempDir: t.TempDir()}
		p := newProduction(t, programsRequest)
		out := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := eng.Run(ctx, p, engine.Inputs{Main: input}, engine.DirWriter{Dir: out}, nil)
		if err != nil {
			t.Fatalf("pool of %d: %v", size, err)
		}
		// Each file decoded once: the comparison below and the level
		// check read the same samples.
		decoded, rates := map[string]audio.Buffer{}, map[string]int{}
		for _, f := range res.Files {
			decoded[f.Name], rates[f.Name] = testaudio.ReadFile(t, filepath.Join(out, f.Name))
		}
		for _, name := range []string{"talk.mp3", "talk-01.opus", "talk-02.opus"} {
			if decoded[name] == nil {
				t.Fatalf("pool of %d: no %s among %d files", size, name, len(res.Files))
			}
		}
		// The two Opus parts are three seconds each: their own level.
		r, err := loudness.MeasureBuffer(decoded["talk.mp3"], rates["talk.mp3"], loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Integrated+16) > 1 || r.TruePeak > -1+0.15+0.05 {
			t.Errorf("pool of %d: talk.mp3 at %.2f LUFS, %.2f dBTP", size, r.Integrated, r.TruePeak)
		}
		return p, decoded, pool
	}
	_, wide, widePool := runIn(8)
	p, narrow, pool := runIn(3)
	t.Logf("pool of 3: peak %d programs; pool of 8: peak %d", pool.Peak(), widePool.Peak())
	if pool.Peak() > 3 || pool.Overdrawn() != 0 || pool.Running() != 0 {
		t.Errorf("pool of 3: peak %d, overdrawn %d, still running %d", pool.Peak(), pool.Overdrawn(), pool.Running())
	}
	if widePool.Peak() < 4 || widePool.Overdrawn() != 0 {
		t.Errorf("pool of 8: peak %d (the pass needs 4 at once), overdrawn %d", widePool.Peak(), widePool.Overdrawn())
	}
	if p.Status != production.StatusDone {
		t.Errorf("status %v", p.Status)
	}
	// Ogg files differ in their random stream serial numbers: the audio
	// is compared, sample for sample.
	for name, b := range wide {
		if !slices.EqualFunc(b, narrow[name], slices.Equal) {
			t.Errorf("%s decodes differently after one pass and in batches", name)
		}
	}
}

// TestTooManyPrograms: a 32-bit AIFF input with a 32-bit AIFF intro,
// normalised, needs three programs at once (both decoders while the
// intro's level is measured); in a pool of two the production fails with
// a message that says so, before processing anything.
func TestTooManyPrograms(t *testing.T) {
	dir := t.TempDir()
	input := deepInput(t, dir, "talk", 2)
	intro := deepInput(t, dir, "intro", 1)
	p := newProduction(t, `{"input_file": "https://example.org/talk.aiff", "algorithms": {"loudnesstarget": -16},
		"output_files": [{"format": "flac"}],
		"multi_input_files": [{"type": "intro", "id": "jingle", "input_file": "https://example.org/intro.aiff"}]}`)
	pool := procpool.New(procpool.Config{Size: 2, Logger: slog.New(slog.DiscardHandler)})
	eng := &engine.Engine{Processes: pool, Logger: slog.New(slog.DiscardHandler)}
	_, err := eng.Run(context.Background(), p, engine.Inputs{Main: input, Multi: map[string]string{"jingle": intro}}, engine.DirWriter{Dir: t.TempDir()}, nil)
	if !errors.Is(err, engine.ErrTooManyPrograms) {
		t.Fatalf("err = %v, want ErrTooManyPrograms", err)
	}
	if p.Status != production.StatusError || p.ErrorMessage == "" {
		t.Errorf("status %v, message %q", p.Status, p.ErrorMessage)
	}
	t.Log(p.ErrorMessage)
	if pool.Peak() > 2 {
		t.Errorf("peak %d in a pool of 2", pool.Peak())
	}
}
