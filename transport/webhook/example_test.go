package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/outbound"
	"github.com/audiopost/audiopost/transport/webhook"
)

// The job runner enqueues the webhook with the final status change; a
// Sender delivers it.
func Example() {
	dir, _ := os.MkdirTemp("", "audiopost")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, filepath.Join(dir, "audiopost.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	user := storage.User{Username: "alice"}
	st.CreateUser(ctx, &user)
	prod := storage.Resource{Owner: user.ID, Kind: storage.KindProduction, Doc: []byte(`{}`), Status: 4}
	st.CreateResource(ctx, &prod)

	got := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got <- fmt.Sprintf("%s status=%s status_string=%s",
			r.Header.Get("Content-Type"), r.PostForm.Get("status"), r.PostForm.Get("status_string"))
	}))
	defer receiver.Close()

	// Processing finished: status Done and its webhook commit together.
	err = st.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.SetStatus(ctx, user.ID, storage.KindProduction, prod.UUID, 3); err != nil {
			return err
		}
		return webhook.Enqueue(ctx, tx, user.ID, prod.UUID, receiver.URL+"/done", 3, "Done")
	})
	if err != nil {
		panic(err)
	}

	sender, err := webhook.New(webhook.Config{
		Store:  st,
		Client: outbound.New(outbound.Config{AllowLoopback: true}), // the receiver is on loopback
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- sender.Run(runCtx) }()
	fmt.Println(<-got)
	for {
		ds, _ := st.ListDeliveries(ctx, user.ID, prod.UUID)
		if ds[0].State != storage.DeliveryPending {
			fmt.Println(ds[0].State, ds[0].Attempts)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	fmt.Println(<-done)
	// Output:
	// application/x-www-form-urlencoded status=3 status_string=Done
	// delivered 1
	// <nil>
}
