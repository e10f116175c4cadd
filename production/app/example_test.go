package app_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// The operations a transport calls: a user creates a production, which
// another user cannot see, and cannot start it before it has an input.
func ExampleApp_CreateProduction() {
	ctx := context.Background()
	st, _ := sqlstore.Open(ctx, ":memory:")
	defer st.Close()
	dir, _ := os.MkdirTemp("", "blobs")
	defer os.RemoveAll(dir)
	blobs, _ := blob.OpenDir(dir)
	a, err := app.New(app.Config{Store: st, Blobs: blobs, BaseURL: "https://audio.example.org"})
	if err != nil {
		panic(err)
	}
	ann, _ := a.CreateUser(ctx, "ann", "", "a long password")
	bob, _ := a.CreateUser(ctx, "bob", "", "a long password")

	in, _ := production.DecodeInput([]byte(`{"metadata": {"title": "Episode 1"}, "output_files": [{"format": "mp3"}]}`))
	p, err := a.CreateProduction(ctx, ann, in)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Metadata.Title, "|", p.Status)
	_, err = a.GetProduction(ctx, bob, p.UUID)
	fmt.Println("bob finds it:", !errors.Is(err, storage.ErrNotFound))
	_, err = a.StartProduction(ctx, ann, p.UUID)
	fmt.Println("start:", err)
	// Output:
	// Episode 1 | Incomplete
	// bob finds it: false
	// start: production: cannot be started now: it has no input file
}
