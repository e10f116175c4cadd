// Package pocketsphinx is the offline default recognizer: CMU PocketSphinx
// as Debian packages it (pocketsphinx, pocketsphinx-en-us), driven as an
// external program like ffmpeg. The audio is converted to 16 kHz mono in
// pure Go (speech.Mono16k), written to a temporary WAV file and decoded by
// pocketsphinx_continuous with word times; the words, their times (10 ms
// resolution) and posterior probabilities become the transcript.
//
// The program is looked up on PATH each time it runs, so a machine without
// it fails that recognition with an error wrapping speech.ErrUnavailable
// that names the packages to install, never at start-up.
//
// Importing the package registers the recognizer type "pocketsphinx" with
// speech.Register.
package pocketsphinx

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/speech"
)

// Type is the recognizer type name in a speech.Config.
const Type = "pocketsphinx"

// Program is the PocketSphinx executable that is run.
const Program = "pocketsphinx_continuous"

// DefaultModelDir is where pocketsphinx-en-us installs the US English
// model, which the program uses when no other model is given.
const DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"

// Packages are the Debian packages that provide the program and its
// default model.
const Packages = "pocketsphinx pocketsphinx-en-us"

func init() {
	speech.Register(Type, func(cfg speech.Config) (speech.Recognizer, error) { return New(cfg) })
}

// Recognizer runs PocketSphinx. The zero value uses the program on PATH
// and the default US English model. It is safe for concurrent use: every
// recognition runs its own process.
type Recognizer struct {
	// Program is the executable to run; empty means Program looked up on
	// PATH when a recognition starts.
	Program string
	// ModelDir is a directory with another model: a sub-directory holding
	// the acoustic model (the one with an mdef file), a language model
	// (*.lm.bin, *.lm or *.arpa) and a dictionary (*.dict). Empty means
	// the default English model. With a model of one's own any language
	// is accepted; the default model accepts English (en, en-*) or none.
	ModelDir string
	// Args are extra arguments for the program (tuning such as "-lw",
	// "10").
	Args []string
}

// New returns the recognizer a service configuration describes: Model, if
// set, is ModelDir and must be a directory; BaseURL and APIKey must be
// empty.
func New(cfg speech.Config) (*Recognizer, error) {
	switch {
	case cfg.BaseURL != "":
		return nil, &speech.ConfigError{Field: "base_url", Msg: "pocketsphinx runs on this machine and takes no base_url"}
	case cfg.APIKey != "":
		return nil, &speech.ConfigError{Field: "api_key", Msg: "pocketsphinx runs on this machine and takes no api_key"}
	}
	r := &Recognizer{}
	if cfg.Model != "" {
		if !filepath.IsAbs(cfg.Model) {
			return nil, &speech.ConfigError{Field: "model", Msg: "must be the absolute path of a PocketSphinx model directory (or empty for the default English model)"}
		}
		if _, err := findModel(cfg.Model); err != nil {
			return nil, &speech.ConfigError{Field: "model", Msg: err.Error()}
		}
		r.ModelDir = cfg.Model
	}
	return r, nil
}

// model is the files of a model directory.
type model struct{ hmm, lm, dict string }

// findModel locates the acoustic model, language model and dictionary in
// dir.
func findModel(dir string) (model, error) {
	var m model
	entries, err := os.ReadDir(dir)
	if err != nil {
		return m, fmt.Errorf("cannot read model directory: %v", err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		name := e.Name()
		switch {
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(p, "mdef")); err == nil && m.hmm == "" {
				m.hmm = p
			}
		case strings.HasSuffix(name, ".dict") && m.dict == "":
			m.dict = p
		case (strings.HasSuffix(name, ".lm.bin") || strings.HasSuffix(name, ".lm") || strings.HasSuffix(name, ".arpa") || strings.HasSuffix(name, ".lm.dmp")) &&
			!strings.Contains(name, "phone") && m.lm == "":
			m.lm = p
		}
	}
	switch {
	case m.hmm == "":
		return m, fmt.Errorf("%s has no acoustic model (a sub-directory with an mdef file)", dir)
	case m.lm == "":
		return m, fmt.Errorf("%s has no language model (*.lm.bin, *.lm or *.arpa)", dir)
	case m.dict == "":
		return m, fmt.Errorf("%s has no dictionary (*.dict)", dir)
	}
	return m, nil
}

// Recognize implements speech.Recognizer. opts.Keywords are not used:
// PocketSphinx's language model cannot be biased per request.
func (r *Recognizer) Recognize(ctx context.Context, src audio.Source, opts speech.Options) (*speech.Transcript, error) {
	lang := speech.BaseLanguage(opts.Language)
	if r.ModelDir == "" && lang != "" && lang != "en" {
		return nil, fmt.Errorf("%w: the PocketSphinx model of %s is English only, not %q; use a whisper service for other languages", speech.ErrLanguage, Packages, opts.Language)
	}
	if lang == "" && r.ModelDir == "" {
		lang = "en"
	}
	args, err := r.args()
	if err != nil {
		return nil, err
	}
	tool := r.Program
	if tool == "" {
		if tool, err = exec.LookPath(Program); err != nil {
			return nil, fmt.Errorf("%w: speech recognition needs the %s executable, which is not on PATH (install the Debian packages %s)", speech.ErrUnavailable, Program, Packages)
		}
	}
	pcm, err := speech.Mono16k(ctx, src)
	if err != nil {
		return nil, err
	}
	t := &speech.Transcript{Language: lang, Recognizer: Type, Model: r.ModelDir, Duration: speech.Duration(len(pcm))}
	if t.Model == "" {
		t.Model = "en-us"
	}
	if len(pcm) == 0 {
		return t, nil
	}
	dir, err := os.MkdirTemp("", "audiopost-pocketsphinx-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "audio.wav")
	logf := filepath.Join(dir, "log.txt")
	if err := writeWAV(wav, pcm); err != nil {
		return nil, err
	}
	pcm = nil
	args = append([]string{"-infile", wav, "-time", "yes", "-logfn", logf}, args...)
	cmd := procpool.Command(ctx, tool, args...)
	var stdout bytes.Buffer
	stderr := &tailBuffer{}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("pocketsphinx: recognition stopped: %w", cerr)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("%w: starting %s: %v", speech.ErrUnavailable, tool, err)
		}
		// One line for the production's owner, all of it for the log.
		data, _ := os.ReadFile(logf)
		procpool.Logger(ctx).Info("external program failed", "program", Program, "err", err,
			"stderr", stderr.String(), "log", tail(data, tailLimit))
		return nil, fmt.Errorf("%w: %s failed (%v): %s", speech.ErrFailed, Program, err, diagnostics(data, stderr.String()))
	}
	t.Words = ParseOutput(stdout.Bytes())
	return t, nil
}

// args returns the model arguments, checking that the model is there.
func (r *Recognizer) args() ([]string, error) {
	var args []string
	if r.ModelDir == "" {
		if _, err := os.Stat(filepath.Join(DefaultModelDir, "en-us", "mdef")); err != nil {
			return nil, fmt.Errorf("%w: speech recognition needs the English model in %s (install the Debian packages %s)", speech.ErrUnavailable, DefaultModelDir, Packages)
		}
	} else {
		m, err := findModel(r.ModelDir)
		if err != nil {
			return nil, fmt.Errorf("%w: pocketsphinx model: %v", speech.ErrUnavailable, err)
		}
		args = append(args, "-hmm", m.hmm, "-lm", m.lm, "-dict", m.dict)
	}
	return append(args, r.Args...), nil
}

func writeWAV(path string, pcm []int16) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := speech.WriteWAV(bw, pcm); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// diagnostics returns the first ERROR or FATAL line of PocketSphinx's log
// file and of what it printed to stderr (options it could not parse are
// reported before the log file is opened), or the last line when there is
// none, without the source location it starts with and with file paths
// cut to their names: one line for a user; the log gets all of them.
func diagnostics(log []byte, stderr string) string {
	text := strings.TrimSpace(string(log) + "\n" + stderr)
	lines := strings.Split(text, "\n")
	msg := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "FATAL") {
			msg = l
			break
		}
	}
	if msg == "" {
		msg = lines[len(lines)-1]
	}
	// "ERROR: \"cmd_ln.c\", line 938: Unknown argument: -x"
	if _, rest, ok := strings.Cut(msg, ": "); ok && (strings.HasPrefix(msg, "ERROR") || strings.HasPrefix(msg, "FATAL")) {
		msg = rest
		if i := strings.Index(msg, "line "); strings.HasPrefix(msg, "\"") && i > 0 {
			if _, after, ok := strings.Cut(msg[i:], ": "); ok {
				msg = after
			}
		}
	}
	msg = filePath.ReplaceAllStringFunc(strings.TrimSpace(msg), filepath.Base)
	if len(msg) > 160 {
		msg = msg[:157] + "..."
	}
	if msg == "" {
		return "no diagnostics"
	}
	return msg
}

// filePath matches absolute paths: the server's temporary files.
var filePath = regexp.MustCompile(`/[^\s:'"]+`)

// tail is the last n bytes of b.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// tailBuffer keeps the last tailLimit bytes written to it: PocketSphinx's
// complaints come at the end of a long listing of its options.
type tailBuffer struct{ b []byte }

const tailLimit = 16 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*tailLimit {
		t.b = append(t.b[:0], t.b[len(t.b)-tailLimit:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.b) > tailLimit {
		return string(t.b[len(t.b)-tailLimit:])
	}
	return string(t.b)
}

// frame is PocketSphinx's frame period: times are frame starts, so a word
// reported to end at t lasts until t plus one frame.
const frame = 10 * time.Millisecond

// ParseOutput reads the standard output of pocketsphinx_continuous run
// with -time yes: per utterance a line with the hypothesis, then one line
// per word "word start end posterior" (seconds). Silence and noise tokens
// (<s>, </s>, <sil>, [NOISE], ...) are dropped, alternative pronunciation
// marks ("read(2)") removed, and the words returned sorted by start.
func ParseOutput(out []byte) []speech.Word {
	var words []speech.Word
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		start, err1 := strconv.ParseFloat(f[1], 64)
		end, err2 := strconv.ParseFloat(f[2], 64)
		conf, err3 := strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil || err3 != nil || start < 0 || end < start {
			continue
		}
		w := f[0]
		if strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "+") {
			continue
		}
		if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
			w = w[:i]
		}
		conf = min(max(conf, 0), 1)
		words = append(words, speech.Word{
			Text:       w,
			Start:      seconds(start),
			End:        seconds(end) + frame,
			Confidence: conf,
		})
	}
	// Utterances come in order; keep the guarantee anyway.
	slices.SortStableFunc(words, func(a, b speech.Word) int { return cmp.Compare(a.Start, b.Start) })
	return words
}

func seconds(s float64) time.Duration { return time.Duration(s*1000+0.5) * time.Millisecond }
