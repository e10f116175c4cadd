package main

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/httpapi"
)

func TestOAuthClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dd, err := sqlstore.OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	accounts, err := app.New(app.Config{Store: dd.Store})
	if err != nil {
		t.Fatal(err)
	}
	u, err := accounts.CreateUser(ctx, "alice", "", "a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	accounts.AddCredits(ctx, u, time.Hour, 0)
	cl, secret, err := accounts.RegisterClient(ctx, storage.User{}, "oauthclient", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	api, err := httpapi.NewHandler(httpapi.Config{Store: dd.Store, Blobs: dd.Blobs, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", api)
	runner, err := runner.New(runner.Config{Store: dd.Store, Blobs: dd.Blobs, TempDir: t.TempDir(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// 2 s of a 440 Hz tone.
	in := filepath.Join(t.TempDir(), "tone.wav")
	const rate = 44100
	b := audio.NewBuffer(1, 2*rate)
	for i := range b[0] {
		b[0][i] = 0.1 * math.Sin(2*math.Pi*440*float64(i)/rate)
	}
	var wav bytes.Buffer
	enc, _ := audio.NewEncoder(ctx, "wav", &wav, audio.Format{SampleRate: rate, Channels: 1}, audio.EncodeOptions{Length: 2 * time.Second})
	enc.Write(b)
	enc.Close()
	os.WriteFile(in, wav.Bytes(), 0o644)

	outDir := t.TempDir()
	var stdout bytes.Buffer
	err = run(ctx, []string{"-base", srv.URL, "-client-id", cl.ID, "-client-secret", secret, "-user", "alice",
		"-password", "a long enough password", "-out", outDir, "-format", "flac", "-poll", "20ms", in}, &stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "status: Done") {
		t.Errorf("output: %s", stdout.String())
	}
	d, err := audio.Open(ctx, filepath.Join(outDir, "tone.flac"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := audio.ReadAll(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if got.Frames() != 2*rate {
		t.Errorf("downloaded %d frames, want %d", got.Frames(), 2*rate)
	}
}
