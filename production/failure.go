package production

import (
	"math"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrorKind is what made a production fail, as far as it decides what can
// fix it: error_kind (not in the original interface). The job runner sets
// it with the error; SetError alone leaves it empty (not classified).
type ErrorKind string

// The error kinds.
const (
	// ErrorInput: the input cannot be read, is not supported or is
	// missing. Only another input file helps.
	ErrorInput ErrorKind = "input"
	// ErrorSettings: the settings cannot be processed as they are (an
	// invalid output name, an unusable cover). A change of them helps.
	ErrorSettings ErrorKind = "settings"
	// ErrorCredits: the owner's credits do not cover the input. More
	// credits help.
	ErrorCredits ErrorKind = "credits"
	// ErrorInternal: the service itself failed (storage) on every
	// attempt. Starting again may succeed.
	ErrorInternal ErrorKind = "internal"
	// ErrorProcessing: any other failure while processing (an encoder, an
	// outgoing transfer). Starting again may succeed.
	ErrorProcessing ErrorKind = "processing"
)

// Fail records a failure at status at, as SetError does, with its kind and
// the message in the words its owner reads (see PlainMessage).
func (p *Production) Fail(at Status, kind ErrorKind, msg string) {
	p.SetError(at, PlainMessage(msg))
	p.ErrorKind = kind
	if kind == ErrorInput {
		p.FailedInputs = inputsOf(p)
	}
}

// RestartBlocked reports why starting p again as it stands would fail the
// same way, as a sentence saying what has to change first, or "" when
// starting again can succeed (or p did not fail). credits is what the
// owner has left. The rule per kind: an input error needs another input
// file, a settings error a change (Apply clears the kind), a credits
// error enough credits for the input's length; other errors may not
// repeat.
func (p *Production) RestartBlocked(credits time.Duration) string {
	if p.Status != StatusError {
		return ""
	}
	switch p.ErrorKind {
	case ErrorInput:
		if inputsOf(p) == p.FailedInputs {
			return "The same input file would fail again: replace it with another recording first."
		}
	case ErrorSettings:
		return "The same settings would fail again: change them first."
	case ErrorCredits:
		need := time.Duration(math.Ceil(max(p.Length, 0))) * time.Second
		if credits <= 0 || credits < need {
			return "The account's credits do not cover this recording: the server's operator can grant more (audiopost user credits)."
		}
	}
	return ""
}

// refreshErrorKind clears a settings error's kind after a change, which
// may have removed its cause. The message stays: it is what the last run
// said.
func (p *Production) refreshErrorKind() {
	if p.Status == StatusError && p.ErrorKind == ErrorSettings {
		p.ErrorKind = ""
	}
}

// inputsOf is a key of the production's input files: an input error
// blocks a restart until it changes.
func inputsOf(p *Production) string {
	var b strings.Builder
	b.WriteString("in\x00" + p.InputFile)
	if p.Service != nil {
		b.WriteString("\x00" + *p.Service)
	}
	for _, m := range p.MultiInputFiles {
		b.WriteString("\x00" + m.ID + "\x01" + m.InputFile + "\x01" + m.Service)
	}
	return b.String()
}

// internalPrefix matches the package prefixes Go errors carry ("storage:
// ", "production: ", "audio: "): they tell a developer where an error
// came from and a user nothing.
var internalPrefix = regexp.MustCompile(`(^|: |\()(production|storage|sqlstore|blob|transfer|engine|runner|audio|ffmpeg|id3|wav|flac|mp3|dsp|mixdown|loudness|artwork|webhook|outbound|sidefile): `)

// PlainMessage returns an error message as users read it: without the
// package prefixes of Go errors ("production: storage: insufficient
// credits: ..." becomes "Insufficient credits: ...") and starting with a
// capital letter. It is idempotent, so messages stored before it existed
// can be shown through it too.
func PlainMessage(msg string) string {
	msg = ScrubPaths(strings.TrimSpace(msg), "")
	for {
		m := internalPrefix.ReplaceAllString(msg, "$1")
		if m == msg {
			break
		}
		msg = m
	}
	r, n := utf8.DecodeRuneInString(msg)
	if r == utf8.RuneError || unicode.IsUpper(r) {
		return msg
	}
	return string(unicode.ToUpper(r)) + msg[n:]
}

// absPath matches an absolute file path (or ffmpeg's file:/path) that
// starts a message or follows a space, quote or bracket; URLs, whose
// slashes follow a colon, do not match.
var absPath = regexp.MustCompile(`(^|[\s'"(\[])(?:file:)?/[^\s'"(),:\[\]]*`)

// ScrubPaths replaces the server's file paths in a message shown to
// users (a decoder's, ffmpeg's or the file system's error) with name, or
// with each path's last element when name is empty: users are told which
// file, never where the server keeps it.
func ScrubPaths(msg, name string) string {
	if name != "" {
		return absPath.ReplaceAllString(msg, "${1}"+strings.ReplaceAll(name, "$", "$$"))
	}
	return absPath.ReplaceAllStringFunc(msg, func(m string) string {
		lead := ""
		if m != "" && !strings.HasPrefix(m, "/") && !strings.HasPrefix(m, "file:") {
			lead, m = m[:1], m[1:]
		}
		return lead + path.Base(strings.TrimPrefix(m, "file:"))
	})
}
