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
// Every ffmpeg and ffprobe run takes a slot of the process pool of its
// context (package procpool) and is killed with its process group when
// the context ends. A failed run is an error of one sentence that wraps
// the matching audio sentinel ("the file is not valid MP3 audio");
// ffmpeg's own diagnostics go to the pool's log.
//
// Audio crosses the process boundary as little-endian float64 PCM on
// pipes (a decode's behind a WAV header, which says the stream's format);
// no intermediate WAV files are written. Files are handed to ffmpeg by
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
	"regexp"
	"strings"
	"sync"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
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

// stderrLimit caps the diagnostics of one run kept for the log. With
// -v error the first lines are the ones that explain the failure; a
// damaged file can make a decoder repeat one line for every frame.
const stderrLimit = 64 << 10

// stderrBuffer keeps the first stderrLimit bytes written to it and drops the
// rest, so a chatty or looping ffmpeg cannot grow memory.
type stderrBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	truncated bool
}

func (s *stderrBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	room := stderrLimit - s.buf.Len()
	if room < len(p) {
		s.truncated = true
	}
	if room > 0 {
		s.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns the diagnostics as they were written, trimmed.
func (s *stderrBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := strings.TrimSpace(s.buf.String())
	if s.truncated {
		msg += "\n(truncated)"
	}
	return msg
}

// lines returns the diagnostics' lines without ffmpeg's "[codec @
// 0x55...]" prefixes, which name heap addresses.
func (s *stderrBuffer) lines() []string {
	s.mu.Lock()
	text := s.buf.String()
	s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(addressPrefix.ReplaceAllString(l, ""))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// filePath matches the paths ffmpeg names (the server's, not the user's).
var filePath = regexp.MustCompile(`(file:)?/[^\s:'"]+`)

// addressPrefix is how ffmpeg prefixes a component's messages.
var addressPrefix = regexp.MustCompile(`\[[^\]@]*@ 0x[0-9a-fA-F]+\] *`)

// run is one run of ffmpeg or ffprobe, for its error message.
type run struct {
	tool string // "ffmpeg" or "ffprobe"
	// what the run did, in words after "while": "decoding mp3",
	// "encoding opus".
	what string
	// format is the input's format when the run read the caller's input
	// (its failures then say the file is not valid audio of the format);
	// "" otherwise.
	format string
	input  bool
}

// malformedSigns are what ffmpeg says about input it cannot make sense
// of.
var malformedSigns = []string{"invalid data found", "header missing", "invalid frame", "error while decoding",
	"could not find codec parameters", "failed to read frame size", "moov atom not found", "corrupt", "invalid new backstep",
	"invalid sync", "no frame", "truncat", "end of file", "invalid argument", "error reading", "does not contain any stream",
	"could not find tag"}

// unsupportedSigns are what it says when it lacks a codec or feature.
var unsupportedSigns = []string{"unknown encoder", "encoder not found", "decoder not found", "no decoder", "unsupported",
	"not supported", "not implemented", "does not support", "unknown decoder", "not found"}

// exitError turns a failed run into an error for users: the matching audio
// sentinel and one sentence that says what went wrong. ffmpeg's own
// diagnostics name heap addresses and can run to kilobytes: they go to the
// log of the process pool (procpool.Logger) with the run, never into the
// message.
func exitError(ctx context.Context, r run, err error, stderr *stderrBuffer) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %s stopped: %w", r.tool, r.what, cerr)
	}
	lines := stderr.lines()
	lower := strings.ToLower(strings.Join(lines, "\n"))
	has := func(signs []string) bool {
		for _, s := range signs {
			if strings.Contains(lower, s) {
				return true
			}
		}
		return false
	}
	var msg *sentence
	switch {
	case r.input && has(malformedSigns) && !strings.Contains(lower, "not supported"):
		msg = &sentence{audio.ErrMalformed, notValid(r.format)}
	case has(unsupportedSigns):
		msg = &sentence{audio.ErrUnsupported, fmt.Sprintf("%s on this server does not support %s (%s)", r.tool, r.what, firstLine(lines, err))}
	default:
		msg = &sentence{audio.ErrMalformed, fmt.Sprintf("%s failed while %s (%s)", r.tool, r.what, firstLine(lines, err))}
	}
	procpool.Logger(ctx).Info("external program failed", "program", r.tool, "while", r.what, "err", err,
		"reported", msg.Error(), "stderr", stderr.String())
	return msg
}

// sentence is an error told to users in one sentence: Error is the
// sentence alone, errors.Is matches the audio sentinel it stands for.
type sentence struct {
	sentinel error
	text     string
}

func (e *sentence) Error() string { return e.text }
func (e *sentence) Unwrap() error { return e.sentinel }

// notValid is the sentence for an input ffmpeg cannot read.
func notValid(format string) string {
	if format == "" {
		return "the file is not audio or video that ffmpeg can read"
	}
	return "the file is not valid " + FormatTitle(format) + " audio"
}

// FormatTitle is how a format's name is written in a sentence: MP3, AAC,
// FLAC; Opus, Vorbis; others as they are.
func FormatTitle(format string) string {
	switch format {
	case "opus", "vorbis":
		return strings.ToUpper(format[:1]) + format[1:]
	case "mp3", "aac", "flac", "alac", "wav", "aiff", "wma", "amr", "ac3", "eac3", "dts":
		return strings.ToUpper(format)
	}
	return format
}

// firstLine is the first of ffmpeg's lines, shortened and with file
// paths cut to their base names, or the exit status when it said nothing.
func firstLine(lines []string, err error) string {
	if len(lines) == 0 {
		if err == nil {
			return "no diagnostics"
		}
		return err.Error()
	}
	l := filePath.ReplaceAllStringFunc(lines[0], func(p string) string { return filepath.Base(strings.TrimPrefix(p, "file:")) })
	if len(l) > 160 {
		l = l[:157] + "..."
	}
	return l
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
