package transfer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"

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
	c := gowebdav.NewClient(cfg.URL, cfg.Username, cfg.Password)
	c.SetTransport(rt)
	w := &webdavConn{c: c, cfg: cfg}
	// A listing checks the URL and the login at once.
	if _, err := w.List(ctx); err != nil {
		return nil, err
	}
	return w, nil
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
