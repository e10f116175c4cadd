// Command embed shows how to embed audiopost in your own Go web
// application: the whole audiopost HTTP interface (JSON API, simple API,
// downloads, OAuth 2.0 and account pages) is mounted under /audiopost/ of
// the application's own http.ServeMux, next to the application's routes,
// and the job runner processes the productions in the same process.
//
//	go run ./examples/embed -addr 127.0.0.1:8080 -data ./embed-data
//
// On first start it creates a user "demo" and prints an API key; then
//
//	curl -H "Authorization: Bearer KEY" http://127.0.0.1:8080/audiopost/api/user.json
//
// talks to the embedded API while http://127.0.0.1:8080/ is the
// application's own page.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/httpapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// run is main without the process; ready, when not nil, receives the
// listening address.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	data := fs.String("data", "./embed-data", "audiopost data directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dd, err := sqlstore.OpenDataDir(ctx, *data)
	if err != nil {
		return err
	}
	defer dd.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	if err := demoUser(ctx, dd.Store, stdout); err != nil {
		return err
	}

	// The application's own routes...
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "my application; audiopost lives under /audiopost/")
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	// ...and audiopost under /audiopost/: BaseURL's path is its prefix,
	// so the handler gets the full path (no http.StripPrefix).
	api, err := httpapi.NewHandler(httpapi.Config{Store: dd.Store, Blobs: dd.Blobs, BaseURL: base + "/audiopost"})
	if err != nil {
		return err
	}
	mux.Handle("/audiopost/", api)

	runner, err := runner.New(runner.Config{Store: dd.Store, Blobs: dd.Blobs,
		BaseURL: base + "/audiopost", Logger: slog.Default()})
	if err != nil {
		return err
	}
	bg, stopRunner := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { runner.Run(bg) })

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s, audiopost at %s/audiopost/\n", base, base)
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	stopRunner()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// demoUser creates the user "demo" with an hour of credits and an API
// key on an empty store, and prints the key.
func demoUser(ctx context.Context, st storage.Store, stdout io.Writer) error {
	if users, err := st.ListUsers(ctx, 1, 0); err != nil || len(users) > 0 {
		return err
	}
	accounts, err := app.New(app.Config{Store: st})
	if err != nil {
		return err
	}
	u, err := accounts.CreateUser(ctx, "demo", "", storage.NewToken())
	if err != nil {
		return err
	}
	if _, err := accounts.AddCredits(ctx, u, time.Hour, 0); err != nil {
		return err
	}
	_, key, err := accounts.CreateAPIKey(ctx, u, "embed example", time.Time{})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user demo, API key: %s\n", key)
	return nil
}
