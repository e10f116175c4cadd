package outbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		ip   string
		want Class
	}{
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"2606:4700:4700::1111", Public},
		{"::ffff:8.8.8.8", Public},
		{"64:ff9b::808:808", Public},
		{"127.0.0.1", Loopback},
		{"127.255.255.254", Loopback},
		{"::1", Loopback},
		{"::ffff:127.0.0.1", Loopback},
		{"64:ff9b::7f00:1", Loopback},
		{"2002:7f00:1::", Loopback},
		{"10.0.0.1", Private},
		{"10.255.255.255", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"172.32.0.1", Public},
		{"172.15.255.255", Public},
		{"192.168.1.1", Private},
		{"::ffff:192.168.1.1", Private},
		{"::ffff:10.1.2.3", Private},
		{"fc00::1", Private},
		{"fd12:3456::1", Private},
		{"fec0::1", Private},
		{"100.64.0.1", Private},
		{"100.127.255.255", Private},
		{"100.128.0.1", Public},
		{"198.18.0.1", Private},
		{"64:ff9b:1::1", Private},
		{"169.254.169.254", LinkLocal},
		{"::ffff:169.254.169.254", LinkLocal},
		{"fe80::1", LinkLocal},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"::", Unspecified},
		{"::ffff:0.0.0.0", Unspecified},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"255.255.255.255", Multicast},
		{"ff02::1", Multicast},
		{"::ffff:224.0.0.1", Multicast},
		{"192.0.2.1", Reserved},
		{"198.51.100.7", Reserved},
		{"203.0.113.9", Reserved},
		{"240.0.0.1", Reserved},
		{"2001:db8::1", Reserved},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", Reserved},
		{"::127.0.0.1", Reserved},
		{"::ffff:0:7f00:1", Reserved},
		{"fe80::1%eth0", Reserved},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.ip)
		if got := Classify(ip); got != c.want {
			t.Errorf("Classify(%s) = %s, want %s", c.ip, got, c.want)
		}
	}
	if got := Classify(netip.Addr{}); got != Reserved {
		t.Errorf("Classify(invalid) = %s", got)
	}
}

func TestConfigCheck(t *testing.T) {
	type want struct{ def, loop, priv, link bool }
	cases := map[string]want{
		"8.8.8.8":         {true, true, true, true},
		"127.0.0.1":       {false, true, false, false},
		"::1":             {false, true, false, false},
		"10.0.0.1":        {false, false, true, false},
		"100.64.1.1":      {false, false, true, false},
		"fd00::1":         {false, false, true, false},
		"169.254.169.254": {false, false, false, true},
		"fe80::1":         {false, false, false, true},
		"0.0.0.0":         {false, false, false, false},
		"::":              {false, false, false, false},
		"224.0.0.1":       {false, false, false, false},
		"ff02::1":         {false, false, false, false},
		"240.0.0.1":       {false, false, false, false},
	}
	for s, w := range cases {
		ip := netip.MustParseAddr(s)
		for _, c := range []struct {
			cfg  Config
			want bool
		}{
			{Config{}, w.def},
			{Config{AllowLoopback: true}, w.loop},
			{Config{AllowPrivate: true}, w.priv},
			{Config{AllowLinkLocal: true}, w.link},
		} {
			err := c.cfg.Check(ip)
			if (err == nil) != c.want {
				t.Errorf("%+v.Check(%s) = %v, want allowed %v", c.cfg, s, err, c.want)
			}
			if err != nil && !errors.Is(err, ErrForbiddenAddress) {
				t.Errorf("Check(%s) error %v is not ErrForbiddenAddress", s, err)
			}
			if c.cfg.Allowed(ip) != c.want {
				t.Errorf("%+v.Allowed(%s) != %v", c.cfg, s, c.want)
			}
		}
	}
}

// countingServer counts requests; any request reaching it from a client
// that should have refused is a failure.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestFetchRefusesForbiddenAddresses(t *testing.T) {
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c := New(Config{Timeout: 5 * time.Second})
	urls := []string{
		srv.URL, // 127.0.0.1
		fmt.Sprintf("http://localhost:%d/", port), // only the dialer sees the address
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://[::1]:9/",
		"http://10.0.0.1:9/",
		"http://172.16.5.4:9/",
		"http://192.168.0.1:9/",
		"http://[fd00::1]:9/",
		"http://100.64.0.1:9/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://[fe80::1%25lo]:9/",
		"http://0.0.0.0:9/",
		"http://[::]:9/",
		"http://224.0.0.1:9/",
		"http://[ff02::1]:9/",
		"https://192.168.1.1/",
	}
	for _, u := range urls {
		var buf bytes.Buffer
		_, _, _, err := c.Fetch(context.Background(), u, &buf)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("Fetch(%s) = %v, want ErrForbiddenAddress", u, err)
		}
		if buf.Len() != 0 {
			t.Errorf("Fetch(%s) wrote %q", u, buf.String())
		}
	}
	// Shorthand IPv4 forms that some resolvers accept: Go's does not
	// resolve them, and if one ever did the dialer would refuse it.
	for _, u := range []string{fmt.Sprintf("http://127.1:%d/", port), fmt.Sprintf("http://2130706433:%d/", port)} {
		if _, _, _, err := c.Fetch(context.Background(), u, &bytes.Buffer{}); err == nil {
			t.Errorf("Fetch(%s) succeeded", u)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("refused fetches reached the server %d times", n)
	}
}

// The dialer check is what stops names; prove it works on its own, without
// the literal-IP precheck.
func TestDialerChecksResolvedAddress(t *testing.T) {
	c := New(Config{})
	for _, a := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:10.0.0.1]:80", "169.254.169.254:80", "garbage"} {
		if err := c.control("tcp", a, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("control(%s) = %v", a, err)
		}
	}
	if err := c.control("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control(public) = %v", err)
	}
	allow := New(Config{AllowLoopback: true})
	if err := allow.control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("loopback allowed: control = %v", err)
	}
}

func TestFetchAllowedLoopback(t *testing.T) {
	body := strings.Repeat("RIFF", 1000)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dl":
			w.Header().Set("Content-Type", "audio/wav; charset=binary")
			w.Header().Set("Content-Disposition", `attachment; filename="../../etc/My Show.wav"`)
		case "/utf":
			w.Header().Set("Content-Disposition", `attachment; filename*=UTF-8''%C3%A9pisode%201.mp3`)
		}
		fmt.Fprint(w, body)
	})
	c := New(Config{AllowLoopback: true})
	for _, tc := range []struct{ path, ctype, name string }{
		{"/dl", "audio/wav", "My Show.wav"},
		{"/utf", "text/plain", "épisode 1.mp3"},
		{"/files/ep%2001.flac?x=1", "text/plain", "ep 01.flac"},
		{"/", "text/plain", "download"},
	} {
		var buf bytes.Buffer
		n, ct, name, err := c.Fetch(context.Background(), srv.URL+tc.path, &buf)
		if err != nil {
			t.Fatalf("Fetch(%s): %v", tc.path, err)
		}
		if n != int64(len(body)) || buf.String() != body {
			t.Errorf("Fetch(%s) = %d bytes, want %d", tc.path, n, len(body))
		}
		if ct != tc.ctype || name != tc.name {
			t.Errorf("Fetch(%s) type %q name %q, want %q %q", tc.path, ct, name, tc.ctype, tc.name)
		}
	}
	// localhost resolves to an allowed loopback address now.
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	if _, _, _, err := c.Fetch(context.Background(), fmt.Sprintf("http://localhost:%d/x.wav", port), &bytes.Buffer{}); err != nil {
		t.Errorf("localhost with AllowLoopback: %v", err)
	}
}

func TestFetchStatusError(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	c := New(Config{AllowLoopback: true})
	var buf bytes.Buffer
	_, _, _, err := c.Fetch(context.Background(), srv.URL+"/missing?token=secret", &buf)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("err = %v, want 404 StatusError", err)
	}
	if buf.Len() != 0 {
		t.Errorf("error page written to the destination: %q", buf.String())
	}
}

func TestRedirects(t *testing.T) {
	var target string
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to":
			http.Redirect(w, r, target, http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
			fmt.Fprint(w, "fine")
		}
	})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c := New(Config{AllowLoopback: true, Timeout: 5 * time.Second})
	fetch := func(to string) error {
		target = to
		_, _, _, err := c.Fetch(context.Background(), srv.URL+"/to", &bytes.Buffer{})
		return err
	}
	// The first hop is allowed (loopback allowed); the hop to another class
	// is refused, whether written as a literal or as a mapped address.
	for _, to := range []string{
		"http://10.0.0.1/x",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:192.168.0.1]/",
		"http://0.0.0.0:" + fmt.Sprint(port) + "/ok",
	} {
		if err := fetch(to); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("redirect to %s: %v, want ErrForbiddenAddress", to, err)
		}
	}
	for _, to := range []string{"ftp://example.com/a.wav", "file:///etc/passwd", "gopher://x/"} {
		if err := fetch(to); !errors.Is(err, ErrScheme) {
			t.Errorf("redirect to %s: %v, want ErrScheme", to, err)
		}
	}
	if err := fetch(fmt.Sprintf("http://localhost:%d/ok", port)); err != nil {
		t.Errorf("redirect to allowed loopback: %v", err)
	}
	// Toggling AllowLoopback off refuses the same server.
	strict := New(Config{AllowPrivate: true})
	if _, _, _, err := strict.Fetch(context.Background(), srv.URL+"/ok", &bytes.Buffer{}); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("loopback with AllowPrivate only: %v", err)
	}

	before := hits.Load()
	_, _, _, err := c.Fetch(context.Background(), srv.URL+"/loop", &bytes.Buffer{})
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("redirect loop: %v", err)
	}
	if n := hits.Load() - before; n != DefaultMaxRedirects+1 {
		t.Errorf("redirect loop made %d requests, want %d", n, DefaultMaxRedirects+1)
	}
	none := New(Config{AllowLoopback: true, MaxRedirects: -1})
	if _, _, _, err := none.Fetch(context.Background(), srv.URL+"/loop", &bytes.Buffer{}); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("MaxRedirects -1: %v", err)
	}
}

func TestSizeLimit(t *testing.T) {
	const limit = 1000
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		var size int
		fmt.Sscan(r.URL.Query().Get("n"), &size)
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		data := bytes.Repeat([]byte{'a'}, size)
		for len(data) > 0 { // flush in pieces so no Content-Length is set
			k := min(len(data), 300)
			w.Write(data[:k])
			w.(http.Flusher).Flush()
			data = data[k:]
		}
	})
	c := New(Config{AllowLoopback: true, MaxBytes: limit})
	for _, tc := range []struct {
		query   string
		tooBig  bool
		written int64
	}{
		{"n=1000", false, 1000},
		{"n=1000&chunked=1", false, 1000},
		{"n=1001", true, 0},
		{"n=5000&chunked=1", true, 1000},
		{"n=1001&chunked=1", true, 1000},
	} {
		var buf bytes.Buffer
		n, _, _, err := c.Fetch(context.Background(), srv.URL+"/?"+tc.query, &buf)
		if errors.Is(err, ErrTooLarge) != tc.tooBig {
			t.Errorf("%s: err = %v, want too large %v", tc.query, err, tc.tooBig)
		}
		if n != tc.written || int64(buf.Len()) != tc.written {
			t.Errorf("%s: wrote %d (%d buffered), want %d", tc.query, n, buf.Len(), tc.written)
		}
	}
	// Do applies the limit as well.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/?n=2000", nil)
	if _, err := c.Do(req); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Do over the limit: %v", err)
	}
}

func TestSchemeRefused(t *testing.T) {
	c := New(Config{AllowLoopback: true})
	for _, u := range []string{"ftp://127.0.0.1/a", "file:///etc/passwd", "gopher://127.0.0.1/", "http:///nohost", "/relative", "javascript:alert(1)", "://bad", "http://[::1"} {
		_, _, _, err := c.Fetch(context.Background(), u, &bytes.Buffer{})
		if !errors.Is(err, ErrScheme) {
			t.Errorf("Fetch(%q) = %v, want ErrScheme", u, err)
		}
	}
}

func TestTimeout(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := New(Config{AllowLoopback: true, Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, _, _, err := c.Fetch(context.Background(), srv.URL, &bytes.Buffer{})
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timeout took %v", d)
	}
}

func TestSanitizeFilename(t *testing.T) {
	cases := map[string]string{
		"show.wav":                         "show.wav",
		"../../etc/passwd":                 "passwd",
		`C:\Users\x\a.mp3`:                 "a.mp3",
		"..":                               "",
		".hidden":                          "hidden",
		"a<b>c:d\"e|f?g*.wav":              "a_b_c_d_e_f_g_.wav",
		"tab\there\x00.wav":                "tabhere.wav",
		"line\nbreak.wav":                  "linebreak.wav",
		"bad\xffutf8.wav":                  "badutf8.wav",
		"trailing. . ":                     "trailing",
		"":                                 "",
		"/":                                "",
		strings.Repeat("é", 300) + ".flac": strings.Repeat("é", (maxFilename-5)/2) + ".flac",
	}
	for in, want := range cases {
		if got := SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

// DialContext, for FTP and SFTP, applies the same policy as HTTP.
func TestDialContextPolicy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := New(Config{}).DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("loopback dial by default: %v, want ErrForbiddenAddress", err)
	}
	c, err := New(Config{AllowLoopback: true}).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("loopback allowed: %v", err)
	}
	c.Close()
}
