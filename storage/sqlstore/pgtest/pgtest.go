// Package pgtest runs a throwaway PostgreSQL server for tests.
//
// It uses the server binaries of the machine: Debian's postgresql
// (/usr/lib/postgresql/<version>/bin, which .ci/run installs), or initdb
// and postgres on PATH, or the folder named by AUDIOPOST_PG_BIN. A cluster
// is made with initdb in a temporary folder and started there, listening
// on a Unix socket in that folder only (no TCP port, so no race for a free
// port with other servers tests start), tuned for tests (no fsync); each
// test gets a fresh schema of its own (in effect a database of its own),
// dropped when it ends. PostgreSQL refuses to run as root, so as root
// the server runs as the "postgres" user (or "nobody") instead.
//
// One cluster serves a whole test binary: DSN starts it on first use, and
// the package's TestMain stops it:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		st, err := sqlstore.Open(t.Context(), pgtest.DSN(t))
//		...
//	}
//
// When no server can be started, DSN skips the test with the reason,
// unless the CI environment variable is set: then it fails.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Cluster is a running PostgreSQL server.
type Cluster struct {
	// Version is the server's major version.
	Version string
	// Socket is the folder of its Unix socket.
	Socket string
	dir    string
	cmd    *exec.Cmd
	exit   chan struct{} // closed when the server process has exited
	log    string
	db     *sql.DB // the postgres database, for CREATE and DROP DATABASE
	// tests is TestDatabase, for CREATE and DROP SCHEMA.
	tests *sql.DB
	n     atomic.Int64
	// drops are DropSchema calls of DSN in flight.
	drops sync.WaitGroup
}

// Start makes and starts a new cluster; Stop ends it.
func Start() (*Cluster, error) {
	bin, version, err := findBin()
	if err != nil {
		return nil, err
	}
	cred, owner, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Version: version, Socket: dir, dir: dir, log: filepath.Join(dir, "server.log")}
	fail := func(err error) (*Cluster, error) {
		c.Stop()
		return nil, err
	}
	if owner != nil {
		if err := os.Chown(dir, owner.uid, owner.gid); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %v\n%s", err, out))
	}
	if err := c.start(bin, data, cred); err != nil {
		return fail(err)
	}
	c.db, err = sql.Open("pgx", c.DSN("postgres"))
	if err == nil {
		_, err = c.db.Exec("CREATE DATABASE " + TestDatabase)
	}
	if err == nil {
		c.tests, err = sql.Open("pgx", c.DSN(TestDatabase))
	}
	if err != nil {
		return fail(fmt.Errorf("pgtest: %w", err))
	}
	return c, nil
}

// start runs the server and waits until it accepts connections.
func (c *Cluster) start(bin, data string, cred *syscall.Credential) error {
	log, err := os.OpenFile(c.log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-h", "", "-k", c.dir,
		// A test server: losing it in a crash loses nothing.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB",
		"-c", "log_min_messages=warning", "-c", "logging_collector=off",
		// Deadlocks are resolved in a tenth of the default second.
		"-c", "deadlock_timeout=100ms")
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = log, log
	// Pdeathsig: the server dies with the test binary even when TestMain
	// never got to Stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	exit := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exit)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := sql.Open("pgx", c.DSN("postgres"))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
		}
		if err == nil {
			c.cmd, c.exit = cmd, exit
			return nil
		}
		select {
		case <-exit:
			out, _ := os.ReadFile(c.log)
			return fmt.Errorf("pgtest: postgres exited at start:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exit
			out, _ := os.ReadFile(c.log)
			return fmt.Errorf("pgtest: postgres did not accept connections within 30s: %v\n%s", err, out)
		}
	}
}

// DSN is the URL of database db on the cluster, as the superuser.
func (c *Cluster) DSN(db string) string {
	return "postgres://postgres@/" + db + "?host=" + url.QueryEscape(c.Socket) + "&sslmode=disable"
}

// TestDatabase is the database that NewSchema makes schemas in.
const TestDatabase = "tests"

// NewSchema creates a new empty schema in TestDatabase and returns a URL
// whose connections have it as their search_path, so that everything a
// store creates goes there: a database of its own for all a test can
// tell, made in a millisecond where CREATE DATABASE takes tens (and
// DROP DATABASE hundreds). What schemas of one database share
// (LISTEN/NOTIFY channels, advisory locks) only ever costs a needless
// wake-up or wait.
func (c *Cluster) NewSchema(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d", c.n.Add(1))
	if _, err := c.tests.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return c.DSN(TestDatabase) + "&search_path=" + name, nil
}

// DropSchema drops the schema of a URL from NewSchema, with everything in
// it.
func (c *Cluster) DropSchema(ctx context.Context, dsn string) error {
	_, name, ok := strings.Cut(dsn, "&search_path=")
	if !ok {
		return fmt.Errorf("pgtest: %s is not a URL of NewSchema", dsn)
	}
	if _, err := c.tests.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// CreateDatabase creates a new empty database and returns its URL. It is
// a copy of template1 at the file level (STRATEGY FILE_COPY), ten times
// faster than the default for a small template.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("db_%d", c.n.Add(1))
	if _, err := c.db.ExecContext(ctx, "CREATE DATABASE "+name+" STRATEGY FILE_COPY"); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return c.DSN(name), nil
}

// DropDatabase drops the database of a URL from CreateDatabase, closing
// whatever connections are still open to it.
func (c *Cluster) DropDatabase(ctx context.Context, dsn string) error {
	name, _, _ := strings.Cut(dsn, "?")
	name = name[strings.LastIndexByte(name, '/')+1:]
	if _, err := c.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// Stop stops the server and removes its folder.
func (c *Cluster) Stop() error {
	c.drops.Wait()
	for _, db := range []*sql.DB{c.tests, c.db} {
		if db != nil {
			db.Close()
		}
	}
	if c.cmd != nil {
		// SIGQUIT: immediate shutdown; the data is thrown away anyway.
		c.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-c.exit:
		case <-time.After(10 * time.Second):
			syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.exit
		}
	}
	return os.RemoveAll(c.dir)
}

// findBin returns the folder of initdb and postgres, and the major
// version.
func findBin() (dir, version string, err error) {
	var candidates []string
	if d := os.Getenv("AUDIOPOST_PG_BIN"); d != "" {
		candidates = append(candidates, d)
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return majorOf(debian[i]) > majorOf(debian[j]) })
	candidates = append(candidates, debian...)
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(p))
		}
	}
	for _, d := range candidates {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			out, err := exec.Command(filepath.Join(d, "postgres"), "--version").Output()
			if err != nil {
				continue
			}
			f := strings.Fields(string(out)) // postgres (PostgreSQL) 15.18 (Debian ...)
			v := ""
			if len(f) >= 3 {
				v, _, _ = strings.Cut(f[2], ".")
			}
			return d, v, nil
		}
	}
	return "", "", errNoBinaries
}

var errNoBinaries = errors.New("pgtest: no PostgreSQL server binaries (initdb, postgres): install Debian's postgresql, or set AUDIOPOST_PG_BIN")

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

type ids struct{ uid, gid int }

// credential returns whom to run the server as: nil (this process's user)
// unless that is root, which PostgreSQL refuses.
func credential() (*syscall.Credential, *ids, error) {
	if os.Geteuid() != 0 {
		return nil, nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, &ids{uid, gid}, nil
	}
	return nil, nil, errors.New("pgtest: running as root and there is no postgres or nobody user to run the server as")
}

// The cluster shared by the tests of one binary.
var (
	shared    *Cluster
	sharedErr error
	sharedMu  sync.Mutex
)

// Shared returns the test binary's cluster, starting it on first use.
func Shared() (*Cluster, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	return shared, sharedErr
}

// DSN returns the URL of a new empty schema on the shared cluster (see
// Cluster.NewSchema), dropped when the test and its cleanups are done. It
// skips the test when no server can start (fails it when the CI
// environment variable is set).
func DSN(t testing.TB) string {
	t.Helper()
	c, err := Shared()
	if err != nil {
		Unavailable(t, err)
	}
	dsn, err := c.NewSchema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// In the background: nothing needs to wait for it.
		c.drops.Go(func() { c.DropSchema(context.Background(), dsn) })
	})
	return dsn
}

// Unavailable skips the test for err, the reason Shared or Start failed,
// or fails it under CI, where the server must be there (see package
// internal/need). Without the server's programs the skip names the Debian
// package to install.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoBinaries) {
		need.Programs(t, "initdb", "postgres")
	}
	need.Unavailable(t, "PostgreSQL test server unavailable: %v", err)
}

// Stop stops the shared cluster, if it was started.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
	}
	shared, sharedErr = nil, nil
}

// Main runs the tests, stops the shared cluster and exits: a TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}
