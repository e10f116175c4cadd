package runner_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// The API stores a chapter image under ChapterImageName and points the
// chapter at its download URL; the runner finds it and the MP3 carries it.
func TestRunnerChapterImages(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	ctx := context.Background()
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 30, 20)))
	pic := b.Bytes()
	name := production.ChapterImageName(pic, "image/png")
	if !production.IsChapterImageName(name) {
		t.Fatalf("%q is not a chapter image name", name)
	}
	const rate = 44100
	// The uuid is known only once stored, so the image URL is set after.
	uuid, _ := e.addProduction(`{"input_file": "https://example.org/in.wav", "output_basename": "out",
		"chapters": [{"start": "00:00:00", "title": "One"}, {"start": "00:00:01", "title": "Two", "url": "https://example.org/two"}],
		"output_files": [{"format": "mp3"}]}`, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	res, err := e.store.GetResource(ctx, e.user.ID, storage.KindProduction, uuid)
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://audiopost.example/api/download/audio-upload/" + uuid + "/" + name
	missing := "https://audiopost.example/api/download/audio-upload/" + uuid + "/" + production.ChapterImageName([]byte("gone"), "image/png")
	p.Chapters[0].Image = &missing
	p.Chapters[1].Image = &url
	if res.Doc, err = production.EncodeDocument(p); err != nil {
		t.Fatal(err)
	}
	if err := e.store.UpdateResource(ctx, &res); err != nil {
		t.Fatal(err)
	}
	w, _ := e.blobs.Create(ctx, production.ChapterImageKey(uuid, name))
	w.Write(pic)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	if ran, err := e.runner(runner.Config{}).RunOnce(ctx, "w1"); err != nil || !ran {
		t.Fatalf("RunOnce = %v, %v", ran, err)
	}
	if p = e.production(uuid); p.Status != production.StatusDone {
		t.Fatalf("status %v, error %q", p.Status, p.ErrorMessage)
	}
	rc, _, err := e.blobs.Open(ctx, production.OutputKey(uuid, p.OutputFilename(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	chaps, err := id3.ReadChapters(rc)
	if err != nil || len(chaps) != 2 {
		t.Fatalf("CHAP frames %+v, %v", chaps, err)
	}
	if chaps[0].Image != nil {
		t.Error("chapter One got a picture though its image is not stored")
	}
	if c := chaps[1]; c.URL != "https://example.org/two" || c.Image == nil || !bytes.Equal(c.Image.Data, pic) {
		t.Errorf("chapter Two: URL %q, picture %v", c.URL, c.Image != nil)
	}
}
