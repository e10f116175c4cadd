package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/httpapi"
	"github.com/audiopost/audiopost/transport/outbound"
	"github.com/audiopost/audiopost/transport/webhook"
)

func init() {
	register("serve", "run the HTTP API, the job runner and the webhook sender", runServe)
}

// shutdownTimeout bounds the graceful shutdown: requests in flight finish
// and running productions are handed back to the queue.
const shutdownTimeout = 30 * time.Second

// runServe is `audiopost serve`: the embedded deployment, one process
// with an SQLite store and a blob folder under -data.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "listen address")
	data := fs.String("data", "./audiopost-data", "data directory (SQLite database and blob folder)")
	baseURL := fs.String("base-url", "", "absolute URL clients reach the service at, its path the mount point (default http://<addr>)")
	workers := fs.Int("workers", 1, "productions processed at once")
	adminUser := fs.String("admin-user", os.Getenv("AUDIOPOST_ADMIN_USER"), "username of the admin account created on first start (env AUDIOPOST_ADMIN_USER; default admin)")
	adminPassword := fs.String("admin-password", os.Getenv("AUDIOPOST_ADMIN_PASSWORD"), "its password (env AUDIOPOST_ADMIN_PASSWORD; default: random, printed once)")
	adminCredits := fs.Duration("admin-credits", 1000*time.Hour, "processing time credited to the admin account on first start")
	noCredits := fs.Bool("no-credits", false, "process for free: neither check nor charge credits")
	allowPrivate := fs.Bool("allow-private-fetch", false, "let input URLs, webhooks and external services reach loopback and private addresses")
	rateLimit := fs.Float64("rate-limit", 0, "API requests per second per user (0: unlimited)")
	addrFile := fs.String("addr-file", "", "write the listening address (host:port) to this file once ready")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	dd, err := sqlstore.OpenDataDir(ctx, *data)
	if err != nil {
		return err
	}
	defer dd.Close()
	work := filepath.Join(*data, "work")
	// The data directory belongs to this one process: whatever a crash
	// left in its work folder is garbage.
	os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o750); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := *baseURL
	if base == "" {
		base = defaultBaseURL(ln.Addr().(*net.TCPAddr))
	}
	bu, err := url.Parse(base)
	if err != nil || (bu.Scheme != "http" && bu.Scheme != "https") || bu.Host == "" {
		return fmt.Errorf("-base-url %q must be an absolute http(s) URL", base)
	}
	base = strings.TrimSuffix(base, "/")
	prefix := strings.TrimSuffix(bu.Path, "/")

	if err := ensureAdmin(ctx, dd.Store, *adminUser, *adminPassword, *adminCredits, stdout); err != nil {
		return err
	}

	fetch := outbound.New(outbound.Config{AllowLoopback: *allowPrivate, AllowPrivate: *allowPrivate,
		MaxBytes: httpapi.DefaultMaxUploadBytes, Timeout: 10 * time.Minute})
	dial := outbound.New(outbound.Config{AllowLoopback: *allowPrivate, AllowPrivate: *allowPrivate, Timeout: -1})
	api, err := httpapi.NewHandler(httpapi.Config{Store: dd.Store, Blobs: dd.Blobs, BaseURL: base,
		Fetcher: fetch, RateLimit: *rateLimit, Logger: log,
		Transfer: &transfer.Options{Dial: dial.DialContext, HTTPClient: dial.HTTPClient()}})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", api)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	sender, err := webhook.New(webhook.Config{Store: dd.Store, Logger: log,
		Client: outbound.New(outbound.Config{AllowLoopback: *allowPrivate, AllowPrivate: *allowPrivate, Timeout: webhook.DefaultTimeout})})
	if err != nil {
		return err
	}
	runner, err := runner.New(runner.Config{
		Store: dd.Store, Blobs: dd.Blobs, Workers: *workers, NoCharge: *noCredits,
		TempDir: work, BaseURL: base, Logger: log, PollInterval: 500 * time.Millisecond,
		Transfer: transfer.Options{Dial: dial.DialContext, HTTPClient: dial.HTTPClient()},
		OnFinished: func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
			if p.Webhook == nil || *p.Webhook == "" {
				return nil
			}
			if err := webhook.Enqueue(ctx, tx, owner, p.UUID, *p.Webhook, int(p.Status), p.Status.String()); err != nil {
				return err
			}
			// The sender finds the delivery at the latest one poll after the
			// commit; waking it early only saves that poll.
			sender.Wake()
			return nil
		},
	})
	if err != nil {
		return err
	}

	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { runner.Run(bgCtx) })
	wg.Go(func() { sender.Run(bgCtx) })
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	fmt.Fprintf(stdout, "audiopost serving %s/ (API %s/api/, log in at %s/account/)\n", base, base, base)
	if *addrFile != "" {
		if err := writeFileAtomic(*addrFile, ln.Addr().String()); err != nil {
			log.Error("writing -addr-file", "err", err)
		}
	}

	select {
	case <-ctx.Done():
		err = nil
	case err = <-serveErr:
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	// The runner cancels its productions and releases their jobs for the
	// next start (or another worker).
	stopBackground()
	wg.Wait()
	return err
}

// defaultBaseURL is the URL of the listener on this machine.
func defaultBaseURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// ensureAdmin creates the admin account when the store has no user yet.
// Without a password one is generated and printed, once.
func ensureAdmin(ctx context.Context, st storage.Store, username, password string, credits time.Duration, stdout io.Writer) error {
	users, err := st.ListUsers(ctx, 1, 0)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return nil
	}
	if username == "" {
		username = "admin"
	}
	generated := password == ""
	if generated {
		password = storage.NewToken()[:24]
	}
	u, err := auth.CreateUser(ctx, st, username, "", password)
	if err != nil {
		return fmt.Errorf("creating the admin account: %w", err)
	}
	if credits > 0 {
		if _, err := st.AddCredits(ctx, u.ID, credits, 0); err != nil {
			return err
		}
	}
	if generated {
		fmt.Fprintf(stdout, "created admin account %q with password %s (shown only now)\n", username, password)
	} else {
		fmt.Fprintf(stdout, "created admin account %q\n", username)
	}
	return nil
}

func writeFileAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
