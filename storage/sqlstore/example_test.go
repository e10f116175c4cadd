package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// Starting a production: the status change and the job commit together,
// then a worker claims the job under a lease and completes it.
func Example() {
	dir, _ := os.MkdirTemp("", "audiopost")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(dir, "audiopost.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	user := storage.User{Username: "alice"}
	st.CreateUser(ctx, &user)
	prod := storage.Resource{Owner: user.ID, Kind: storage.KindProduction, Doc: []byte(`{"metadata":{"title":"Ep. 1"}}`)}
	st.CreateResource(ctx, &prod)

	err = st.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.SetStatus(ctx, user.ID, storage.KindProduction, prod.UUID, 1); err != nil { // Waiting
			return err
		}
		return tx.Enqueue(ctx, &storage.Job{Owner: user.ID, Production: prod.UUID, Type: "process"})
	})
	if err != nil {
		panic(err)
	}

	job, err := st.Claim(ctx, "worker-1", time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Println(job.Type, job.Production == prod.UUID, job.Attempts)
	// ... process, calling st.Heartbeat(ctx, job.Lease(), time.Minute) meanwhile ...
	if err := st.Complete(ctx, job.Lease()); err != nil {
		panic(err)
	}
	_, err = st.Claim(ctx, "worker-1", time.Minute)
	fmt.Println(err != nil && errors.Is(err, storage.ErrNoJob))
	// Output:
	// process true 1
	// true
}

func ExampleOpenDataDir() {
	dir, _ := os.MkdirTemp("", "audiopost")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	data, err := sqlstore.OpenDataDir(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer data.Close()
	w, _ := data.Blobs.Create(ctx, "productions/x/input.wav")
	w.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// audiopost.db
	// audiopost.db-shm
	// audiopost.db-wal
	// blobs
}
