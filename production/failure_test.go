package production

import (
	"testing"
	"time"
)

func TestPlainMessage(t *testing.T) {
	for in, want := range map[string]string{
		"production: storage: insufficient credits: 1h needed":       "Insufficient credits: 1h needed",
		"input file: audio: malformed data":                          "Input file: malformed data",
		"encoding: ffmpeg: exit status 1 (audio: codec unavailable)": "Encoding: exit status 1 (codec unavailable)",
		"Words in a sentence stay: like audio: here":                 "Words in a sentence stay: like audio: here",
		"":           "",
		"élan vital": "Élan vital",
		"input file: open /srv/audiopost/blobs/productions/1f/input/talk.wav: no such file or directory": "Input file: open talk.wav: no such file or directory",
		`ffmpeg: file:/tmp/x/.audiopost-tmp-12/in.m4a: Invalid data; see https://ffmpeg.org/faq.html`:    "In.m4a: Invalid data; see https://ffmpeg.org/faq.html",
	} {
		got := PlainMessage(in)
		if got != want {
			t.Errorf("PlainMessage(%q) = %q, want %q", in, got, want)
		}
		if again := PlainMessage(got); again != got {
			t.Errorf("PlainMessage is not idempotent on %q: %q", got, again)
		}
	}
}

func TestRestartBlocked(t *testing.T) {
	p := &Production{InputFile: "a.wav", Length: 90}
	if b := p.RestartBlocked(0); b != "" {
		t.Errorf("a production without error is blocked: %q", b)
	}
	p.Fail(StatusAudioProcessing, ErrorProcessing, "encoder crashed")
	if b := p.RestartBlocked(0); b != "" {
		t.Errorf("a processing error blocks: %q", b)
	}

	p.Fail(StatusAudioProcessing, ErrorInput, "input file: audio: malformed data")
	if p.ErrorMessage != "Input file: malformed data" || p.RestartBlocked(time.Hour) == "" {
		t.Fatalf("input error %q blocks %q", p.ErrorMessage, p.RestartBlocked(time.Hour))
	}
	// Edits that keep the input keep it blocked; another input does not.
	if err := p.Apply(&Input{Metadata: &MetadataInput{Title: ptr("New title")}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.RestartBlocked(time.Hour) == "" {
		t.Error("a title change unblocked an input error")
	}
	p.InputFile = "b.wav"
	if b := p.RestartBlocked(time.Hour); b != "" {
		t.Errorf("another input is still blocked: %q", b)
	}

	p.Fail(StatusWaiting, ErrorCredits, "not enough credits")
	if p.RestartBlocked(89*time.Second) == "" || p.RestartBlocked(90*time.Second) != "" {
		t.Errorf("credits: 89 s blocked %q, 90 s blocked %q", p.RestartBlocked(89*time.Second), p.RestartBlocked(90*time.Second))
	}

	p.Fail(StatusAudioEncoding, ErrorSettings, "production: invalid request: output name")
	if p.RestartBlocked(time.Hour) == "" {
		t.Error("a settings error does not block")
	}
	if err := p.Apply(&Input{Metadata: &MetadataInput{Title: ptr("Other")}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if b := p.RestartBlocked(time.Hour); b != "" || p.ErrorKind != "" || p.ErrorMessage == "" {
		t.Errorf("after a change: blocked %q, kind %q, message %q", b, p.ErrorKind, p.ErrorMessage)
	}
	// SetError (the engine's) is not classified.
	p.Fail(StatusWaiting, ErrorInput, "x")
	p.SetError(StatusAudioEncoding, "y")
	if p.ErrorKind != "" || p.FailedInputs != "" {
		t.Errorf("SetError left kind %q, inputs %q", p.ErrorKind, p.FailedInputs)
	}
}

func TestShownProgress(t *testing.T) {
	for _, c := range []struct {
		s            Status
		stored, want int
	}{
		{StatusDone, 0, 100}, {StatusAudioEncoding, 57, 57}, {StatusAudioEncoding, 100, 99},
		{StatusWaiting, 40, 0}, {StatusError, 40, 0}, {StatusStopping, 12, 12},
	} {
		if got := ShownProgress(c.s, c.stored); got != c.want {
			t.Errorf("ShownProgress(%v, %d) = %d, want %d", c.s, c.stored, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
