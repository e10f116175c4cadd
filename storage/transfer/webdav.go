package transfer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/studio-b12/gowebdav"
)

type webdavConn struct {
	c   *gowebdav.Client
	cfg config
}

func openWebDAV(ctx context.Context, cfg config, opt Options) (Conn, error) {
	// No overall request timeout: an upload of an hour of WAV takes as
	// long as it takes. The library has no context, so a cancelled
	// transfer stops through the body (ctxReader) and a silent server
	// through the header timeout.
	var rt http.RoundTripper = &http.Transport{DialContext: opt.Dial, Proxy: nil,
		ResponseHeaderTimeout: opt.Timeout, TLSHandshakeTimeout: opt.Timeout}
	if opt.HTTPClient != nil && opt.HTTPClient.Transport != nil {
		rt = opt.HTTPClient.Transport
	}
	root, rt := davRoot(cfg.URL, rt)
	c := gowebdav.NewClient(root, cfg.Username, cfg.Password)
	c.SetTransport(rt)
	w := &webdavConn{c: c, cfg: cfg}
	// A listing checks the URL and the login at once.
	if _, err := w.List(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// davHost stands for the service's host in the URLs gowebdav builds
// when the real one would not survive its escaping (see davRoot). The
// .invalid domain never resolves.
const davHost = "webdav-host.invalid"

// davRoot returns the root URL to give gowebdav for the service URL raw
// and the round tripper it must use. gowebdav escapes every segment of
// the whole URL it requests, the host included: an IPv6 literal such as
// [::1]:8089 becomes %5B::1%5D:8089, which no longer parses ("invalid
// port"). Such a host is replaced by davHost in the root, and rt is
// wrapped to put the real host back in each request, in its Destination
// header (MOVE) too.
func davRoot(raw string, rt http.RoundTripper) (string, http.RoundTripper) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || url.PathEscape(u.Host) == u.Host {
		return raw, rt
	}
	real := u.Host
	u.Host = davHost
	return u.String(), &davHostTransport{rt: rt, host: real, from: u.Scheme + "://" + davHost, to: u.Scheme + "://" + real}
}

// davHostTransport sends requests for davHost to the real host.
type davHostTransport struct {
	rt       http.RoundTripper
	host     string
	from, to string // the Destination prefix and its replacement
}

func (t *davHostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != davHost {
		return t.rt.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = t.host, t.host
	if d := r.Header.Get("Destination"); strings.HasPrefix(d, t.from) {
		r.Header.Set("Destination", t.to+strings.TrimPrefix(d, t.from))
	}
	return t.rt.RoundTrip(r)
}

// davError classifies gowebdav's errors.
func davError(op, name string, err error) error {
	switch {
	case gowebdav.IsErrCode(err, http.StatusUnauthorized), gowebdav.IsErrCode(err, http.StatusForbidden):
		return fmt.Errorf("%w: webdav %s: %v", ErrAuth, op, err)
	case gowebdav.IsErrNotFound(err) && name != "":
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return fmt.Errorf("transfer: webdav %s %s: %w", op, name, err)
}

func (w *webdavConn) List(ctx context.Context) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fis, err := w.c.ReadDir("/")
	if err != nil {
		return nil, davError("list", "", err)
	}
	var out []Entry
	for _, fi := range fis {
		if fi.IsDir() || checkName(fi.Name()) != nil {
			continue
		}
		out = append(out, Entry{Name: fi.Name(), Size: fi.Size(), Modified: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (w *webdavConn) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	rc, err := w.c.ReadStream("/" + name)
	if err != nil {
		return nil, davError("get", name, err)
	}
	return &ctxReader{ctx: ctx, rc: rc}, nil
}

func (w *webdavConn) Put(ctx context.Context, name string, r io.Reader) error {
	if err := checkName(name); err != nil {
		return err
	}
	tmp := "/" + tempName(name) // the library escapes paths itself
	if err := w.c.WriteStream(tmp, &ctxReader{ctx: ctx, rc: io.NopCloser(r)}, os.FileMode(0o644)); err != nil {
		w.c.Remove(tmp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return davError("put", name, err)
	}
	if err := w.c.Rename(tmp, "/"+name, true); err != nil {
		w.c.Remove(tmp)
		return davError("rename", name, err)
	}
	return nil
}

// URL is the file under base_url, or else its WebDAV URL: unlike an FTP
// path, that is an address a browser (with the account) can open.
func (w *webdavConn) URL(name string) string {
	if w.cfg.BaseURL != "" {
		return publicURL(w.cfg.BaseURL, name)
	}
	return publicURL(w.cfg.URL, name)
}

func (w *webdavConn) Close() error { return nil }
