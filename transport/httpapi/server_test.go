package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/transport/httpapi"
)

// limitedServer serves e's handler under lim on 127.0.0.1.
func limitedServer(t *testing.T, e *env, lim httpapi.ServerLimits) (*httpapi.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(e.srv.Config.Handler, lim, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// dialFrom connects to addr from a loopback source address, which stands
// for another client address (Linux routes all of 127.0.0.0/8 to lo).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func clientFrom(src string) *http.Client {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestSlowBodies is the acceptance test of the body timeout: 200
// connections that send a body far slower than the minimum rate (most
// stall after the first byte, some trickle one byte every 100 ms, which
// an idle timeout would never cut) are all closed within the body timeout,
// while normal requests from another address keep answering as fast as
// they did before the slow connections came: the slowest no slower than
// four times the slowest of the same requests measured just before on the
// same machine, and under half the body timeout, which a starved request
// would wait for.
func TestSlowBodies(t *testing.T) {
	e := newEnv(t)
	const bodyTimeout = time.Second
	_, addr := limitedServer(t, e, httpapi.ServerLimits{BodyTimeout: bodyTimeout, MinBodyRate: 1000, MaxAnonConnsPerIP: -1})
	keep := clientFrom("127.0.0.2")
	healthz := func(reqs int) time.Duration {
		t.Helper()
		c := keep
		if reqs%4 == 3 {
			c = clientFrom("127.0.0.2")
		}
		start := time.Now()
		resp, err := c.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("healthz: %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	// The same requests, at the same pace, alone first.
	var before time.Duration
	for i := range 100 {
		before = max(before, healthz(i))
		time.Sleep(5 * time.Millisecond)
	}

	const n = 200
	type slow struct {
		c      net.Conn
		opened time.Time
	}
	conns := make([]slow, n)
	for i := range conns {
		path := "/oauth2/token/"
		if i%2 == 1 {
			path = "/account/login/"
		}
		c := dialFrom(t, "127.0.0.1", addr)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nu", path)
		conns[i] = slow{c, time.Now()}
	}
	// Some trickle on.
	stop := make(chan struct{})
	var trickle sync.WaitGroup
	trickle.Go(func() {
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			for _, s := range conns[:20] {
				s.c.Write([]byte("x"))
			}
		}
	})
	closed := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i, s := range conns {
		wg.Go(func() {
			s.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, s.c) // until the server closes
			closed[i] = time.Since(s.opened)
		})
	}
	allClosed := make(chan struct{})
	go func() { wg.Wait(); close(allClosed) }()

	// Normal requests from another address meanwhile, on kept-alive and
	// on new connections.
	var worst time.Duration
	reqs := 0
	deadline := time.After(10 * time.Second)
	pace := time.NewTicker(5 * time.Millisecond) // a steady load, not a flood of our own
	defer pace.Stop()
loop:
	for {
		select {
		case <-allClosed:
			break loop
		case <-deadline:
			t.Fatal("slow connections still open after 10 s")
		case <-pace.C:
		}
		worst = max(worst, healthz(reqs))
		reqs++
	}
	close(stop)
	trickle.Wait()
	var last time.Duration
	for _, d := range closed {
		last = max(last, d)
	}
	t.Logf("%d slow-body connections closed after at most %v (body timeout %v); %d normal requests meanwhile, slowest %v (alone before: %v)",
		n, last.Round(time.Millisecond), bodyTimeout, reqs, worst.Round(time.Millisecond), before.Round(time.Millisecond))
	// Within twice the body timeout: a connection the timeout missed stays
	// open until its 10 s read deadline, and on a two-core machine at a
	// load of 25 the last of the 200 closings was read 1.54 s after its
	// connection opened (the bound was the timeout + 0.5 s).
	if last > 2*bodyTimeout {
		t.Errorf("a slow connection stayed open %v, body timeout %v", last, bodyTimeout)
	}
	// A starved request waits for the slow connections' body timeout:
	// within half of it, and within four times the slowest alone (a
	// machine slow for everyone), none was.
	if limit := max(4*before, bodyTimeout/2); worst > limit {
		t.Errorf("slowest normal request %v beside the slow connections, %v alone: want within %v", worst, before, limit)
	}
	if reqs < 5 {
		t.Errorf("only %d normal requests", reqs)
	}
}

// TestFastBodyNotCut: a body that keeps the minimum rate is read whole,
// however long after the body timeout it ends.
func TestFastBodyNotCut(t *testing.T) {
	e := newEnv(t)
	// A grace of 200 ms and 1 KiB/s: a 4 KiB body sent in 80 pieces 20 ms
	// apart (2.5 KiB/s) takes 1.6 s, eight times the grace, and stays at
	// least 180 ms ahead of its allowance of 200 ms + 1 ms per byte (more
	// as it goes), so a loaded machine's late ticks do not make it late.
	_, addr := limitedServer(t, e, httpapi.ServerLimits{BodyTimeout: 200 * time.Millisecond, MinBodyRate: 1 << 10})
	c := dialFrom(t, "127.0.0.1", addr)
	body := "username=alice&password=" + strings.Repeat("x", 4096)
	fmt.Fprintf(c, "POST /account/login/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", len(body))
	tk := time.NewTicker(20 * time.Millisecond)
	defer tk.Stop()
	for i := 0; i < len(body); i += len(body)/80 + 1 {
		<-tk.C
		io.WriteString(c, body[i:min(len(body), i+len(body)/80+1)])
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The form was read whole: the login page answers about the missing
	// CSRF token (403), not about a form that does not parse (400).
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("body at the minimum rate: %d", resp.StatusCode)
	}
}

// TestContentLengthRefused: a Content-Length above the limit is refused
// with 413 before any of the body is sent.
func TestContentLengthRefused(t *testing.T) {
	e := newEnv(t)
	_, addr := limitedServer(t, e, httpapi.ServerLimits{})
	for _, path := range []string{"/api/production/x/upload.json", "/account/login/"} {
		c := dialFrom(t, "127.0.0.1", addr)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n",
			path, e.keyA, int64(3)<<30)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s with a 3 GiB Content-Length: %d", path, resp.StatusCode)
		}
	}
}

// TestAnonConnCap: one address holds at most MaxAnonConnsPerIP connections
// that have not authenticated; further ones get 503 at once, other
// addresses are not affected, and authenticated connections do not count.
func TestAnonConnCap(t *testing.T) {
	e := newEnv(t)
	srv, addr := limitedServer(t, e, httpapi.ServerLimits{MaxAnonConnsPerIP: 3, CapLoopback: true})
	for range 3 {
		dialFrom(t, "127.0.0.1", addr).Write([]byte("GET /healthz HTTP/1.1\r\n")) // headers never finished
	}
	refused := func(c net.Conn) bool {
		t.Helper()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}
	if !refused(dialFrom(t, "127.0.0.1", addr)) {
		t.Error("4th anonymous connection from one address accepted")
	}
	if refused(dialFrom(t, "127.0.0.2", addr)) {
		t.Error("another address refused")
	}
	if srv.Refused() != 1 {
		t.Errorf("Refused() = %d", srv.Refused())
	}
	// Without CapLoopback, loopback (this machine, a local reverse proxy)
	// is not capped.
	_, addr2 := limitedServer(t, e, httpapi.ServerLimits{MaxAnonConnsPerIP: 1})
	dialFrom(t, "127.0.0.1", addr2).Write([]byte("GET /healthz HTTP/1.1\r\n"))
	if refused(dialFrom(t, "127.0.0.1", addr2)) {
		t.Error("loopback capped without CapLoopback")
	}

	// From 127.0.0.3: three connections that authenticated stay open and
	// do not count; three anonymous ones still fit.
	ctx := context.Background()
	for range 3 {
		c := dialFrom(t, "127.0.0.3", addr)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/api/user.json", nil)
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Write(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("authenticated request: %d", resp.StatusCode)
		}
	}
	for range 3 {
		if refused(dialFrom(t, "127.0.0.3", addr)) {
			t.Error("anonymous connection refused next to authenticated ones")
		}
	}
}
