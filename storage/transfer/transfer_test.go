package transfer_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob/s3test"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// TestMain stops the S3 server of the s3 tests.
func TestMain(m *testing.M) { s3test.Main(m) }

// countingDial counts the connections made through Options.Dial.
func countingDial(n *atomic.Int64) func(context.Context, string, string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		return d.DialContext(ctx, network, addr)
	}
}

// failingReader yields limit random bytes, then an error.
type failingReader struct{ left int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errors.New("source broke")
	}
	n := min(len(p), r.left)
	rand.Read(p[:n])
	r.left -= n
	return n, nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func readRemote(t *testing.T, c transfer.Conn, name string) []byte {
	t.Helper()
	rc, err := c.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open %s: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

func names(es []transfer.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestProtocols(t *testing.T) {
	for _, proto := range []string{"ftp", "ftps", "sftp", "webdav", "s3"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			srv := transfertest.Start(t, proto)
			ctx := context.Background()
			os.WriteFile(filepath.Join(srv.Dir, "b show.mp3"), []byte("second file"), 0o644)
			os.WriteFile(filepath.Join(srv.Dir, "a.wav"), []byte("first"), 0o644)
			os.Mkdir(filepath.Join(srv.Dir, "sub"), 0o755)
			os.WriteFile(filepath.Join(srv.Dir, "sub", "hidden.wav"), []byte("x"), 0o644)

			var dials atomic.Int64
			opt := transfer.Options{Dial: countingDial(&dials)}
			if srv.CertPEM != nil {
				roots := x509.NewCertPool()
				roots.AppendCertsFromPEM(srv.CertPEM)
				opt.TLSConfig = &tls.Config{RootCAs: roots}
			}
			svc := srv.Service("u1", map[string]any{"base_url": "https://files.example.org/pod/"})
			c, err := transfer.Open(ctx, svc, opt)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer c.Close()
			if dials.Load() == 0 {
				t.Errorf("no connection went through Options.Dial")
			}

			es, err := c.List(ctx)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if got := names(es); !slices.Equal(got, []string{"a.wav", "b show.mp3"}) {
				t.Errorf("List = %q, want the two files, sorted, no directory", got)
			}
			for _, e := range es {
				if want := map[string]int64{"a.wav": 5, "b show.mp3": 11}[e.Name]; e.Size != want {
					t.Errorf("%s: size %d, want %d", e.Name, e.Size, want)
				}
			}
			if got := readRemote(t, c, "b show.mp3"); string(got) != "second file" {
				t.Errorf("Open read %q", got)
			}
			if _, err := c.Open(ctx, "missing.wav"); !errors.Is(err, transfer.ErrNotFound) {
				t.Errorf("Open(missing) = %v, want ErrNotFound", err)
			}

			payload := make([]byte, 1<<20)
			rand.Read(payload)
			if err := c.Put(ctx, "out put.flac", bytes.NewReader(payload)); err != nil {
				t.Fatalf("Put: %v", err)
			}
			if got := readRemote(t, c, "out put.flac"); !bytes.Equal(got, payload) {
				t.Errorf("read back %d bytes, differ from the %d put", len(got), len(payload))
			}
			if onDisk, _ := os.ReadFile(filepath.Join(srv.Dir, "out put.flac")); !bytes.Equal(onDisk, payload) {
				t.Errorf("the server's file differs from the payload")
			}
			// Put overwrites.
			if err := c.Put(ctx, "out put.flac", strings.NewReader("v2")); err != nil {
				t.Fatalf("Put again: %v", err)
			}
			if got := readRemote(t, c, "out put.flac"); string(got) != "v2" {
				t.Errorf("overwritten file reads %q", got)
			}

			// An empty file (over FTPS the TLS handshake then happens
			// without any write).
			if err := c.Put(ctx, "empty.txt", strings.NewReader("")); err != nil {
				t.Fatalf("Put empty: %v", err)
			}
			if got := readRemote(t, c, "empty.txt"); len(got) != 0 {
				t.Errorf("empty file reads %q", got)
			}

			// A transfer that breaks leaves nothing under any name.
			if err := c.Put(ctx, "broken.mp3", &failingReader{left: 300 << 10}); err == nil {
				t.Errorf("Put from a failing reader succeeded")
			}
			// So does one whose context is cancelled halfway.
			cctx, cancel := context.WithCancel(ctx)
			cancelling := io.MultiReader(io.LimitReader(rand.Reader, 200<<10), readerFunc(func([]byte) (int, error) {
				cancel()
				return 0, context.Canceled
			}), io.LimitReader(rand.Reader, 200<<10))
			if err := c.Put(cctx, "cancelled.mp3", cancelling); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled Put: %v, want context.Canceled", err)
			}
			c.Close()
			c, err = transfer.Open(ctx, svc, opt)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer c.Close()
			es, _ = c.List(ctx)
			if got := names(es); !slices.Equal(got, []string{"a.wav", "b show.mp3", "empty.txt", "out put.flac"}) {
				t.Errorf("after a failed Put, List = %q", got)
			}
			ents, _ := os.ReadDir(srv.Dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), "broken") || strings.Contains(e.Name(), "cancelled") || strings.HasSuffix(e.Name(), ".part") {
					t.Errorf("left on the server: %s", e.Name())
				}
			}

			for _, bad := range []string{"../x", "a/b", "", "..", "a\\b"} {
				if _, err := c.Open(ctx, bad); !errors.Is(err, transfer.ErrName) {
					t.Errorf("Open(%q) = %v, want ErrName", bad, err)
				}
				if err := c.Put(ctx, bad, strings.NewReader("x")); !errors.Is(err, transfer.ErrName) {
					t.Errorf("Put(%q) = %v, want ErrName", bad, err)
				}
			}
			if u := c.URL("a b.mp3"); u != "https://files.example.org/pod/a%20b.mp3" {
				t.Errorf("URL = %q", u)
			}

			wrong := srv.Service("u1", map[string]any{"password": "wrong"})
			if _, err := transfer.Open(ctx, wrong, opt); !errors.Is(err, transfer.ErrAuth) {
				t.Errorf("wrong password: %v, want ErrAuth", err)
			}
		})
	}
}

// The SFTP host key can be pinned: the right fingerprint connects, a
// wrong one is refused before logging in.
func TestSFTPHostKey(t *testing.T) {
	srv := transfertest.Start(t, "sftp")
	ctx := context.Background()
	var seen string
	if _, err := transfer.Open(ctx, srv.Service("u", map[string]any{"host_key": "SHA256:wrong"}), transfer.Options{}); !errors.Is(err, transfer.ErrHostKey) {
		t.Fatalf("wrong host_key: %v, want ErrHostKey", err)
	} else if i := strings.Index(err.Error(), "server has "); i >= 0 {
		seen = strings.TrimSuffix(strings.Fields(err.Error()[i+len("server has "):])[0], ",")
	}
	if !strings.HasPrefix(seen, "SHA256:") {
		t.Fatalf("error does not name the server's key: %q", seen)
	}
	c, err := transfer.Open(ctx, srv.Service("u", map[string]any{"host_key": seen}), transfer.Options{})
	if err != nil {
		t.Fatalf("pinned host_key %s: %v", seen, err)
	}
	c.Close()
}

// TestWebDAVIPv6 runs a WebDAV service at an IPv6 literal, the real
// rclone server on [::1]: listing, uploading (a PUT and a MOVE whose
// Destination names the host), downloading and the file's URL all work.
// gowebdav alone escaped the host into "%5B::1%5D", which does not parse
// ("invalid port").
func TestWebDAVIPv6(t *testing.T) {
	srv := transfertest.StartAt(t, "webdav", "::1")
	ctx := context.Background()
	svc := srv.Service("u", nil)
	if !strings.Contains(string(svc.Config), "http://[::1]:") {
		t.Fatalf("service config %s names no IPv6 literal", svc.Config)
	}
	var dials atomic.Int64
	c, err := transfer.Open(ctx, svc, transfer.Options{Dial: countingDial(&dials)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	if err := c.Put(ctx, "episode 1.mp3", strings.NewReader("audio bytes")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	es, err := c.List(ctx)
	if err != nil || len(es) != 1 || es[0].Name != "episode 1.mp3" {
		t.Fatalf("List = %v, %v", es, err)
	}
	if got := readRemote(t, c, "episode 1.mp3"); string(got) != "audio bytes" {
		t.Errorf("read back %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(srv.Dir, "episode 1.mp3")); err != nil || string(b) != "audio bytes" {
		t.Errorf("on the server: %q, %v", b, err)
	}
	if u := c.URL("episode 1.mp3"); !strings.HasPrefix(u, "http://[::1]:") || !strings.HasSuffix(u, "/episode%201.mp3") {
		t.Errorf("URL = %q", u)
	}
	if dials.Load() == 0 {
		t.Error("no connection went through Options.Dial")
	}
}

// A WebDAV service without an HTTPClient dials through Options.Dial.
func TestWebDAVUsesDial(t *testing.T) {
	srv := transfertest.Start(t, "webdav")
	var dials atomic.Int64
	c, err := transfer.Open(context.Background(), srv.Service("u", nil), transfer.Options{Dial: countingDial(&dials)})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if dials.Load() == 0 {
		t.Errorf("WebDAV did not dial through Options.Dial")
	}
}

// A dial that refuses (as the server's SSRF policy does) stops every
// protocol before any exchange.
func TestRefusingDial(t *testing.T) {
	refused := errors.New("forbidden address")
	opt := transfer.Options{Dial: func(context.Context, string, string) (net.Conn, error) { return nil, refused }}
	for _, svc := range []storage.Service{
		{Type: "ftp", Config: []byte(`{"host":"127.0.0.1","tls":false}`)},
		{Type: "sftp", Config: []byte(`{"host":"127.0.0.1"}`)},
		{Type: "webdav", Config: []byte(`{"url":"http://127.0.0.1:1/dav/"}`)},
		{Type: "s3", Config: []byte(`{"endpoint":"http://127.0.0.1:1","bucket":"b.c"}`)},
	} {
		if _, err := transfer.Open(context.Background(), svc, opt); !errors.Is(err, refused) {
			t.Errorf("%s: %v, want the dial's error", svc.Type, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		typ, cfg, field string
	}{
		{"ftp", `{}`, "host"},
		{"sftp", `{"host":"h","port":"70000"}`, "port"},
		{"sftp", `{"host":"h","port":"x"}`, "port"},
		{"ftp", `{"host":"h","permissions":"9"}`, "permissions"},
		{"ftp", `{"host":"h","tls":"maybe"}`, "tls"},
		{"webdav", `{"url":"ftp://x/"}`, "url"},
		{"sftp", `{"host":"h","private_key":"not a key"}`, "private_key"},
		{"ftp", `[1,2]`, "JSON"},
		{"s3", `{}`, "bucket"},
		{"s3", `{"bucket":"UPPER"}`, "bucket"},
		{"s3", `{"bucket":"b.c","canned_acl":"world"}`, "canned_acl"},
		{"s3", `{"bucket":"b.c","endpoint":"ftp://x"}`, "endpoint"},
		{"s3", `{"bucket":"b.c","endpoint":"x/y"}`, "endpoint"},
		{"s3", `{"bucket":"b.c","key_prefix":"a/../b"}`, "key_prefix"},
	} {
		_, err := transfer.Open(context.Background(), storage.Service{Type: tc.typ, Config: []byte(tc.cfg)},
			transfer.Options{Dial: func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("no dial expected") }})
		if !errors.Is(err, transfer.ErrConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s %s: %v, want ErrConfig naming %s", tc.typ, tc.cfg, err, tc.field)
		}
	}
	// Ports as numbers and strings, booleans as strings.
	for _, cfg := range []string{`{"host":"h","port":2121,"tls":false}`, `{"host":"h","port":"2121","tls":"false"}`} {
		_, err := transfer.Open(context.Background(), storage.Service{Type: "ftp", Config: []byte(cfg)},
			transfer.Options{Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
				if addr != "h:2121" {
					t.Errorf("%s dialed %s", cfg, addr)
				}
				return nil, errors.New("stop here")
			}})
		if err == nil || errors.Is(err, transfer.ErrConfig) {
			t.Errorf("%s: %v", cfg, err)
		}
	}
	for _, typ := range []string{"http", "gopher"} {
		if transfer.Supported(typ) {
			t.Errorf("Supported(%s)", typ)
		}
		if _, err := transfer.Open(context.Background(), storage.Service{Type: typ, Config: []byte(`{}`)}, transfer.Options{}); !errors.Is(err, transfer.ErrUnsupportedType) {
			t.Errorf("%s: %v, want ErrUnsupportedType", typ, err)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("ftp", []byte(`{"host":"h","port":"21","tls":true,"permissions":"644"}`))
	f.Add("webdav", []byte(`{"url":"https://x/dav/"}`))
	f.Add("sftp", []byte(`{"host":"h","private_key":"-----BEGIN"}`))
	f.Fuzz(func(t *testing.T, typ string, cfg []byte) {
		refuse := transfer.Options{Dial: func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("refused") }}
		transfer.Open(context.Background(), storage.Service{Type: typ, Config: cfg}, refuse)
	})
}

// S3: the key prefix is the directory, a failed upload leaves no
// incomplete multipart upload, and a public-read object's URL is its own.
func TestS3PrefixACLAndURL(t *testing.T) {
	srv := transfertest.Start(t, "s3")
	ctx := context.Background()
	os.MkdirAll(filepath.Join(srv.Dir, "shows", "pod"), 0o755)
	os.WriteFile(filepath.Join(srv.Dir, "shows", "pod", "in.wav"), []byte("input"), 0o644)
	os.WriteFile(filepath.Join(srv.Dir, "shows", "other.wav"), []byte("not in the prefix"), 0o644)

	c, err := transfer.Open(ctx, srv.Service("u", map[string]any{"key_prefix": "/shows/pod", "canned_acl": "public-read"}), transfer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	es, err := c.List(ctx)
	if err != nil || !slices.Equal(names(es), []string{"in.wav"}) {
		t.Fatalf("List = %q, %v", names(es), err)
	}
	if got := readRemote(t, c, "in.wav"); string(got) != "input" {
		t.Errorf("read %q", got)
	}
	if err := c.Put(ctx, "out.mp3", strings.NewReader("output")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(srv.Dir, "shows", "pod", "out.mp3")); err != nil || string(b) != "output" {
		t.Errorf("on the server: %q, %v", b, err)
	}
	// (Whether the object then is readable by anyone is the bucket's
	// policy: versitygw, for one, keeps objects private whatever their
	// ACL. The URL is what the spec's result_urls hold.)
	u := c.URL("out.mp3")
	if u != "http://"+srv.Addr+"/"+srv.Bucket+"/shows/pod/out.mp3" {
		t.Errorf("URL = %q", u)
	}

	// A failed upload of more than a part leaves no multipart upload.
	if err := c.Put(ctx, "broken.mp3", &failingReader{left: 9 << 20}); err == nil {
		t.Error("Put from a failing reader succeeded")
	}
	for up := range srv.S3.Client().ListIncompleteUploads(ctx, srv.Bucket, "", true) {
		t.Errorf("incomplete upload left: %+v", up)
	}

	// Private (the default): no URL without base_url.
	p, err := transfer.Open(ctx, srv.Service("u", nil), transfer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := p.URL("x.mp3"); u != "" {
		t.Errorf("private URL = %q", u)
	}
	p.Close()
	missing := srv.Service("u", map[string]any{"bucket": "no-such-bucket"})
	if _, err := transfer.Open(ctx, missing, transfer.Options{}); !errors.Is(err, transfer.ErrConfig) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing bucket: %v", err)
	}
}
