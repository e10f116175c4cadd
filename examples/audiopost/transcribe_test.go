package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/speech"
)

// fakeWhisper answers every transcription request with two words and
// records the form fields it got.
func fakeWhisper(t *testing.T) (*httptest.Server, *[]map[string][]string) {
	var mu sync.Mutex
	var got []map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/transcriptions" || r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, `{"error":{"message":"no"}}`, http.StatusUnauthorized)
			return
		}
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, r.MultipartForm.Value)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{
			"language": "english", "text": "Hello there.",
			"words":    []map[string]any{{"word": "Hello", "start": 0.25, "end": 0.5}, {"word": "there", "start": 0.55, "end": 0.9}},
			"segments": []map[string]any{{"start": 0.25, "end": 0.9, "text": " Hello there.", "avg_logprob": -0.1}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestTranscribeHTTP(t *testing.T) {
	srv, got := fakeWhisper(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "tone.wav")
	writeTone(t, in, -20, 1.5)
	t.Setenv(keyEnv, "secret")

	var out, errb bytes.Buffer
	// The input first, flags after it.
	if err := run(context.Background(), []string{"transcribe", in, "-format", "vtt", "-recognizer", srv.URL + "/v1", "-language", "en-GB", "-keywords", "Auphonic, audiopost"}, &out, &errb); err != nil {
		t.Fatalf("%v (%s)", err, errb.String())
	}
	want := "WEBVTT\n\n00:00:00.250 --> 00:00:00.950\nHello there.\n\n"
	if out.String() != want {
		t.Errorf("vtt:\n%q\nwant\n%q", out.String(), want)
	}
	if f := (*got)[0]; f["language"][0] != "en" || f["prompt"][0] != "Auphonic, audiopost." || f["model"][0] != "whisper-1" {
		t.Errorf("request fields %v", f)
	}
	if !strings.Contains(errb.String(), "2 words in 1.5 s (whisper)") {
		t.Errorf("stderr %q", errb.String())
	}

	// -o picks the format from its extension; -key beats the environment.
	jsonOut := filepath.Join(dir, "words.json")
	errb.Reset()
	if err := run(context.Background(), []string{"transcribe", "-recognizer", srv.URL, "-key", "secret", "-o", jsonOut, in}, &out, &errb); err != nil {
		t.Fatalf("%v (%s)", err, errb.String())
	}
	f, err := os.Open(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := speech.ReadJSON(f)
	if err != nil || len(tr.Words) != 2 || tr.Words[1].Text != "there." || tr.Language != "en" {
		t.Errorf("json: %+v, %v", tr, err)
	}

	errb.Reset()
	err = run(context.Background(), []string{"transcribe", "-recognizer", srv.URL, "-key", "wrong", in}, io.Discard, &errb)
	if !errors.Is(err, speech.ErrFailed) || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong key: %v", err)
	}
}

func TestTranscribeErrors(t *testing.T) {
	in := filepath.Join(t.TempDir(), "tone.wav")
	writeTone(t, in, -20, 0.5)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"transcribe"}, "exactly one input"},
		{[]string{"transcribe", in, in}, "exactly one input"},
		{[]string{"transcribe", "-format", "doc", in}, "unknown -format"},
		{[]string{"transcribe", "-recognizer", "ftp://x", in}, "base_url"},
		{[]string{"transcribe", filepath.Join(t.TempDir(), "missing.wav")}, "no such file"},
	} {
		err := run(context.Background(), c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.args, err, c.want)
		}
	}
	t.Setenv("PATH", t.TempDir())
	err := run(context.Background(), []string{"transcribe", in}, io.Discard, io.Discard)
	if !errors.Is(err, speech.ErrUnavailable) || !strings.Contains(err.Error(), "pocketsphinx-en-us") {
		t.Errorf("without pocketsphinx: %v", err)
	}
}

// TestTranscribePocketSphinx runs the offline default on espeak-ng speech.
func TestTranscribePocketSphinx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the recogniser; the plain run checks it")
	}
	t.Parallel() // beside the tests that wait on real time (TestLiveThroughIcecast)
	need.Program(t, "pocketsphinx_continuous")
	need.Path(t, "/usr/share/pocketsphinx/model/en-us")
	x, _ := testaudio.Phrases(t, speech.SampleRate, testaudio.Sentences[:2], 1.5)
	pcm := make([]int16, len(x))
	for i, v := range x {
		pcm[i] = int16(max(min(v, 0.999), -1) * 32767)
	}
	in := filepath.Join(t.TempDir(), "speech.wav")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := speech.WriteWAV(f, pcm); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"transcribe", "-format", "srt", in}, &out, &errb); err != nil {
		t.Fatalf("%v (%s)", err, errb.String())
	}
	if n := strings.Count(out.String(), " --> "); n < 2 || !strings.HasPrefix(out.String(), "1\n00:00:0") {
		t.Errorf("srt with %d cues:\n%s", n, out.String())
	}
	t.Logf("%s\n%s", strings.TrimSpace(errb.String()), out.String())
}
