package ffmpeg

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
)

// logBuffer is a log destination tests read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRandomMP3Sentence decodes 10 MB of random bytes behind an MP3 frame
// header, as an upload named .mp3 may be: ffmpeg takes it for MP3 and
// prints kilobytes of "[mp3float @ 0x...] Header missing". The error says
// so in one sentence; ffmpeg's lines go to the pool's log.
func TestRandomMP3Sentence(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	data := make([]byte, 10<<20)
	rand.Read(data)
	copy(data, []byte{0xff, 0xfb, 0x90, 0x64})
	var log logBuffer
	pool := procpool.New(procpool.Config{Size: 2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := procpool.With(context.Background(), pool)
	path := filepath.Join(t.TempDir(), "upload.mp3")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if d, derr := Decode(ctx, openFile(t, path)); derr != nil {
		err = derr
	} else {
		_, err = audio.ReadAll(ctx, d)
		d.Close()
	}
	if err == nil {
		t.Fatal("random bytes decoded as MP3")
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnknownFormat) {
		t.Errorf("error %v wraps neither ErrMalformed nor ErrUnknownFormat", err)
	}
	if len(msg) > 200 || strings.Contains(msg, "0x") || strings.Contains(msg, "|") {
		t.Errorf("error of %d bytes with ffmpeg's diagnostics: %.300s", len(msg), msg)
	}
	if !strings.Contains(msg, "the file is not valid MP3 audio") {
		t.Errorf("error does not say the file is not valid audio: %s", msg)
	}
	if logged := log.String(); !strings.Contains(logged, "Header missing") && !strings.Contains(logged, "Invalid data") {
		t.Errorf("ffmpeg's diagnostics are not in the log:\n%.2000s", logged)
	}
}

func TestExitErrorSentences(t *testing.T) {
	ctx := procpool.With(context.Background(), procpool.New(procpool.Config{Size: 1,
		Logger: slog.New(slog.NewTextHandler(&logBuffer{}, nil))}))
	stderr := func(s string) *stderrBuffer {
		b := &stderrBuffer{}
		b.Write([]byte(s))
		return b
	}
	exit := errors.New("exit status 1")
	for _, tc := range []struct {
		name   string
		r      run
		stderr string
		want   string
		is     error
	}{
		{"damaged input", run{tool: "ffmpeg", what: "decoding aac", format: "aac", input: true},
			"[aac @ 0x55d0c0a1b2c0] Invalid data found when processing input\n", "the file is not valid AAC audio", audio.ErrMalformed},
		{"missing encoder", run{tool: "ffmpeg", what: "encoding opus"},
			"Unknown encoder 'libopus'\n", "ffmpeg on this server does not support encoding opus (Unknown encoder 'libopus')", audio.ErrUnsupported},
		{"other failure, path cut", run{tool: "ffmpeg", what: "encoding mp3"},
			"[file @ 0x1] file:/srv/data/work/x/.audiopost-123.mp3: No space left on device\n",
			"ffmpeg failed while encoding mp3 (.audiopost-123.mp3: No space left on device)", audio.ErrMalformed},
		{"silent", run{tool: "ffprobe", what: "probing an input"}, "", "ffprobe failed while probing an input (exit status 1)", audio.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := exitError(ctx, tc.r, exit, stderr(tc.stderr))
			if !errors.Is(err, tc.is) || err.Error() != tc.want {
				t.Errorf("got %q, want %q wrapping %v", err, tc.want, tc.is)
			}
		})
	}
}

// TestEncodersWaitForSlots opens more encoders with their monitors than a
// pool of four runs at once, from as many goroutines: never more than
// four programs run, and every encoder finishes (two at a time, each
// taking its encoder's and its monitor's slot together). Four is the
// fewest that checks it: were the two slots taken one at a time, four
// encoders could hold all four and their monitors wait forever (six,
// before, started 12 programs for the same check).
func TestEncodersWaitForSlots(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	pool := procpool.New(procpool.Config{Size: 4})
	ctx := procpool.With(context.Background(), pool)
	const rate = 8000
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var out bytes.Buffer
			var got countingSink
			enc, err := NewEncoder(ctx, "opus", &out, audio.Format{SampleRate: rate, Channels: 1}, audio.EncodeOptions{Monitor: &got})
			if err != nil {
				t.Error(err)
				return
			}
			if err := enc.Write(audio.NewBuffer(1, rate)); err != nil {
				t.Error(err)
			}
			if err := enc.Close(); err != nil {
				t.Error(err)
			}
			if got.frames == 0 || out.Len() == 0 {
				t.Errorf("encoder wrote %d bytes, its monitor saw %d frames", out.Len(), got.frames)
			}
		})
	}
	wg.Wait()
	if pool.Peak() > 4 || pool.Running() != 0 || pool.Overdrawn() != 0 {
		t.Errorf("peak %d, running %d, overdrawn %d", pool.Peak(), pool.Running(), pool.Overdrawn())
	}
}

// countingSink counts the frames written to it.
type countingSink struct{ frames int }

func (c *countingSink) Write(b audio.Buffer) error {
	c.frames += b.Frames()
	return nil
}
