package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// TestEngineDropsChaptersPastTheEnd runs a production saved without a
// probed input length (as before the work budget): the chapter at 999999 s
// is dropped with a warning instead of leaving an empty AAC part, which
// failed the run ("monitoring the encoded aac: malformed data").
func TestEngineDropsChaptersPastTheEnd(t *testing.T) {
	need.Program(t, "ffmpeg")
	const rate = 44100
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 4, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav", "output_basename": "show",
		"chapters": [{"start": 0, "title": "One"}, {"start": 2, "title": "Two"}, {"start": 999999, "title": "Far"}],
		"output_files": [{"format": "aac", "split_on_chapters": true}]}`)
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	if want := `1 chapter at or after the end of the input (00:00:04.000) dropped: 277:46:39.000 "Far"`; !strings.Contains(p.WarningMessage, want) {
		t.Errorf("warning %q, want it to say %q", p.WarningMessage, want)
	}
	var parts []string
	for _, o := range p.ListedOutputFiles() {
		parts = append(parts, o.Filename)
	}
	if strings.Join(parts, " ") != "show-01.m4a show-02.m4a" {
		t.Errorf("parts %q, want two", parts)
	}
}

// TestEngineChecksTheBudget: a production beyond the engine's Limits ends
// in Error with the form errors before any file is written.
func TestEngineChecksTheBudget(t *testing.T) {
	const rate = 16000
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav",
		"chapters": [{"start": 0, "title": "One"}, {"start": 1, "title": "Two"}, {"start": 2, "title": "Three"}],
		"output_files": [{"format": "wav", "split_on_chapters": true}]}`)
	_, err := (&engine.Engine{Limits: production.Limits{Parts: 2}}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil)
	if !errors.Is(err, production.ErrInvalid) {
		t.Fatalf("run: %v, want ErrInvalid", err)
	}
	want := "the production needs more than this server allows: invalid fields: output_files.0.split_on_chapters: would split into 3 parts, one per chapter; 3 s of input allow at most 2"
	if p.Status != production.StatusError || !strings.HasPrefix(p.ErrorMessage, want) {
		t.Errorf("status %v, error %q\nwant %q", p.Status, p.ErrorMessage, want)
	}
	if files, _ := os.ReadDir(outDir); len(files) > 0 {
		t.Errorf("%d files written", len(files))
	}
}

// TestEngineKeepsTheSavedWarning: the chapter a save dropped past the
// input's end (the production no longer holds it) is still named in the
// warning after the run, and a second run does not repeat or lose it.
func TestEngineKeepsTheSavedWarning(t *testing.T) {
	const rate = 16000
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav",
		"chapters": [{"start": 0, "title": "One"}, {"start": 999999, "title": "Far"}],
		"output_files": [{"format": "wav"}]}`)
	p.InputLength = 3
	if err := p.FitBudget(production.Limits{}); err != nil {
		t.Fatal(err)
	}
	want := `1 chapter at or after the end of the input (00:00:03.000) dropped: 277:46:39.000 "Far"`
	if !strings.Contains(p.WarningMessage, want) {
		t.Fatalf("saved warning %q, want %q", p.WarningMessage, want)
	}
	for run := 1; run <= 2; run++ {
		if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if p.Status != production.StatusDone || strings.Count(p.WarningMessage, want) != 1 {
			t.Errorf("run %d: status %v, warning %q, want Done and %q once", run, p.Status, p.WarningMessage, want)
		}
	}
}
