package httpapi_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/runner"
)

// TestOutputFilesListed processes a production with split_on_chapters
// and mono_mixdown through the API and a real runner: every file written
// is listed in output_files, downloads with 200 through its download_url,
// and has the listed size and checksum; the split outputs are listed as
// their parts, the mono mixdowns are mono.
func TestOutputFilesListed(t *testing.T) {
	if testing.Short() {
		t.Skip("processes a production")
	}
	need.Program(t, "ffmpeg")
	e := newEnv(t)
	ctx := context.Background()
	const rate = 44100
	var input bytes.Buffer
	enc, err := wav.NewEncoder(ctx, &input, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(testaudio.SpeechLike(rate, 9, 0.05)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	id := e.create(e.keyA, map[string]any{
		"output_basename": "show",
		"metadata":        map[string]any{"title": "Listed"},
		"chapters":        []map[string]any{{"start": "0", "title": "One"}, {"start": "3", "title": "Two"}, {"start": "6", "title": "Three"}},
		"output_files": []map[string]any{
			{"format": "mp3", "split_on_chapters": true, "mono_mixdown": true},
			{"format": "flac", "mono_mixdown": true},
			{"format": "wav", "split_on_chapters": true},
			{"format": "aac"},
			{"format": "descr", "ending": "json"},
		},
	})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "talk.wav", data: input.Bytes()}))
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	r, err := runner.New(runner.Config{Store: e.store, Blobs: e.blobs, NoCharge: true, BaseURL: e.base, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := r.RunOnce(ctx, "w1"); !ran || err != nil {
		t.Fatalf("RunOnce: %v %v", ran, err)
	}
	p := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if p["status"] != float64(production.StatusDone) {
		t.Fatalf("status %v: %v", p["status"], p["error_message"])
	}
	outputs := p["output_files"].([]any)
	var listed []string
	for _, x := range outputs {
		o := x.(map[string]any)
		name, _ := o["filename"].(string)
		listed = append(listed, name)
		url, _ := o["download_url"].(string)
		if url == "" || o["size"] == nil || o["checksum"] == "" {
			t.Errorf("%s: download_url %q size %v checksum %q", name, url, o["size"], o["checksum"])
			continue
		}
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		status, _, raw := e.send(req)
		if status != http.StatusOK {
			t.Errorf("%s: GET %s = %d", name, url, status)
			continue
		}
		sum := md5.Sum(raw)
		if got := hex.EncodeToString(sum[:]); got != o["checksum"] || float64(len(raw)) != o["size"] {
			t.Errorf("%s: downloaded %d bytes, md5 %s; listed size %v checksum %v", name, len(raw), got, o["size"], o["checksum"])
		}
		// mono_mixdown: the output itself is mono.
		mono := o["mono_mixdown"] == true
		if strings.HasSuffix(name, ".json") {
			continue
		}
		d, err := audio.Decode(ctx, bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ch := d.Format().Channels; (ch == 1) != mono {
			t.Errorf("%s: %d channels, mono_mixdown %v", name, ch, mono)
		}
		d.Close()
	}
	want := []string{"show-01.mp3", "show-02.mp3", "show-03.mp3", "show.flac", "show-01.wav", "show-02.wav", "show-03.wav", "show.m4a", "show.json"}
	if !slices.Equal(listed, want) {
		t.Errorf("output_files list %q, want %q", listed, want)
	}
	// Every file in the production's output folder is listed (besides
	// the waveform and loudness images, which have fields of their own).
	blobs, err := e.blobs.List(ctx, runner.OutputPrefix(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blobs {
		name := strings.TrimPrefix(b.Key, runner.OutputPrefix(id))
		if name != runner.WaveformName && name != runner.LoudnessChartName && !slices.Contains(listed, name) {
			t.Errorf("%s is written but not listed", name)
		}
	}
	// The minimal list shows the same files.
	mins := e.must(e.req("GET", "/api/productions.json?minimal_data=1", e.keyA, nil)).list(t)
	if n := len(mins[0].(map[string]any)["output_files"].([]any)); n != len(want) {
		t.Errorf("minimal_data lists %d output files, want %d", n, len(want))
	}
}
