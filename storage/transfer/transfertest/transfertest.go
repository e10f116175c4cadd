// Package transfertest runs real FTP, SFTP, WebDAV and S3 servers on
// loopback for tests: rclone (sftp, webdav) and pyftpdlib (ftp), both from
// Debian (packages rclone and python3-pyftpdlib, which .ci/run installs),
// and versitygw (s3, see storage/blob/s3test; a test binary that starts
// it stops it in TestMain with s3test.Main).
package transfertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob/s3test"
)

// Server is a running server sharing one local directory.
type Server struct {
	// Dir is the directory the server shares.
	Dir string
	// Addr is host:port on loopback ([::1]:port on IPv6).
	Addr string
	// User and Password are the account's credentials.
	User, Password string
	// Protocol is "ftp", "ftps", "sftp", "webdav" or "s3".
	Protocol string
	// Bucket is the s3 server's bucket, whose folder is Dir; User and
	// Password are its access key and secret key.
	Bucket string
	// S3 is the s3 server.
	S3 *s3test.Server
	// CertPEM is the server certificate of an ftps server (self-signed,
	// for 127.0.0.1), for the client's trusted roots.
	CertPEM []byte
}

// ftpServer runs pyftpdlib for one user; with a certificate and key it
// requires explicit TLS on control and data connections. A refused login
// is answered at once: pyftpdlib's default 3 s delay would make every test
// of wrong credentials wait.
const ftpServer = `
import sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler, TLS_FTPHandler
from pyftpdlib.servers import FTPServer
host, port, d, user, pw = sys.argv[1:6]
a = DummyAuthorizer()
a.add_user(user, pw, d, perm="elradfmwMT")
h = FTPHandler
if len(sys.argv) > 6:
    h = TLS_FTPHandler
    h.certfile, h.keyfile = sys.argv[6:8]
    h.tls_control_required = True
    h.tls_data_required = True
h.authorizer = a
h.auth_failed_timeout = 0
FTPServer((host, int(port)), h).serve_forever()
`

// Start runs a server for protocol sharing a new directory on 127.0.0.1,
// and stops it when the test ends. Without the server's program it skips
// the test naming the Debian package, unless the CI environment variable
// is set (CI installs them): then it fails (see package internal/need).
func Start(t testing.TB, protocol string) *Server {
	t.Helper()
	return StartAt(t, protocol, "127.0.0.1")
}

// StartAt is Start on the loopback address host: "127.0.0.1", or "::1"
// for the URLs and hosts of IPv6 literals (sftp and webdav only, which
// rclone serves). Without IPv6 on loopback it skips the test.
func StartAt(t testing.TB, protocol, host string) *Server {
	t.Helper()
	if protocol == "s3" {
		srv := s3test.Start(t)
		b := srv.Bucket(t)
		return &Server{Dir: filepath.Join(srv.Root, b), Addr: srv.Endpoint, User: srv.AccessKey, Password: srv.SecretKey,
			Protocol: protocol, Bucket: b, S3: srv}
	}
	var prog string // the server's program
	switch protocol {
	case "ftp":
		prog = need.Python(t, "pyftpdlib")
	case "ftps":
		prog = need.Python(t, "pyftpdlib", "OpenSSL")
	case "sftp", "webdav":
		prog = need.Program(t, "rclone")
	}
	if host != "127.0.0.1" && protocol != "sftp" && protocol != "webdav" {
		t.Fatalf("transfertest: %s servers listen on 127.0.0.1 only", protocol)
	}
	root := t.TempDir()
	s := &Server{Dir: filepath.Join(root, "share"), User: "tester", Password: "s3cret pass", Protocol: protocol}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t, host)
	s.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	var cmd *exec.Cmd
	switch protocol {
	case "ftp":
		cmd = exec.Command(prog, "-c", ftpServer, "127.0.0.1", strconv.Itoa(port), s.Dir, s.User, s.Password)
	case "ftps":
		certFile, keyFile := filepath.Join(root, "cert.pem"), filepath.Join(root, "key.pem")
		s.CertPEM = selfSigned(t, certFile, keyFile)
		cmd = exec.Command(prog, "-c", ftpServer, "127.0.0.1", strconv.Itoa(port), s.Dir, s.User, s.Password, certFile, keyFile)
	case "sftp", "webdav":
		cmd = exec.Command(prog, "serve", protocol, "--addr", s.Addr, "--user", s.User, "--pass", s.Password,
			"--config", filepath.Join(root, "rclone.conf"), "--cache-dir", filepath.Join(root, "cache"), s.Dir)
		cmd.Env = append(os.Environ(), "HOME="+root, "XDG_CONFIG_HOME="+root, "XDG_CACHE_HOME="+filepath.Join(root, "cache"))
	default:
		t.Fatalf("transfertest: unknown protocol %q", protocol)
	}
	log, err := os.Create(filepath.Join(root, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		need.Unavailable(t, "transfertest: %s server unavailable: %v", protocol, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := greets(s.Addr, protocol)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("transfertest: %s server did not start: %v\n%s", protocol, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// greets reports whether the server at addr answers in its protocol: a
// listening socket alone is not enough, rclone accepts connections a
// moment before it serves them.
func greets(addr, protocol string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	want := map[string]string{"ftp": "220", "ftps": "220", "sftp": "SSH-", "webdav": "HTTP/"}[protocol]
	if protocol == "webdav" {
		if _, err := io.WriteString(c, "OPTIONS / HTTP/1.0\r\n\r\n"); err != nil {
			return err
		}
	}
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != want {
		return fmt.Errorf("greeting %q, want %q", buf, want)
	}
	return nil
}

func freePort(t testing.TB, host string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		need.Unavailable(t, "transfertest: cannot listen on %s: %v", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Config returns the service settings that reach the server, with extra
// settings merged in (for example base_url or host_key).
func (s *Server) Config(extra map[string]any) []byte {
	host, port, _ := net.SplitHostPort(s.Addr)
	m := map[string]any{"username": s.User, "password": s.Password}
	switch s.Protocol {
	case "webdav":
		m["url"] = "http://" + s.Addr + "/"
	case "ftp":
		m["host"], m["port"], m["tls"] = host, port, false
	case "ftps":
		m["host"], m["port"], m["tls"] = host, port, true
	case "s3":
		m["endpoint"], m["bucket"], m["region"] = "http://"+s.Addr, s.Bucket, s.S3.Region
	default:
		m["host"], m["port"] = host, port
	}
	for k, v := range extra {
		m[k] = v
	}
	if s.Protocol == "s3" {
		// The account's keys, also when extra overrides them.
		m["access_key"], m["secret_key"] = m["username"], m["password"]
		delete(m, "username")
		delete(m, "password")
	}
	b, _ := json.Marshal(m)
	return b
}

// Settings are the settings of Config as a map, the way a client sends
// them to register the server as a service.
func (s *Server) Settings(extra map[string]any) map[string]any {
	m := map[string]any{}
	json.Unmarshal(s.Config(extra), &m)
	return m
}

// Type is the service type of the server ("ftp" for ftps).
func (s *Server) Type() string {
	if s.Protocol == "ftps" {
		return "ftp"
	}
	return s.Protocol
}

// Service is a storage.Service of the server for owner, both directions.
func (s *Server) Service(owner string, extra map[string]any) storage.Service {
	return storage.Service{Owner: owner, Type: s.Type(), DisplayName: s.Protocol + " test server",
		Incoming: true, Outgoing: true, Config: s.Config(extra)}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns the
// certificate in PEM.
func selfSigned(t testing.TB, certFile, keyFile string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPEM
}
