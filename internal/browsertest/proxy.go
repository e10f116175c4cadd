package browsertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Proxy is an HTTP proxy that Chromium sends every request through, from
// the page and from its workers, to any address, loopback included: the
// test's view of what leaves the page. It forwards plain HTTP and
// records each request with the bytes of its body; it refuses CONNECT
// (HTTPS, WebSockets), recording the attempt.
type Proxy struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []Request
}

// Request is one request the browser made.
type Request struct {
	Method, URL string
	// BodyBytes is how many bytes the request's body had.
	BodyBytes int64
}

// NewProxy starts a Proxy, stopped when the test ends.
func NewProxy(t testing.TB) *Proxy {
	p := &Proxy{}
	direct := &http.Transport{Proxy: nil}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Method: r.Method, URL: r.URL.String()}
		if r.Method == http.MethodConnect {
			rec.URL = r.Host
			p.add(rec)
			http.Error(w, "the test proxy tunnels nothing", http.StatusForbidden)
			return
		}
		body := &countingBody{r: r.Body}
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.Body = body
		resp, err := direct.RoundTrip(out)
		rec.BodyBytes = body.n
		if err == nil {
			// A body the server did not read still left the page.
			n, _ := io.Copy(io.Discard, r.Body)
			rec.BodyBytes += n
		}
		p.add(rec)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *Proxy) add(r Request) {
	p.mu.Lock()
	p.log = append(p.log, r)
	p.mu.Unlock()
}

// Requests returns the requests so far.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.log...)
}

type countingBody struct {
	r io.ReadCloser
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingBody) Close() error { return c.r.Close() }
