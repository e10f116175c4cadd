// Package s3test runs a real S3-compatible server for tests: versitygw
// (github.com/versity/versitygw) with its posix backend, which keeps each
// bucket as a folder and each object as a file in it, on 127.0.0.1 on a
// free port.
//
// The server is built from the Go module proxy at the version the module
// in the versitygw folder beside this file pins (its go.sum verifies it),
// once per machine: the binary is cached in the user's cache folder, named
// after that go.sum, so a version change builds anew. A cold build takes
// about a minute on two cores, a warm one seconds, and finding the cached
// binary nothing. AUDIOPOST_VERSITYGW names a binary to use instead
// (.ci/run builds it while apt-get runs and sets it).
//
// One server serves a whole test binary: Start starts it on first use,
// and the package's TestMain stops it (Main, or Stop after m.Run). Each
// test makes buckets of its own (Server.Bucket).
//
// When the server can neither be found nor built, Start skips the test
// with the reason, unless the CI environment variable is set: then it
// fails.
package s3test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Server is a running S3-compatible server.
type Server struct {
	// Endpoint is host:port on loopback; the server speaks plain HTTP.
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey, SecretKey string
	// Region is the server's region.
	Region string
	// Root is the folder that holds the buckets, one folder each.
	Root string

	client *minio.Client
	dir    string
	cmd    *exec.Cmd
	exit   chan struct{}
	n      atomic.Int64
}

// Client is a client of the server as its root account.
func (s *Server) Client() *minio.Client { return s.client }

// Bucket makes a new empty bucket for the test and returns its name. The
// bucket's objects are the files under filepath.Join(s.Root, name).
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), s.n.Add(1))
	if err := s.client.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("s3test: making bucket %s: %v", name, err)
	}
	return name
}

// URL is the blob store URL (storage/blob.OpenURL) of a bucket and key
// prefix on the server; the credentials go in the environment (Env).
func (s *Server) URL(bucket, prefix string) string {
	return "s3://" + bucket + "/" + prefix + "?endpoint=" + url.QueryEscape(s.Endpoint) +
		"&region=" + url.QueryEscape(s.Region) + "&insecure=1"
}

// Env is the environment that gives a process the root account's
// credentials, in the variables the AWS tools read.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// Launch starts a new server that keeps its buckets under a new temporary
// folder; Stop ends it.
func Launch() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		return nil, err
	}
	s := &Server{AccessKey: "audiopost-test", SecretKey: randomHex(16), Region: "us-east-1",
		Root: filepath.Join(dir, "buckets"), dir: dir}
	if err := os.Mkdir(s.Root, 0o755); err != nil {
		s.Stop()
		return nil, err
	}
	for try := 0; ; try++ {
		err := s.start(bin)
		if err == nil {
			break
		}
		if try == 3 {
			s.Stop()
			return nil, err
		}
	}
	s.client, err = minio.New(s.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region})
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// start runs the server on a free port and waits until it listens.
func (s *Server) start(bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(s.dir, "server.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, "--port", s.Endpoint, "--region", s.Region, "--quiet", "posix", s.Root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	cmd.Stdout, cmd.Stderr = log, log
	// The server dies with the test binary even when TestMain never got
	// to Stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("s3test: starting %s: %w", bin, err)
	}
	exit := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exit)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Endpoint, time.Second)
		if err == nil {
			c.Close()
			s.cmd, s.exit = cmd, exit
			return nil
		}
		select {
		case <-exit:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("s3test: versitygw exited at start:\n%s", out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exit
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("s3test: versitygw did not listen within 20s:\n%s", out)
		}
	}
}

// Stop stops the server and removes its buckets.
func (s *Server) Stop() error {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exit:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exit
		}
	}
	return os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// The pinned server and how to build it.
const (
	toolPackage = "github.com/versity/versitygw/cmd/versitygw"
	toolDir     = "versitygw" // beside this file
)

// Binary returns the path of the versitygw binary: AUDIOPOST_VERSITYGW,
// else the cached build of the pinned version, built now if there is none.
func Binary() (string, error) {
	if p := os.Getenv("AUDIOPOST_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("s3test: AUDIOPOST_VERSITYGW: %w", err)
		}
		return p, nil
	}
	mod, err := moduleDir()
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(mod, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	h := sha256.Sum256(sum)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "audiopost")
	bin := filepath.Join(dir, "versitygw-"+hex.EncodeToString(h[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	// Test binaries of several packages may get here at once: one
	// builds, the others wait for it.
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := bin + ".tmp-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, toolPackage)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -buildvcs=false", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("s3test: building versitygw in %s: %v\n%s", mod, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	return bin, nil
}

// moduleDir finds the versitygw module folder: beside this source file,
// or (in a binary built with -trimpath) under the main module's root.
func moduleDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		d := filepath.Join(filepath.Dir(file), toolDir)
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
		d := filepath.Join(filepath.Dir(gomod), "storage", "blob", "s3test", toolDir)
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("s3test: cannot find the versitygw module folder (storage/blob/s3test/versitygw)")
}

// The server shared by the tests of one binary.
var (
	shared    *Server
	sharedErr error
	sharedMu  sync.Mutex
)

// Start returns the test binary's server, starting it on first use. It
// skips the test when the server cannot start (fails it when the CI
// environment variable is set).
func Start(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Launch()
	}
	s, err := shared, sharedErr
	sharedMu.Unlock()
	if err != nil {
		need.Unavailable(t, "S3 test server unavailable: %v", err)
	}
	return s
}

// Stop stops the shared server, if it was started.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
	}
	shared, sharedErr = nil, nil
}

// Main runs the tests, stops the shared server and exits: a TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}
