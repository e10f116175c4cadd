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

	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/browser"
	"github.com/audiopost/audiopost/transport/httpapi"
	"github.com/audiopost/audiopost/transport/outbound"
)

func init() {
	register("serve", "run the HTTP API, the job runner and the webhook sender", runServe)
}

// DefaultRateLimit is serve's default of -rate-limit: API requests per
// second per user, with bursts of twice as many. A script polling a
// production's status, a batch creating productions one after the other
// or a browser loading a page stays below it; a runaway client looping on
// the API is slowed down before it loads the store. The bucket is a
// counter in the store, like the login throttles, so API processes behind
// a load balancer share it.
const DefaultRateLimit = 50

// DefaultShutdownTimeout bounds the shutdown on SIGTERM or SIGINT: serve
// has exited this long after the signal. Requests in flight may finish
// within it; running productions may finish within three quarters of it,
// and are then stopped and handed back to the queue (their jobs released,
// so the next worker starts them again without counting an attempt). At
// the bound every external program still running is killed and serve
// returns: what could not be handed back in time is taken back when its
// lease runs out.
const DefaultShutdownTimeout = 10 * time.Second

// The roles of serve.
const (
	roleAll    = "all"    // the API, the job runner and the webhook sender
	roleAPI    = "api"    // the HTTP API only
	roleWorker = "worker" // the job runner and the webhook sender only
)

// runServe is `audiopost serve`. By default it is the embedded
// deployment: one process with an SQLite store and a blob folder under
// -data. With -db postgres://... and -blobs s3://... any number of
// processes on any number of machines share one store and one bucket,
// each in a -role: api processes answer HTTP, worker processes process
// productions and send webhooks.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (role api and all): this machine only by default; :8080 opens it to the network")
	data := fs.String("data", defaultData, "data directory: the SQLite database and blob folder unless -db and -blobs say otherwise, and the workers' temporary files")
	dbURL := fs.String("db", "", "metadata store: an SQLite file, or postgres://user:password@host:port/database (default <data>/"+sqlstore.DataDirDB+")")
	blobsURL := fs.String("blobs", "", "blob store: a folder (several processes may share it, also on a network file system), or s3://bucket/prefix?endpoint=host:port&region=REGION&insecure=1 with the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default <data>/"+sqlstore.DataDirBlobs+")")
	role := fs.String("role", roleAll, "api (HTTP only), worker (job runner and webhook sender, no listener) or all")
	baseURL := fs.String("base-url", "", "absolute URL clients reach the service at, its path the mount point (default http://<addr>; give it to workers too, for the URLs they publish)")
	workers := fs.Int("workers", 1, "productions processed at once")
	lease := fs.Duration("lease", runner.DefaultLease, "job lease, renewed every quarter of it: a production whose worker died is taken over after at most this long, and at once when a worker starts again on the same host")
	poll := fs.Duration("poll", 500*time.Millisecond, "how often idle workers look for jobs (new ones wake them at once)")
	shutdownTimeout := fs.Duration("shutdown-timeout", DefaultShutdownTimeout, "on SIGTERM or SIGINT serve exits within this: requests in flight may finish, running productions may finish within three quarters of it and are then handed back to the queue, and at the end the external programs still running are killed")
	maxPrograms := fs.Int("max-programs", procpool.DefaultSize(), "external programs (ffmpeg, ffprobe, pocketsphinx) this process runs at once, for processing and the API's checks of uploads together: productions queue for them (env "+procpool.EnvSize+"; default 8 per core, 16 to 64, at most one per 256 MB of memory; -max-processes is another bound, on what one production starts over its course)")
	adminUser := fs.String("admin-user", os.Getenv("AUDIOPOST_ADMIN_USER"), "username of the admin account created on first start (env AUDIOPOST_ADMIN_USER; default admin)")
	adminPassword := fs.String("admin-password", os.Getenv("AUDIOPOST_ADMIN_PASSWORD"), "its password (env AUDIOPOST_ADMIN_PASSWORD; default: random, printed once)")
	adminCredits := fs.Duration("admin-credits", 1000*time.Hour, "processing time credited to the admin account on first start")
	credits := fs.Bool("credits", false, "enforce credits: a production needs its owner's credits to cover its input (grant them with `audiopost user credits`); by default a self-hosted server processes for free and only reports used_credits")
	fs.Bool("no-credits", true, "the default; kept so that older command lines still work")
	allowPrivate := fs.Bool("allow-private-fetch", false, "let input URLs, webhooks and external services reach loopback and private addresses")
	rateLimit := fs.Float64("rate-limit", DefaultRateLimit, "API requests per second per user, with bursts of twice as many (0: unlimited); shared by API processes through the store")
	anonConns := fs.Int("max-anon-conns-per-ip", httpapi.DefaultMaxAnonConnsPerIP, "connections one client address may hold open before authenticating; more get 503 (loopback is exempt; behind a reverse proxy on another machine every client has its address: raise it, or -1 for no cap)")
	bodyTimeout := fs.Duration("body-timeout", httpapi.DefaultBodyTimeout, "a request body must arrive within this plus its length at the minimum rate (4 KiB/s)")
	browserDir := fs.String("browser", "", "folder of the in-browser pages, served at <base-url>/browser/: process and measure recordings in the browser, without uploading them (build it with go run ./transport/browser/build -o DIR; default <data>/browser)")
	addrFile := fs.String("addr-file", "", "write the listening address (host:port) to this file once ready")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	keyFile := secretKeyFlag(fs)
	limits := limitsFlags(fs)
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
	runAPI, runWorker := *role == roleAll || *role == roleAPI, *role == roleAll || *role == roleWorker
	if !runAPI && !runWorker {
		return fmt.Errorf("-role %q: want api, worker or all", *role)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("role", *role)
	if *maxPrograms < 1 {
		return fmt.Errorf("-max-programs %d: want at least 1", *maxPrograms)
	}
	if *shutdownTimeout <= 0 {
		return fmt.Errorf("-shutdown-timeout %v: want a positive duration", *shutdownTimeout)
	}
	// One pool of external programs for the whole process: the workers'
	// productions and the API's probes wait for slots in the same line.
	pool := procpool.New(procpool.Config{Size: *maxPrograms, Logger: log})

	if err := os.MkdirAll(*data, 0o750); err != nil {
		return err
	}
	if *dbURL == "" {
		*dbURL = filepath.Join(*data, sqlstore.DataDirDB)
	}
	if *blobsURL == "" {
		*blobsURL = filepath.Join(*data, sqlstore.DataDirBlobs)
	}
	st, err := sqlstore.Open(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := useSecretKey(ctx, st, *dbURL, *keyFile, log, stdout); err != nil {
		return err
	}
	blobs, err := blob.OpenURL(ctx, *blobsURL)
	if err != nil {
		return err
	}
	defer blobs.Close()
	// What a crash left (kill -9 during an upload) goes now, not in 24 h.
	defer startOrphanCleaner(blobs, log)()

	// One set of metrics per process: the API's requests and, with the
	// worker role in the same process, its processing runs.
	metrics := httpapi.NewMetrics()
	dial := outbound.New(outbound.Config{AllowLoopback: *allowPrivate, AllowPrivate: *allowPrivate, Timeout: -1})
	xfer := transfer.Options{Dial: dial.DialContext, HTTPClient: dial.HTTPClient()}
	var (
		srv    *httpapi.Server
		ln     net.Listener
		base   = *baseURL
		prefix string
		// browserPages is set when the in-browser pages are built.
		browserPages bool
	)
	if runAPI {
		ln, err = net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		defer ln.Close()
		if base == "" {
			base = defaultBaseURL(ln.Addr().(*net.TCPAddr))
		}
	}
	if base != "" {
		bu, err := url.Parse(base)
		if err != nil || (bu.Scheme != "http" && bu.Scheme != "https") || bu.Host == "" {
			return fmt.Errorf("-base-url %q must be an absolute http(s) URL", base)
		}
		base = strings.TrimSuffix(base, "/")
		prefix = strings.TrimSuffix(bu.Path, "/")
	}
	if runAPI {
		if err := ensureAdmin(ctx, st, *adminUser, *adminPassword, *adminCredits, stdout); err != nil {
			return err
		}
		fetch := outbound.New(outbound.Config{AllowLoopback: *allowPrivate, AllowPrivate: *allowPrivate,
			MaxBytes: httpapi.DefaultMaxUploadBytes, Timeout: 10 * time.Minute})
		api, err := httpapi.NewHandler(httpapi.Config{Store: st, Blobs: blobs, BaseURL: base,
			Fetcher: fetch, RateLimit: *rateLimit, Logger: log, Transfer: &xfer, Limits: limits(), Processes: pool,
			Metrics: metrics, MetricsToken: os.Getenv("AUDIOPOST_METRICS_TOKEN"), PasswordIterations: passwordIterations})
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle(prefix+"/", api)
		pagesDir := *browserDir
		if pagesDir == "" {
			pagesDir = filepath.Join(*data, "browser")
		}
		mux.Handle(prefix+"/browser/", http.StripPrefix(prefix+"/browser/", browser.Handler(pagesDir)))
		if _, err := os.Stat(filepath.Join(pagesDir, browser.WasmFile)); err != nil {
			log.Info("the in-browser pages are not built: go run ./transport/browser/build -o "+pagesDir, "dir", pagesDir)
		} else {
			browserPages = true
		}
		srv = httpapi.NewServer(mux, httpapi.ServerLimits{MaxAnonConnsPerIP: *anonConns, BodyTimeout: *bodyTimeout}, log)
	}

	var (
		wk      *worker
		workDir string
	)
	if runWorker {
		workDir, err = makeWorkDir(*data)
		if err != nil {
			return err
		}
		wk, err = newWorker(st, blobs, workerConfig{workers: *workers, lease: *lease, poll: *poll, noCharge: !*credits,
			workDir: workDir, base: base, allowPrivate: *allowPrivate, transfer: xfer, log: log, limits: limits(), processes: pool,
			onProcessed: metrics.ObserveProcessing})
		if err != nil {
			return err
		}
		wk.start()
		fmt.Fprintf(stdout, "audiopost worker running %d production(s) at once, at most %d external programs (store %s, blobs %s)\n",
			*workers, pool.Size(), st.Engine(), blobsKind(blobs))
	}
	serveErr := make(chan error, 1)
	if runAPI {
		go func() { serveErr <- srv.Serve(ln) }()
		fmt.Fprintf(stdout, "audiopost serving %s/ on %s\nlog in at %s/account/login/; the API is described at %s/api/openapi.json\n", base, listenScope(ln.Addr()), base, base)
		if browserPages {
			fmt.Fprintf(stdout, "recordings are processed and measured in the browser, without an upload, at %s/browser/\n", base)
		}
		if *addrFile != "" {
			if err := writeFileAtomic(*addrFile, ln.Addr().String()); err != nil {
				log.Error("writing -addr-file", "err", err)
			}
		}
	}

	select {
	case <-ctx.Done():
		err = nil
	case err = <-serveErr:
	}
	log.Info("shutting down", "timeout", *shutdownTimeout)
	// deadline is when serve stops waiting for its work.
	deadline := time.Now().Add(*shutdownTimeout - closeGrace(*shutdownTimeout))
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	var work []func()
	if srv != nil {
		// In-flight requests finish; new connections are refused.
		work = append(work, func() {
			if serr := srv.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
				log.Warn("HTTP requests still running at the shutdown deadline: their connections are closed", "err", serr)
				srv.Close()
			}
		})
	}
	if wk != nil {
		work = append(work, func() { wk.stop(deadline) })
	}
	hard := time.NewTimer(time.Until(deadline))
	defer hard.Stop()
	awaitShutdown(log, hard.C, pool, workDir, work...)
	return err
}

// awaitShutdown runs work (the HTTP server's drain, the worker's stop)
// and waits for it until expired fires, then kills the external programs
// of pool still running and removes workDir ("" for none). It reports
// whether it abandoned work still running. The bound holds whatever
// hangs: a moment before it (see closeGrace) serve stops waiting, kills
// the programs and returns; abandoned jobs are taken back when their
// leases run out. The timer is the caller's so that a test can fire it.
func awaitShutdown(log *slog.Logger, expired <-chan time.Time, pool *procpool.Pool, workDir string, work ...func()) (abandoned bool) {
	var wg sync.WaitGroup
	for _, w := range work {
		wg.Go(w)
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-expired:
		abandoned = true
		log.Warn("shutdown deadline: work still running is abandoned; its jobs are taken back when their leases run out")
	}
	if n := pool.Close(); n > 0 {
		log.Warn("shutdown: external programs killed", "programs", n)
	}
	if workDir != "" {
		os.RemoveAll(workDir)
	}
	return abandoned
}

// closeGrace is the part of the shutdown bound kept for closing the store
// and the blob store after serve stops waiting for its work.
func closeGrace(timeout time.Duration) time.Duration { return min(timeout/10, time.Second) }

// blobsKind names the blob store for the start message.
func blobsKind(b blob.Store) string {
	if s, ok := b.(*blob.S3); ok {
		return "s3://" + s.Bucket() + "/" + s.Prefix()
	}
	return "folder"
}

// listenScope says who can reach a listening address.
func listenScope(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	switch {
	case !ok:
		return a.String()
	case ta.IP.IsLoopback():
		return ta.String() + ", this machine only (-addr :PORT opens it to the network)"
	case ta.IP.IsUnspecified():
		return ta.String() + ", every network interface"
	}
	return ta.String()
}

// defaultBaseURL is the URL of the listener on this machine.
func defaultBaseURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// defaultData is serve's data directory, which the account commands use
// too when it exists in the working directory.
const defaultData = "./audiopost-data"

// passwordIterations is the PBKDF2 iteration count of the passwords serve's
// admin account and the user command hash. The tests lower it (TestMain):
// they start serve dozens of times, and under the race detector a hash at
// the default count costs seconds.
var passwordIterations = storage.PasswordIterations

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
	accounts, err := app.New(app.Config{Store: st, PasswordIterations: passwordIterations})
	if err != nil {
		return err
	}
	u, err := accounts.CreateUser(ctx, username, "", password)
	if errors.Is(err, storage.ErrConflict) {
		return nil // another API process starting at the same time made it
	}
	if err != nil {
		return fmt.Errorf("creating the admin account: %w", err)
	}
	if credits > 0 {
		if _, err := accounts.AddCredits(ctx, u, credits, 0); err != nil {
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
