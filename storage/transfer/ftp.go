package transfer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"path"
	"sort"
	"strconv"
	"time"

	"github.com/jlaffaye/ftp"
)

type ftpConn struct {
	c    *ftp.ServerConn
	cfg  config
	opt  Options
	base string
}

// ftpCode is the reply code of an FTP error, 0 for other errors.
func ftpCode(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

func openFTP(ctx context.Context, cfg config, opt Options) (Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	var tc *tls.Config
	if cfg.TLS {
		tc = &tls.Config{ServerName: cfg.Host, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		if opt.TLSConfig != nil {
			tc = opt.TLSConfig.Clone()
			if tc.ServerName == "" {
				tc.ServerName = cfg.Host
			}
			if tc.ClientSessionCache == nil {
				tc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			}
		}
	}
	// The library uses one dial function for the control connection and
	// every data connection. The first is upgraded by AUTH TLS inside the
	// library; data connections are ours to wrap.
	control := true
	dial := func(network, address string) (net.Conn, error) {
		dctx, cancel := context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
		conn, err := opt.Dial(dctx, network, address)
		if err != nil || tc == nil {
			return conn, err
		}
		if control {
			control = false
			return conn, nil
		}
		return &tlsData{Conn: tls.Client(conn, tc), timeout: opt.Timeout}, nil
	}
	opts := []ftp.DialOption{ftp.DialWithDialFunc(dial), ftp.DialWithTimeout(opt.Timeout), ftp.DialWithContext(ctx)}
	if tc != nil {
		opts = append(opts, ftp.DialWithExplicitTLS(tc))
	}
	c, err := ftp.Dial(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("transfer: ftp %s: %w", addr, err)
	}
	user := cfg.Username
	if user == "" {
		user = "anonymous"
	}
	stop := watch(ctx, closerFunc(func() error { return c.Quit() }))
	defer stop()
	if err := c.Login(user, cfg.Password); err != nil {
		c.Quit()
		if ftpCode(err) == ftp.StatusNotLoggedIn {
			return nil, fmt.Errorf("%w: ftp %s: %v", ErrAuth, addr, err)
		}
		return nil, fmt.Errorf("transfer: ftp %s: login: %w", addr, err)
	}
	return &ftpConn{c: c, cfg: cfg, opt: opt, base: cfg.Path}, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func (f *ftpConn) path(name string) string { return path.Join(f.base, name) }

func (f *ftpConn) List(ctx context.Context) ([]Entry, error) {
	defer watch(ctx, f)()
	es, err := f.c.List(f.base)
	if err != nil {
		return nil, fmt.Errorf("transfer: ftp list %s: %w", f.base, err)
	}
	var out []Entry
	for _, e := range es {
		if e.Type != ftp.EntryTypeFile || checkName(e.Name) != nil {
			continue
		}
		out = append(out, Entry{Name: e.Name, Size: int64(e.Size), Modified: e.Time})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *ftpConn) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	stop := watch(ctx, f)
	r, err := f.c.Retr(f.path(name))
	if err != nil {
		stop()
		if ftpCode(err) == ftp.StatusFileUnavailable {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
		}
		return nil, fmt.Errorf("transfer: ftp get %s: %w", name, err)
	}
	return &ftpReader{r: r, stop: stop}, nil
}

type ftpReader struct {
	r    *ftp.Response
	stop func()
}

func (r *ftpReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r *ftpReader) Close() error {
	defer r.stop()
	return r.r.Close()
}

func (f *ftpConn) Put(ctx context.Context, name string, r io.Reader) error {
	if err := checkName(name); err != nil {
		return err
	}
	// Cancelling stops the upload through the reader, not by cutting the
	// connection, which is still needed to remove the partial file.
	tmp := f.path(tempName(name))
	if err := f.c.Stor(tmp, &ctxReader{ctx: ctx, rc: io.NopCloser(r)}); err != nil {
		f.c.Delete(tmp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("transfer: ftp put %s: %w", name, err)
	}
	if err := f.c.Rename(tmp, f.path(name)); err != nil {
		f.c.Delete(tmp)
		return fmt.Errorf("transfer: ftp rename %s: %w", name, err)
	}
	// The permissions setting is not applied over FTP: SITE CHMOD is a
	// server extension the client library does not send, and servers
	// apply their own umask to uploads.
	return nil
}

func (f *ftpConn) URL(name string) string { return publicURL(f.cfg.BaseURL, name) }

func (f *ftpConn) Close() error { return f.c.Quit() }

// tlsData is a TLS data connection that ends an upload cleanly. TLS 1.3
// servers send session tickets after the handshake, which an upload
// never reads; closing a socket with unread input makes the kernel send
// a reset, and the server may then drop the end of the file it had not
// read yet. So Close first says close_notify, then reads until the
// server closes its side, and only then closes the socket.
type tlsData struct {
	*tls.Conn
	timeout time.Duration
}

func (c *tlsData) Close() error {
	if err := c.Conn.CloseWrite(); err == nil {
		c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
		io.Copy(io.Discard, c.Conn)
	}
	return c.Conn.Close()
}
