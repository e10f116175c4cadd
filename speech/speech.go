// Package speech is audiopost's speech recognition layer: the Recognizer
// interface that turns audio into timed words, the Transcript those words
// form, a registry of recognizer types built from a service configuration,
// and the writers of the outputs speech recognition adds to a production:
// speech data (JSON, XML, with word timings), subtitles (SRT, WebVTT) and
// transcripts (HTML, plain text, with speakers for multitrack). It also
// turns recognised filler words into cut ranges for the filler cutter.
//
// Recognizers live in sub-packages and register themselves on import, like
// audio codecs: speech/pocketsphinx (offline, the default) and
// speech/whisperhttp (servers with the /v1/audio/transcriptions API).
// Import speech/recognizers to get both. Burned-in subtitles are in
// speech/burnin.
package speech

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/audio"
)

// Word is one recognised word with its time in the audio.
type Word struct {
	// Text is the word as recognised, punctuation included when the
	// recognizer gives it ("Hello," from whisper, "hello" from
	// PocketSphinx). It never contains spaces at either end.
	Text string
	// Start and End are the word's time from the start of the audio.
	Start, End time.Duration
	// Confidence is the recognizer's confidence in the word, 0 to 1, or
	// NoConfidence when the recognizer gives none.
	Confidence float64
	// Speaker names who says the word: the track of a multitrack
	// production (see Merge), empty for single-track audio.
	Speaker string
}

// NoConfidence is the Confidence of a word the recognizer gave no
// confidence for.
const NoConfidence = -1.0

// Transcript is the result of recognition: words in time order.
type Transcript struct {
	// Language is the language that was recognised (a code like "en"),
	// as requested or as the recognizer detected it; empty if unknown.
	Language string
	// Recognizer is the type of recognizer that produced the words
	// ("pocketsphinx", "whisper"), and Model the model it used, if known.
	Recognizer, Model string
	// Duration is the length of the recognised audio.
	Duration time.Duration
	// Words are sorted by Start.
	Words []Word
}

// Text returns the words joined by spaces.
func (t *Transcript) Text() string { return joinWords(t.Words) }

// Speakers returns the distinct non-empty speakers in order of first
// appearance.
func (t *Transcript) Speakers() []string {
	var out []string
	for _, w := range t.Words {
		if w.Speaker != "" && !slices.Contains(out, w.Speaker) {
			out = append(out, w.Speaker)
		}
	}
	return out
}

func joinWords(ws []Word) string {
	var b strings.Builder
	for _, w := range ws {
		if w.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
	}
	return b.String()
}

// Options are the per-request settings of a recognition: the
// speech_recognition object of a production.
type Options struct {
	// Language is a language code like "en" or "en-US"; empty lets the
	// recognizer decide (or detect).
	Language string
	// Keywords are words and names likely to occur; recognizers that can
	// be biased towards a vocabulary use them (whisperhttp sends them as
	// the prompt), the others ignore them.
	Keywords []string
	// Fillers asks the recognizer to keep filler words (um, uh) rather
	// than clean them up, for the filler cutter. PocketSphinx always
	// keeps them; whisper drops most unless prompted to keep them.
	Fillers bool
}

// Recognizer turns audio into timed words. Recognize reads src to its end
// (any sample rate and channel count: recognizers convert it, see
// Mono16k) and returns the words, sorted by start. It must honour ctx: a
// cancelled context stops the work and returns ctx's error. Recognizers
// are safe for concurrent use.
type Recognizer interface {
	Recognize(ctx context.Context, src audio.Source, opts Options) (*Transcript, error)
}

// Errors of recognition, for errors.Is. Recognizers wrap them with a
// message saying what exactly was wrong.
var (
	// ErrUnavailable means the recognizer cannot run here: its program is
	// not installed, or its server cannot be reached. The message names
	// the program or the server (and the Debian packages to install).
	ErrUnavailable = errors.New("speech: recognizer unavailable")
	// ErrLanguage means the recognizer has no model for the requested
	// language.
	ErrLanguage = errors.New("speech: language not supported")
	// ErrFailed means the recognizer ran and failed: the program exited
	// with an error, the server answered with an error status, or the
	// answer could not be read.
	ErrFailed = errors.New("speech: recognition failed")
	// ErrConfig means a service configuration is invalid; the error is a
	// *ConfigError naming the field.
	ErrConfig = errors.New("speech: invalid recognizer configuration")
)

// Config is the configuration of a speech recognition service, as the
// service registration stores it. Type picks the recognizer; the other
// fields are the type's settings (unused ones must be empty).
type Config struct {
	// Type is a registered type: "pocketsphinx" (the offline default),
	// "whisper" or "openai" (HTTP servers with the
	// /v1/audio/transcriptions API).
	Type string `json:"type"`
	// BaseURL is the HTTP recognizer's address ("http://host:8000/v1",
	// "https://api.openai.com/v1"); /audio/transcriptions is appended.
	BaseURL string `json:"base_url,omitempty"`
	// Model is the model name: whisper's ("whisper-1", "base.en", ...),
	// or for pocketsphinx a directory holding another acoustic model,
	// language model and dictionary (see speech/pocketsphinx).
	Model string `json:"model,omitempty"`
	// APIKey is sent as a bearer token by HTTP recognizers.
	APIKey string `json:"api_key,omitempty"`
}

// ConfigError says which field of a Config is wrong and why. It wraps
// ErrConfig.
type ConfigError struct {
	Field string // JSON name of the field: "type", "base_url", "model", "api_key"
	Msg   string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("speech: recognizer %s: %s", e.Field, e.Msg)
}

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// Factory builds a recognizer from its configuration. It checks the
// configuration without contacting anything and reports a bad field as a
// *ConfigError.
type Factory func(Config) (Recognizer, error)

var (
	regMu    sync.RWMutex
	registry = map[string]Factory{}
)

// Register makes a recognizer type available to New. Sub-packages call it
// from init; registering a type twice panics.
func Register(typ string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[typ]; dup {
		panic("speech: recognizer type " + typ + " registered twice")
	}
	registry[typ] = f
}

// Types returns the registered recognizer types, sorted.
func Types() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// New builds the recognizer cfg describes. An unknown or unregistered type
// is a *ConfigError on "type" (import speech/recognizers to register the
// built-in types).
func New(cfg Config) (Recognizer, error) {
	regMu.RLock()
	f, ok := registry[cfg.Type]
	regMu.RUnlock()
	if !ok {
		msg := "is required"
		if cfg.Type != "" {
			msg = fmt.Sprintf("%q is not a recognizer type", cfg.Type)
		}
		if ts := Types(); len(ts) > 0 {
			msg += "; choose one of " + strings.Join(ts, ", ")
		}
		return nil, &ConfigError{Field: "type", Msg: msg}
	}
	return f(cfg)
}

// ParseConfig reads a Config from a stored service: its type and its
// JSON settings (base_url, model, api_key; other keys are ignored, an
// empty config is allowed). A malformed config is a *ConfigError on "".
func ParseConfig(typ string, raw []byte) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return Config{}, &ConfigError{Field: "", Msg: "config is not a JSON object of strings: " + err.Error()}
		}
	}
	cfg.Type = typ
	return cfg, nil
}

// ValidateConfig checks cfg as New would and returns the problems keyed by
// field name ("type", "base_url", ...), or nil when cfg is valid: the
// shape of the API's form errors.
func ValidateConfig(cfg Config) map[string]string {
	_, err := New(cfg)
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return map[string]string{ce.Field: ce.Msg}
	}
	return map[string]string{"": err.Error()}
}

// BaseLanguage returns the primary language subtag of a code, lower case:
// "en" for "en-US" or "en_gb", "" for "".
func BaseLanguage(code string) string {
	code = strings.ToLower(strings.TrimSpace(code))
	if i := strings.IndexAny(code, "-_"); i >= 0 {
		code = code[:i]
	}
	return code
}
