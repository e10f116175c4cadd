// Package transfer moves files between the server and users' external
// services (FTP, SFTP, WebDAV, S3-compatible object storage): it lists a
// service's directory (the API's service ls), reads input files named on
// an incoming service and writes a production's outputs to its outgoing
// services. For S3 the directory is a key prefix of a bucket.
//
// Types is the catalogue of service types (what users can register, with
// each type's parameters); CheckSettings validates what a user sends for
// one, Test connects and lists as registration does, and ForPublish maps
// the parameters of a production's outgoing service reference (sharing,
// privacy, downloadable, ...) onto the settings where the protocol has
// something they mean.
//
// Every connection goes through Options.Dial, so the server's policy on
// which addresses may be reached (transport/outbound) covers transfers
// as it covers input URLs and webhooks.
package transfer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// Entry is one file in a service's directory.
type Entry struct {
	Name     string
	Size     int64
	Modified time.Time
}

// Conn is an open session with one external service. It is not safe for
// concurrent use.
type Conn interface {
	// List returns the regular files (not directories) of the service's
	// directory, sorted by name.
	List(ctx context.Context) ([]Entry, error)
	// Open reads the named file of the directory; the caller closes it.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// Put writes r as the named file. It writes a temporary name first
	// and renames it when complete, so a failed transfer never leaves a
	// partial file under the final name.
	Put(ctx context.Context, name string, r io.Reader) error
	// URL is the public URL of a file written by Put: under the
	// service's base_url; without one "" for FTP and SFTP, the file's
	// own URL for WebDAV, and for S3 the object's URL when canned_acl is
	// public-read, else "" (the spec's result_urls).
	URL(name string) string
	// Close ends the session.
	Close() error
}

// Options are the server's choices for every connection, as opposed to
// the user's service settings.
type Options struct {
	// Dial opens TCP connections (FTP control and data, SFTP, and the
	// HTTP connections of WebDAV and S3 without HTTPClient). nil: a
	// net.Dialer. A server users reach passes one that refuses private
	// and loopback addresses.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// HTTPClient's Transport sends WebDAV and S3 requests (its Timeout is
	// not used: transfers last as long as the file needs). nil: a
	// transport dialing with Dial.
	HTTPClient *http.Client
	// Timeout bounds connecting, handshakes and waiting for a reply; a
	// transfer itself has no time limit beyond its context (default
	// DefaultTimeout).
	Timeout time.Duration
	// TLSConfig is used for FTPS (and HTTPS to S3 without HTTPClient);
	// nil: the system roots, ServerName set to the host.
	TLSConfig *tls.Config
}

// DefaultTimeout is the default of Options.Timeout.
const DefaultTimeout = 30 * time.Second

// Errors of the package; failures of the connection itself wrap the
// network or protocol error instead.
var (
	// ErrUnsupportedType: the service type has no transfer here.
	ErrUnsupportedType = errors.New("transfer: service type not supported")
	// ErrConfig: the service's settings lack a value or have a bad one.
	ErrConfig = errors.New("transfer: bad service settings")
	// ErrAuth: the service refused the login.
	ErrAuth = errors.New("transfer: login refused")
	// ErrNotFound: Open of a file the directory does not have.
	ErrNotFound = errors.New("transfer: no such file")
	// ErrName: a name that is not a plain file name of the directory.
	ErrName = errors.New("transfer: not a plain file name")
	// ErrHostKey: the SFTP server's key is not the pinned host_key.
	ErrHostKey = errors.New("transfer: SFTP host key does not match")
	// ErrForbiddenAddress: the server's outbound policy does not connect
	// to the address a host is or resolves to (private, loopback, ...).
	// The dialers and the URL fetcher of package transport/outbound
	// return it (as outbound.ErrForbiddenAddress, the same error).
	ErrForbiddenAddress = errors.New("outbound: forbidden address")
	// ErrTooLarge: a fetched file is larger than the fetcher's limit
	// (outbound.ErrTooLarge).
	ErrTooLarge = errors.New("outbound: response too large")
)

// Supported reports whether Open handles the service type (one of
// Types).
func Supported(serviceType string) bool {
	_, ok := LookupType(serviceType)
	return ok
}

// Open connects and logs in to the service.
func Open(ctx context.Context, svc storage.Service, opt Options) (Conn, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Dial == nil {
		d := &net.Dialer{Timeout: opt.Timeout}
		opt.Dial = d.DialContext
	}
	if !Supported(svc.Type) {
		return nil, UnsupportedTypeError(svc.Type)
	}
	cfg, err := parseConfig(svc.Type, svc.Config)
	if err != nil {
		return nil, err
	}
	switch svc.Type {
	case "ftp":
		return openFTP(ctx, cfg, opt)
	case "sftp":
		return openSFTP(ctx, cfg, opt)
	case "webdav":
		return openWebDAV(ctx, cfg, opt)
	case "s3":
		return openS3(ctx, cfg, opt)
	}
	return nil, UnsupportedTypeError(svc.Type)
}

// checkName refuses names that could leave the directory or are not
// names at all; the server checks before the service sees them.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%w: %q", ErrName, name)
	}
	return nil
}

// tempName is where Put writes before the rename: hidden, and unique
// enough that two transfers of one name do not collide.
func tempName(name string) string {
	return fmt.Sprintf(".%s.%d.part", name, time.Now().UnixNano())
}

// publicURL joins a base URL and an escaped file name.
func publicURL(base, name string) string {
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/" + url.PathEscape(name)
}

// watch closes c when ctx is done before stop is called: the protocol
// libraries take no context, so cancelling means cutting the connection.
func watch(ctx context.Context, c io.Closer) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// ctxReader stops a copy when its context is done.
type ctxReader struct {
	ctx context.Context
	rc  io.ReadCloser
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.rc.Read(p)
}

func (r *ctxReader) Close() error { return r.rc.Close() }
