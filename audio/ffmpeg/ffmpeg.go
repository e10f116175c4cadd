// Package ffmpeg adapts the ffmpeg and ffprobe executables to the audio
// package: it probes and decodes anything ffmpeg reads (AAC, Opus, Vorbis,
// ALAC, video containers, ...) and encodes the API's lossy and ALAC output
// formats (mp3, mp3-vbr, aac, opus, vorbis, alac) with tags, cover art and
// chapters. It also remuxes processed audio into the original video and
// extracts embedded cover images.
//
// Importing the package registers a fallback decoder (tried when no pure-Go
// codec recognises a stream) and the encoders. The executables are looked up
// on PATH each time they are needed, so a missing ffmpeg is an error wrapping
// audio.ErrCodecUnavailable on that stream, never a failure at start-up.
//
// Audio crosses the process boundary as raw little-endian float64 PCM on
// pipes; no intermediate WAV files are written. Files are handed to ffmpeg by
// path when the caller gives an *os.File (containers such as MP4 need to
// seek), otherwise they stream through stdin.
package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/audio"
)

// ErrNoCover is returned by ExtractCover when the input has no embedded
// picture.
var ErrNoCover = errors.New("ffmpeg: input has no cover image")

func init() {
	audio.RegisterCodec(audio.Codec{
		Name:   "ffmpeg",
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) { return Decode(ctx, r) },
		Probe:  Probe,
	})
	for name := range outputFormats {
		audio.RegisterEncoder(name, func(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
			return NewEncoder(ctx, name, w, f, opts)
		})
	}
}

// lookTool finds an executable on PATH at the moment of use. what says what
// the caller wanted to do, so the error names the format.
func lookTool(tool, what string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", fmt.Errorf("%w: %s needs the %s executable, which is not on PATH", audio.ErrCodecUnavailable, what, tool)
	}
	return p, nil
}

// waitDelay bounds how long Wait lingers for the goroutine that copies a
// caller's reader into ffmpeg's stdin after ffmpeg has exited: a reader that
// blocks forever must not hang Close.
const waitDelay = 5 * time.Second

// stderrLimit caps the ffmpeg diagnostics kept for error messages. With
// -v error the first lines are the ones that explain the failure.
const stderrLimit = 8 << 10

// stderrBuffer keeps the first stderrLimit bytes written to it and drops the
// rest, so a chatty or looping ffmpeg cannot grow memory.
type stderrBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *stderrBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if room := stderrLimit - s.buf.Len(); room > 0 {
		s.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns the diagnostics on one line, trimmed.
func (s *stderrBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := strings.TrimSpace(s.buf.String())
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " | ")), " ")
	if msg == "" {
		return "no diagnostics"
	}
	return msg
}

// exitError turns a failed ffmpeg run into an error that wraps the matching
// audio sentinel and carries ffmpeg's own explanation.
func exitError(ctx context.Context, what string, err error, stderr *stderrBuffer) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("ffmpeg: %s stopped: %w", what, cerr)
	}
	msg := stderr.String()
	sentinel := audio.ErrMalformed
	lower := strings.ToLower(msg)
	for _, s := range []string{"not found", "unsupported", "not supported", "not implemented", "unknown encoder", "no decoder", "does not support", "invalid argument", "could not find tag"} {
		if strings.Contains(lower, s) {
			sentinel = audio.ErrUnsupported
			break
		}
	}
	return fmt.Errorf("%w: ffmpeg %s failed (%v): %s", sentinel, what, err, msg)
}

// input says how an external tool reads the caller's stream: by path when it
// is a regular file positioned at its start, else through stdin.
type input struct {
	arg   string    // the -i argument: "file:/abs/path" or "pipe:0"
	stdin io.Reader // nil when reading by path
	// rewind returns a ReadSeeker to its starting offset after a probe read
	// it through stdin; nil when nothing needs rewinding.
	rewind func() error
}

// fileInput reports the path ffmpeg can open for f, if f is a regular file
// positioned at offset 0 whose name still refers to the same file.
func fileInput(f *os.File) (string, bool) {
	if f == nil {
		return "", false
	}
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return "", false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	abs, err := filepath.Abs(f.Name())
	if err != nil {
		return "", false
	}
	ni, err := os.Stat(abs)
	if err != nil || !os.SameFile(fi, ni) {
		return "", false
	}
	// "file:" keeps names with colons or a leading dash from being read as
	// protocols or options.
	return "file:" + abs, true
}

// newInput prepares r for a tool that reads it once. A ReadSeeker is rewound
// afterwards through the returned rewind func so that the same stream can be
// read again.
func newInput(r io.Reader) input {
	if f, ok := r.(*os.File); ok {
		if p, ok := fileInput(f); ok {
			return input{arg: p}
		}
	}
	in := input{arg: "pipe:0", stdin: r}
	if s, ok := r.(io.Seeker); ok {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			in.rewind = func() error {
				_, err := s.Seek(pos, io.SeekStart)
				return err
			}
		}
	}
	return in
}

// baseArgs start every ffmpeg invocation: no interaction, errors only, and
// only local files and pipes may be opened, so a crafted playlist or
// reference file cannot make ffmpeg fetch URLs.
func baseArgs() []string {
	return []string{"-nostdin", "-hide_banner", "-v", "error", "-protocol_whitelist", "file,pipe"}
}

// tempFile creates an empty temporary file with the given extension in dir,
// or in fallback when dir is empty or not writable ("": the system temp
// directory).
func tempFile(dir, fallback, pattern string) (*os.File, error) {
	if dir != "" {
		if f, err := os.CreateTemp(dir, pattern); err == nil {
			return f, nil
		}
	}
	return os.CreateTemp(fallback, pattern)
}
