package transfer

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3PartSize is the part size of uploads to a user's bucket; a Put holds
// one part in memory.
const s3PartSize = 8 << 20

// s3Conn is a bucket and key prefix of an S3-compatible service: the
// prefix is the service's directory, the objects right under it its files.
type s3Conn struct {
	c      *minio.Client
	core   minio.Core
	cfg    config
	prefix string // "" or ending in "/"
}

// openS3 checks that the bucket exists and the keys may see it. The
// settings: endpoint (host[:port], or an http:// or https:// URL; empty:
// AWS), region, bucket, key_prefix, access_key, secret_key, canned_acl
// (private or public-read), downloadable (Content-Disposition:
// attachment on uploads) and base_url.
func openS3(ctx context.Context, cfg config, opt Options) (Conn, error) {
	var rt http.RoundTripper = &http.Transport{DialContext: opt.Dial, Proxy: nil, TLSClientConfig: opt.TLSConfig.Clone(),
		ResponseHeaderTimeout: opt.Timeout, TLSHandshakeTimeout: opt.Timeout}
	if opt.HTTPClient != nil && opt.HTTPClient.Transport != nil {
		rt = opt.HTTPClient.Transport
	}
	creds := credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	if cfg.AccessKey != "" || cfg.SecretKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{Creds: creds, Secure: cfg.TLS, Region: cfg.Region, Transport: rt, MaxRetries: 3})
	if err != nil {
		return nil, settingsError("endpoint", "%q: %v", cfg.Endpoint, err)
	}
	s := &s3Conn{c: c, core: minio.Core{Client: c}, cfg: cfg, prefix: cfg.KeyPrefix}
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, s3Err("open", "", err)
	}
	if !ok {
		return nil, settingsError("bucket", "%q does not exist at %s", cfg.Bucket, cfg.Endpoint)
	}
	return s, nil
}

// s3Err classifies minio's errors.
func s3Err(op, name string, err error) error {
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == http.StatusForbidden || r.Code == "InvalidAccessKeyId" || r.Code == "SignatureDoesNotMatch" || r.Code == "AccessDenied":
		return fmt.Errorf("%w: s3 %s: %v", ErrAuth, op, err)
	case name != "" && (r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound):
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return fmt.Errorf("transfer: s3 %s %s: %w", op, name, err)
}

func (s *s3Conn) List(ctx context.Context) ([]Entry, error) {
	var out []Entry
	for oi := range s.c.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.prefix}) {
		if oi.Err != nil {
			return nil, s3Err("list", "", oi.Err)
		}
		name := strings.TrimPrefix(oi.Key, s.prefix)
		if strings.HasSuffix(oi.Key, "/") || checkName(name) != nil {
			continue // a "directory", or a key no file name can reach
		}
		out = append(out, Entry{Name: name, Size: oi.Size, Modified: oi.LastModified})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *s3Conn) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	body, _, _, err := s.core.GetObject(ctx, s.cfg.Bucket, s.prefix+name, minio.GetObjectOptions{})
	if err != nil {
		return nil, s3Err("get", name, err)
	}
	return body, nil
}

// Put uploads r. S3 shows an object only once its upload completes, so
// no temporary name is needed: a failed or cancelled upload is aborted
// and leaves nothing.
func (s *s3Conn) Put(ctx context.Context, name string, r io.Reader) error {
	if err := checkName(name); err != nil {
		return err
	}
	opts := minio.PutObjectOptions{PartSize: s3PartSize, ContentType: mime.TypeByExtension(path.Ext(name))}
	if s.cfg.Downloadable {
		opts.ContentDisposition = mime.FormatMediaType("attachment", map[string]string{"filename": name})
	}
	if s.cfg.ACL != "" && s.cfg.ACL != "private" {
		opts.UserMetadata = map[string]string{"x-amz-acl": s.cfg.ACL}
	}
	if _, err := s.c.PutObject(ctx, s.cfg.Bucket, s.prefix+name, r, -1, opts); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s3Err("put", name, err)
	}
	return nil
}

// URL is the file under base_url; else, for a public-read bucket, the
// object's own URL; else "" (a private object has no lasting public URL).
func (s *s3Conn) URL(name string) string {
	if s.cfg.BaseURL != "" {
		return publicURL(s.cfg.BaseURL, name)
	}
	if s.cfg.ACL != "public-read" {
		return ""
	}
	u := s.c.EndpointURL()
	key := s.prefix + name
	if strings.HasSuffix(u.Host, "amazonaws.com") && !strings.Contains(s.cfg.Bucket, ".") {
		return (&url.URL{Scheme: "https", Host: s.cfg.Bucket + ".s3." + s.cfg.Region + ".amazonaws.com", Path: "/" + key}).String()
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/" + s.cfg.Bucket + "/" + key}).String()
}

func (s *s3Conn) Close() error { return nil }
