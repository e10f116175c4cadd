// Package outbound is the one HTTP client for server-side fetches: input
// URLs, webhooks and transfers. Because users choose those URLs, it refuses
// to connect to loopback, private, link-local, unspecified, multicast and
// reserved addresses unless the operator allows them.
//
// The check runs on the resolved IP at dial time, for every connection the
// transport opens (each redirect hop, each Happy Eyeballs attempt), so a
// host name that resolves to 127.0.0.1 (localhost, *.nip.io, a DNS
// rebinding answer) is refused like the literal address. The client never
// uses an HTTP proxy from the environment: a proxy would hide the target's
// address from the check.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/audiopost/audiopost/storage/transfer"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrForbiddenAddress: the URL's host is or resolves to an address
	// class the configuration does not allow (see Classify). It is
	// transfer.ErrForbiddenAddress, so that the application layer,
	// which must not import transport, tells it apart too.
	ErrForbiddenAddress = transfer.ErrForbiddenAddress
	// ErrTooLarge: the response body exceeds Config.MaxBytes
	// (transfer.ErrTooLarge).
	ErrTooLarge = transfer.ErrTooLarge
	// ErrScheme: the URL (or a redirect) is not http or https, or has no host.
	ErrScheme = errors.New("outbound: only absolute http and https URLs are fetched")
	// ErrTooManyRedirects: more redirects than Config.MaxRedirects.
	ErrTooManyRedirects = errors.New("outbound: too many redirects")
)

// Defaults for zero Config fields.
const (
	DefaultTimeout        = 10 * time.Minute
	DefaultConnectTimeout = 10 * time.Second
	DefaultMaxBytes       = 2 << 30
	DefaultMaxRedirects   = 5
	DefaultUserAgent      = "audiopost"
)

// Config is the operator's policy for server-side requests.
type Config struct {
	// AllowLoopback allows 127/8 and ::1 (tests, a local-only setup).
	AllowLoopback bool
	// AllowPrivate allows the Private class: RFC 1918, unique local IPv6,
	// CGNAT and benchmarking ranges (a service on the operator's LAN).
	AllowPrivate bool
	// AllowLinkLocal allows 169.254/16 and fe80::/10. It is separate from
	// AllowPrivate because 169.254.169.254 is where clouds serve instance
	// credentials.
	AllowLinkLocal bool
	// Timeout bounds a whole request, body included (default
	// DefaultTimeout; negative: none beyond the request's context).
	Timeout time.Duration
	// ConnectTimeout bounds each TCP connect and TLS handshake (default
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxBytes limits a response body (default DefaultMaxBytes; negative:
	// no limit).
	MaxBytes int64
	// MaxRedirects is how many redirects are followed (default
	// DefaultMaxRedirects; negative: none).
	MaxRedirects int
	// UserAgent is sent when a request has none (default DefaultUserAgent).
	UserAgent string
}

// Client is a guarded HTTP client. It is safe for concurrent use.
type Client struct {
	cfg  Config
	hc   *http.Client
	dial *net.Dialer
}

// New returns a client enforcing cfg.
func New(cfg Config) *Client {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	} else if cfg.Timeout < 0 {
		cfg.Timeout = 0
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	} else if cfg.MaxRedirects < 0 {
		cfg.MaxRedirects = 0
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	c := &Client{cfg: cfg}
	d := &net.Dialer{
		Timeout:   cfg.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		Control:   c.control,
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ExpectContinueTimeout: time.Second,
	}
	c.hc = &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: c.checkRedirect}
	c.dial = d
	return c
}

// DialContext opens a TCP connection under the same address policy, for
// protocols other than HTTP (FTP, SFTP).
func (c *Client) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return c.dial.DialContext(ctx, network, address)
}

// Config returns the effective configuration, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// HTTPClient returns the guarded *http.Client underneath, for libraries
// that take one (storage SDKs). It checks addresses, schemes of redirects
// and the total timeout, but not MaxBytes: Do and Fetch add that.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// control runs on every socket before it connects, with the resolved
// address: the one place that sees what the connection really reaches.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: dialing unparsable address %q: %w", address, ErrForbiddenAddress)
	}
	return c.cfg.Check(ap.Addr())
}

// checkURL refuses what no dial should be attempted for, with a clearer
// error than the dialer's.
func (c *Client) checkURL(u *url.URL) error {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		s := "<nil>"
		if u != nil {
			s = u.Redacted()
		}
		return fmt.Errorf("outbound: %s: %w", s, ErrScheme)
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		return c.cfg.Check(ip)
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("outbound: stopped after %d redirects: %w", c.cfg.MaxRedirects, ErrTooManyRedirects)
	}
	return c.checkURL(req.URL)
}

// Do sends req like http.Client.Do, refusing forbidden addresses and
// schemes (for the request and every redirect). A response whose declared
// length exceeds MaxBytes is an ErrTooLarge error; otherwise reading the
// body fails with ErrTooLarge once it has yielded MaxBytes and more
// remains. The caller closes the body.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if err := c.checkURL(req.URL); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if c.cfg.MaxBytes > 0 {
		if resp.ContentLength > c.cfg.MaxBytes {
			resp.Body.Close()
			return nil, fmt.Errorf("outbound: response of %d bytes exceeds the limit of %d: %w",
				resp.ContentLength, c.cfg.MaxBytes, ErrTooLarge)
		}
		resp.Body = &limitedBody{rc: resp.Body, left: c.cfg.MaxBytes, max: c.cfg.MaxBytes}
	}
	return resp, nil
}

// limitedBody passes through up to max bytes and then fails with
// ErrTooLarge if the body goes on, so a truncated download is never
// mistaken for a complete one.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		var one [1]byte
		for {
			n, err := l.rc.Read(one[:])
			if n > 0 {
				return 0, fmt.Errorf("outbound: response exceeds the limit of %d bytes: %w", l.max, ErrTooLarge)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }

// StatusError is a response whose status is not 2xx.
type StatusError struct {
	URL        string // redacted
	StatusCode int
	Status     string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("outbound: GET %s: HTTP %s", e.URL, e.Status)
}

// Fetch downloads rawURL with GET into w and reports the bytes written, the
// media type (Content-Type without parameters, "" when absent) and a file
// name: Content-Disposition's, else the last segment of the final URL's
// path, sanitized by SanitizeFilename, "download" when neither gives one.
// A non-2xx response is a *StatusError; a body over MaxBytes is ErrTooLarge
// after n bytes were written (the caller discards them).
func (c *Client) Fetch(ctx context.Context, rawURL string, w io.Writer) (n int64, contentType, filename string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, "", "", fmt.Errorf("outbound: parsing URL: %w", errors.Join(err, ErrScheme))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, "", "", fmt.Errorf("outbound: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, "", "", &StatusError{URL: u.Redacted(), StatusCode: resp.StatusCode, Status: resp.Status}
	}
	contentType = mediaType(resp.Header.Get("Content-Type"))
	filename = responseFilename(resp)
	n, err = io.Copy(w, resp.Body)
	if err != nil {
		return n, contentType, filename, fmt.Errorf("outbound: downloading %s: %w", u.Redacted(), err)
	}
	return n, contentType, filename, nil
}

func mediaType(v string) string {
	if v == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		mt, _, _ = strings.Cut(v, ";")
		return strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

func responseFilename(resp *http.Response) string {
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil {
			if name := SanitizeFilename(params["filename"]); name != "" {
				return name
			}
		}
	}
	if resp.Request != nil && resp.Request.URL != nil {
		if name := SanitizeFilename(path.Base(resp.Request.URL.Path)); name != "" {
			return name
		}
	}
	return "download"
}

// maxFilename is in bytes, below every common file system's 255.
const maxFilename = 200

// SanitizeFilename makes a name chosen by a remote server safe as one path
// element: only the last element of any path survives, control characters
// and characters Windows forbids are replaced, leading and trailing dots
// and spaces are removed (no hidden files, no ".."), invalid UTF-8 is
// dropped, and long names are shortened keeping their extension. It
// returns "" when nothing usable is left.
func SanitizeFilename(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), r == unicode.ReplacementChar:
			return -1
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		case unicode.IsSpace(r):
			return ' '
		}
		return r
	}, name)
	name = strings.Trim(name, ". ")
	if len(name) > maxFilename {
		ext := path.Ext(name)
		if len(ext) > 16 || len(ext) == len(name) {
			ext = ""
		}
		stem := name[:maxFilename-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		name = strings.Trim(stem, ". ") + ext
	}
	return name
}
