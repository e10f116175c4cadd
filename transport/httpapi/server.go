package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// ServerLimits bound what one client can hold of a server: every phase
// of a request has a timeout, request bodies must keep a minimum rate,
// and one address may keep only so many connections open before it has
// authenticated. NewServer applies them; zero fields take the defaults.
type ServerLimits struct {
	// HeaderTimeout bounds reading a request's line and headers (default
	// 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout and MinBodyRate bound reading a request body: it must
	// arrive by BodyTimeout plus its length at MinBodyRate, counted from
	// when the handler starts, so a body that trickles in (one byte every
	// few seconds) is cut off after about BodyTimeout however long it
	// claims to be, and a large upload gets all the time its size needs
	// at the minimum rate. Defaults 20 s and 4 KiB/s (32 kbit/s, slower
	// than any real uplink; a 2 GiB upload may take up to six days).
	BodyTimeout time.Duration
	MinBodyRate int64
	// WriteTimeout bounds each write of a response: a client that stops
	// reading is cut off after it, however long the download (default
	// 60 s).
	WriteTimeout time.Duration
	// IdleTimeout bounds waiting for the next request on a kept-alive
	// connection (default 60 s).
	IdleTimeout time.Duration
	// MaxAnonConnsPerIP bounds the connections one client address holds
	// open before any of their requests authenticated (default 32; a
	// browser opens at most 6 per host). Further connections from that
	// address get 503 and are closed at once. Connections whose requests
	// authenticated (API credentials or a browser session) do not count.
	// Loopback addresses are exempt unless CapLoopback is set: they are
	// this machine's own processes, and a reverse proxy on the same
	// machine, whose address every client shares. A proxy on another
	// machine needs the cap raised, or -1 (no cap) and its own limits.
	MaxAnonConnsPerIP int
	CapLoopback       bool
	// MaxBodyBytes refuses a request whose Content-Length is larger with
	// 413 before reading any of it (default DefaultMaxUploadBytes).
	MaxBodyBytes int64
	// Now is the clock of the body deadlines (default time.Now).
	Now func() time.Time
}

// Defaults of ServerLimits.
const (
	DefaultHeaderTimeout     = 10 * time.Second
	DefaultBodyTimeout       = 20 * time.Second
	DefaultMinBodyRate       = 4 << 10
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxAnonConnsPerIP = 32
)

func (l *ServerLimits) defaults() {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = DefaultHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxAnonConnsPerIP == 0 {
		l.MaxAnonConnsPerIP = DefaultMaxAnonConnsPerIP
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxUploadBytes
	}
	if l.Now == nil {
		l.Now = time.Now
	}
}

// Server is an http.Server with ServerLimits.
type Server struct {
	*http.Server
	lim   ServerLimits
	mu    sync.Mutex
	anon  map[string]int // open unauthenticated connections per address
	log   *slog.Logger
	refus atomic.Int64
}

// NewServer returns a server of h under lim. Serve it with Server.Serve
// (not ListenAndServe), which applies the connection limits; Shutdown and
// Close are those of http.Server.
func NewServer(h http.Handler, lim ServerLimits, log *slog.Logger) *Server {
	lim.defaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{lim: lim, anon: map[string]int{}, log: log}
	s.Server = &http.Server{
		Handler:           s.limitBody(h),
		ReadHeaderTimeout: lim.HeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		// No ReadTimeout or WriteTimeout: they would bound whole uploads
		// and downloads. The body deadline (limitBody) and the per-write
		// deadline (limitConn) take their place.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			// Only capped connections carry the hook.
			if lc, ok := c.(*limitConn); ok {
				return auth.WithAuthHook(ctx, lc.authenticated)
			}
			return ctx
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Serve accepts connections on ln under the limits.
func (s *Server) Serve(ln net.Listener) error {
	return s.Server.Serve(&limitListener{Listener: ln, s: s})
}

// Refused reports how many connections the per-address cap refused.
func (s *Server) Refused() int64 { return s.refus.Load() }

type limitListener struct {
	net.Listener
	s *Server
}

// Accept returns the next connection within the per-address cap; those
// over it get a short 503 and are closed here.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip, loopback := remoteIP(c.RemoteAddr())
		if loopback && !l.s.lim.CapLoopback {
			return c, nil
		}
		if !l.s.take(ip) {
			l.s.refuse(c, ip)
			continue
		}
		return &limitConn{Conn: c, s: l.s, ip: ip}, nil
	}
}

func remoteIP(a net.Addr) (ip string, loopback bool) {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String(), ta.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), false
	}
	return host, false
}

func (s *Server) take(ip string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lim.MaxAnonConnsPerIP > 0 && s.anon[ip] >= s.lim.MaxAnonConnsPerIP {
		return false
	}
	s.anon[ip]++
	return true
}

func (s *Server) release(ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.anon[ip]--; s.anon[ip] <= 0 {
		delete(s.anon, ip)
	}
}

const refusedResponse = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 10\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 58\r\n\r\n" +
	"too many connections from your address; try again later\r\n"

// refuse answers a connection over the cap without reading from it, in
// the background so that a client that does not read cannot hold Accept.
func (s *Server) refuse(c net.Conn, ip string) {
	if n := s.refus.Add(1); n == 1 || n%1000 == 0 {
		s.log.Warn("httpapi: refusing connections over the per-address cap", "addr", ip,
			"cap", s.lim.MaxAnonConnsPerIP, "refused_so_far", n)
	}
	go func() {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(c, refusedResponse)
		c.Close()
	}()
}

// limitConn is an accepted connection: it leaves the address's count of
// anonymous connections when it closes or authenticates, and gives every
// write WriteTimeout.
type limitConn struct {
	net.Conn
	s      *Server
	ip     string
	done   atomic.Bool // left the count
	closed sync.Once
}

func (c *limitConn) authenticated() {
	if c.done.CompareAndSwap(false, true) {
		c.s.release(c.ip)
	}
}

func (c *limitConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.s.lim.WriteTimeout))
	return c.Conn.Write(p)
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(c.authenticated)
	return err
}

// CloseWrite lets net/http half-close the connection after a refused
// body, as it does on a plain TCP connection.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// limitBody refuses bodies declared larger than MaxBodyBytes and puts
// the minimum-rate deadline on the others.
func (s *Server) limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.lim.MaxBodyBytes {
			w.Header().Set("Connection", "close")
			code := CodeTooLarge
			envelope.Write(w, http.StatusRequestEntityTooLarge, &envelope.Envelope{ErrorCode: &code,
				ErrorMessage: "the request body (" + strconv.FormatInt(r.ContentLength, 10) + " bytes) is larger than the server's limit of " +
					strconv.FormatInt(s.lim.MaxBodyBytes, 10) + " bytes"})
			return
		}
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			b := &rateBody{rc: r.Body, ctl: http.NewResponseController(w), lim: &s.lim, start: s.lim.Now()}
			b.extend()
			r.Body = b
		}
		h.ServeHTTP(w, r)
	})
}

// rateBody sets the connection's read deadline to start + BodyTimeout +
// (bytes read so far) / MinBodyRate as the body arrives, and clears it at
// the end of the body (net/http then reads on in the background to notice
// a client that went away, which a deadline would turn into a cancel).
type rateBody struct {
	rc    io.ReadCloser
	ctl   *http.ResponseController
	lim   *ServerLimits
	start time.Time
	n     int64
	eof   bool
}

func (b *rateBody) extend() {
	d := b.lim.BodyTimeout + time.Duration(float64(b.n)/float64(b.lim.MinBodyRate)*float64(time.Second))
	b.ctl.SetReadDeadline(b.start.Add(d))
}

func (b *rateBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	switch {
	case b.eof:
	case errors.Is(err, io.EOF):
		b.eof = true
		b.ctl.SetReadDeadline(time.Time{})
	case n > 0:
		b.extend()
	}
	return n, err
}

func (b *rateBody) Close() error { return b.rc.Close() }
