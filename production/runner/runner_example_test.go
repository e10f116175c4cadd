package runner_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// ExampleRunner processes a production the way the API queues it: stored
// with status Waiting and a "process" job in one transaction.
func ExampleRunner() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "runner-example")
	defer os.RemoveAll(dir)
	data, err := sqlstore.OpenDataDir(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer data.Close()
	u := storage.User{Username: "demo"}
	data.Store.CreateUser(ctx, &u)
	data.Store.AddCredits(ctx, u.ID, time.Hour, 0)

	// A stored production whose input was uploaded as talk.wav.
	req, _ := production.DecodeInput([]byte(`{"input_file": "https://example.org/talk.wav", "output_files": [{"format": "flac"}]}`))
	p, _ := production.New(req, production.ApplyOptions{})
	p.InputFile = "talk.wav"
	doc, _ := production.EncodeDocument(p)
	res := &storage.Resource{Owner: u.ID, Kind: storage.KindProduction, Doc: doc, Status: int(production.StatusWaiting)}
	data.Store.CreateResource(ctx, res)
	local := filepath.Join(dir, "talk.wav")
	writeWAVFile(local, testaudio.SpeechLike(44100, 4, 0.05), 44100)
	w, _ := data.Blobs.Create(ctx, production.InputKey(res.UUID, "talk.wav"))
	in, _ := os.ReadFile(local)
	w.Write(in)
	w.Close()
	data.Store.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: res.UUID, Type: production.JobProcess})

	r, err := runner.New(runner.Config{Store: data.Store, Blobs: data.Blobs, TempDir: dir,
		OnFinished: func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
			fmt.Println("finished:", p.Status)
			return nil
		}})
	if err != nil {
		log.Fatal(err)
	}
	// Run(ctx) loops until ctx is done; RunOnce takes a single job.
	if _, err := r.RunOnce(ctx, "example-worker"); err != nil {
		log.Fatal(err)
	}
	got, _ := data.Store.GetResource(ctx, u.ID, storage.KindProduction, res.UUID)
	done, _ := production.DecodeDocument(got)
	user, _ := data.Store.GetUser(ctx, u.ID)
	fmt.Printf("%s, %.0f s, %s, credits left %v\n", done.Status, done.Length, done.OutputFilename(0), user.Credits())
	// Output:
	// finished: Done
	// Done, 4 s, talk.flac, credits left 59m56s
}

func writeWAVFile(path string, b audio.Buffer, rate int) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	enc, err := audio.NewEncoder(context.Background(), "wav", f, audio.Format{SampleRate: rate, Channels: len(b)}, audio.EncodeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	enc.Write(b)
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}
}
