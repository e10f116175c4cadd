package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/audiopost/audiopost/storage"
)

// DefaultPartSize is the size of the parts of a multipart upload: a blob
// up to this size is one PUT, a larger one is sent in parts of this size
// while it is written. S3 allows 10,000 parts, so blobs up to about 80 GB.
const DefaultPartSize = 8 << 20

// minPartSize is S3's smallest part (but the last).
const minPartSize = 5 << 20

// S3Config locates a bucket (and a key prefix in it) on an S3-compatible
// service.
type S3Config struct {
	// Endpoint is host[:port] of the service; empty means AWS S3
	// (s3.amazonaws.com).
	Endpoint string
	// Insecure speaks plain HTTP instead of HTTPS.
	Insecure bool
	// Region of the bucket (default us-east-1). Setting it spares a
	// lookup of the bucket's region.
	Region string
	// Bucket is required.
	Bucket string
	// Prefix is put before every key: several installations (or test
	// runs) can share one bucket. A "/" is added when missing.
	Prefix string
	// AccessKey, SecretKey and SessionToken sign the requests; all empty
	// sends anonymous requests.
	AccessKey, SecretKey, SessionToken string
	// PartSize is the multipart part size (default DefaultPartSize, at
	// least 5 MiB). A writer holds one part in memory.
	PartSize int64
	// Transport sends the requests; nil: a default HTTP transport.
	Transport http.RoundTripper
}

// ParseS3URL reads a blob store URL of the form
//
//	s3://bucket/prefix?endpoint=host:port&region=eu-west-1&insecure=1&part_size=16777216
//
// Every parameter is optional: without endpoint the bucket is on AWS S3;
// insecure=1 speaks plain HTTP (a service on the local network, tests).
// The credentials come from the environment, from the variables every AWS
// tool reads: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (for temporary
// credentials) AWS_SESSION_TOKEN; without them requests are anonymous.
func ParseS3URL(raw string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return S3Config{}, fmt.Errorf("blob: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return S3Config{}, fmt.Errorf("blob: %q is not an s3://bucket/prefix URL", raw)
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("blob: %q: give the credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the URL", u.Redacted())
	}
	q := u.Query()
	c := S3Config{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/"), Endpoint: q.Get("endpoint"), Region: q.Get("region"),
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN")}
	if v := q.Get("insecure"); v != "" {
		if c.Insecure, err = strconv.ParseBool(v); err != nil {
			return S3Config{}, fmt.Errorf("blob: %s: insecure=%q is not a boolean", raw, v)
		}
	}
	if v := q.Get("part_size"); v != "" {
		if c.PartSize, err = strconv.ParseInt(v, 10, 64); err != nil {
			return S3Config{}, fmt.Errorf("blob: %s: part_size=%q is not a number of bytes", raw, v)
		}
	}
	for k := range q {
		switch k {
		case "endpoint", "region", "insecure", "part_size":
		default:
			return S3Config{}, fmt.Errorf("blob: %s: unknown parameter %q", raw, k)
		}
	}
	return c, nil
}

// S3 is a storage.Blobs in a bucket of an S3-compatible service (AWS S3,
// MinIO, versitygw, Ceph, Garage, ...). It is safe for concurrent use.
//
// A blob is the object at the configured prefix plus its key. Writers
// stream: a blob up to PartSize is sent in one PUT when the writer is
// closed; past that it becomes a multipart upload whose parts go out while
// the writer is written, and which Close completes and Abort aborts. Either
// way S3 makes the object visible whole and at once, and a crashed writer
// leaves at most an incomplete multipart upload, which is invisible and is
// aborted by OpenS3 once it is TempMaxAge old (CleanTemp on demand).
//
// Readers read ranges: Open asks for the object's size and version, and
// each read after a Seek asks for the rest of the object from there, of
// that version only, so that a reader never mixes an old blob with its
// replacement (the read fails instead).
type S3 struct {
	client *minio.Client
	core   minio.Core
	bucket string
	prefix string
	part   int64
}

var _ storage.Blobs = (*S3)(nil)
var _ storage.BlobPresigner = (*S3)(nil)

// OpenS3 connects to the bucket, checks that it exists and aborts the
// multipart uploads under the prefix that are older than TempMaxAge.
func OpenS3(ctx context.Context, c S3Config) (*S3, error) {
	if c.Bucket == "" {
		return nil, errors.New("blob: S3 bucket name is empty")
	}
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.PartSize == 0 {
		c.PartSize = DefaultPartSize
	}
	if c.PartSize < minPartSize {
		return nil, fmt.Errorf("blob: S3 part size %d is below S3's minimum of 5 MiB", c.PartSize)
	}
	prefix := strings.TrimPrefix(c.Prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if prefix != "" {
		if err := storage.ValidKey(strings.TrimSuffix(prefix, "/")); err != nil {
			return nil, fmt.Errorf("blob: S3 key prefix %q: %w", c.Prefix, err)
		}
	}
	var creds *credentials.Credentials
	if c.AccessKey != "" || c.SecretKey != "" {
		creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken)
	} else {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	client, err := minio.New(c.Endpoint, &minio.Options{Creds: creds, Secure: !c.Insecure, Region: c.Region, Transport: c.Transport})
	if err != nil {
		return nil, fmt.Errorf("blob: S3 endpoint %s: %w", c.Endpoint, err)
	}
	s := &S3{client: client, core: minio.Core{Client: client}, bucket: c.Bucket, prefix: prefix, part: c.PartSize}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blob: S3 bucket %s at %s: %w", c.Bucket, c.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("blob: S3 bucket %s at %s does not exist", c.Bucket, c.Endpoint)
	}
	if _, err := s.CleanTemp(ctx, TempMaxAge); err != nil {
		return nil, err
	}
	return s, nil
}

// Close implements io.Closer; an S3 store holds nothing to release.
func (s *S3) Close() error { return nil }

// Bucket and Prefix return where the blobs are.
func (s *S3) Bucket() string { return s.bucket }

// Prefix is the key prefix ("" or ending in "/").
func (s *S3) Prefix() string { return s.prefix }

func (s *S3) object(key string) string { return s.prefix + key }

// s3Error turns S3's "no such key" into storage.ErrNotFound.
func s3Error(op, key string, err error) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	if r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket {
		return fmt.Errorf("blob: %s %s: %w", op, key, storage.ErrNotFound)
	}
	return fmt.Errorf("blob: %s %s: %w", op, key, err)
}

// CleanTemp aborts the multipart uploads under the prefix begun more than
// olderThan ago (writers that crashed) and reports how many it aborted.
// Uploads of live writers are younger: each writes its parts and completes
// in one go.
func (s *S3) CleanTemp(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := time.Now().Add(-olderThan)
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			return n, fmt.Errorf("blob: listing incomplete uploads: %w", u.Err)
		}
		if !u.Initiated.Before(cutoff) {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil &&
			minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
			return n, fmt.Errorf("blob: aborting upload of %s: %w", u.Key, err)
		}
		n++
	}
	return n, nil
}

// Create implements storage.Blobs.
func (s *S3) Create(ctx context.Context, key string) (storage.BlobWriter, error) {
	if err := storage.ValidKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &s3Writer{ctx: ctx, s: s, key: key}, nil
}

// s3Writer buffers one part: a blob that fits is one PUT on Close, a
// larger one a multipart upload that Close completes.
type s3Writer struct {
	ctx      context.Context
	s        *S3
	key      string
	buf      []byte
	uploadID string
	parts    []minio.CompletePart
	done     bool
	err      error // the first failure: every later call reports it
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("blob: write %s: %w", w.key, os.ErrClosed)
	}
	if w.err != nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(fmt.Errorf("blob: write %s: %w", w.key, err))
	}
	n := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, w.s.part)
		}
		c := min(len(p), int(w.s.part)-len(w.buf))
		w.buf = append(w.buf, p[:c]...)
		p, n = p[c:], n+c
		if int64(len(w.buf)) == w.s.part {
			if err := w.sendPart(); err != nil {
				return n - c, err
			}
		}
	}
	return n, nil
}

// sendPart uploads the buffer as the next part, beginning the multipart
// upload on the first.
func (w *s3Writer) sendPart() error {
	obj := w.s.object(w.key)
	if w.uploadID == "" {
		id, err := w.s.core.NewMultipartUpload(w.ctx, w.s.bucket, obj, minio.PutObjectOptions{})
		if err != nil {
			return w.fail(fmt.Errorf("blob: write %s: %w", w.key, err))
		}
		w.uploadID = id
	}
	n := len(w.parts) + 1
	p, err := w.s.core.PutObjectPart(w.ctx, w.s.bucket, obj, w.uploadID, n, bytes.NewReader(w.buf), int64(len(w.buf)), minio.PutObjectPartOptions{})
	if err != nil {
		return w.fail(fmt.Errorf("blob: write %s (part %d): %w", w.key, n, err))
	}
	w.parts = append(w.parts, minio.CompletePart{PartNumber: n, ETag: p.ETag,
		ChecksumCRC32: p.ChecksumCRC32, ChecksumCRC32C: p.ChecksumCRC32C, ChecksumSHA1: p.ChecksumSHA1,
		ChecksumSHA256: p.ChecksumSHA256, ChecksumCRC64NVME: p.ChecksumCRC64NVME})
	w.buf = w.buf[:0]
	return nil
}

// fail records err and aborts the upload.
func (w *s3Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	w.abortUpload()
	return w.err
}

func (w *s3Writer) abortUpload() {
	if w.uploadID == "" {
		return
	}
	// Even when the writer's context is canceled: the parts must go.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), time.Minute)
	defer cancel()
	w.s.core.AbortMultipartUpload(ctx, w.s.bucket, w.s.object(w.key), w.uploadID)
	w.uploadID = ""
}

// Close commits the blob: the single PUT, or the last part and the
// completion of the multipart upload.
func (w *s3Writer) Close() error {
	if w.done {
		return fmt.Errorf("blob: close %s: %w", w.key, os.ErrClosed)
	}
	w.done = true
	defer func() { w.buf = nil }()
	if w.err != nil {
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(fmt.Errorf("blob: close %s: %w", w.key, err))
	}
	obj := w.s.object(w.key)
	if w.uploadID == "" {
		_, err := w.s.client.PutObject(w.ctx, w.s.bucket, obj, bytes.NewReader(w.buf), int64(len(w.buf)),
			minio.PutObjectOptions{DisableMultipart: true})
		if err != nil {
			return w.fail(fmt.Errorf("blob: commit %s: %w", w.key, err))
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.sendPart(); err != nil {
			return err
		}
	}
	if _, err := w.s.core.CompleteMultipartUpload(w.ctx, w.s.bucket, obj, w.uploadID, w.parts, minio.PutObjectOptions{}); err != nil {
		return w.fail(fmt.Errorf("blob: commit %s: %w", w.key, err))
	}
	w.uploadID = ""
	return nil
}

func (w *s3Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.buf = nil
	w.abortUpload()
	return nil
}

// Open implements storage.Blobs. Reads use ctx.
func (s *S3) Open(ctx context.Context, key string) (io.ReadSeekCloser, storage.BlobInfo, error) {
	oi, err := s.stat(ctx, "open", key)
	if err != nil {
		return nil, storage.BlobInfo{}, err
	}
	return &s3Reader{ctx: ctx, s: s, key: key, size: oi.Size, etag: oi.ETag}, s.info(key, oi), nil
}

// Stat implements storage.Blobs.
func (s *S3) Stat(ctx context.Context, key string) (storage.BlobInfo, error) {
	oi, err := s.stat(ctx, "stat", key)
	if err != nil {
		return storage.BlobInfo{}, err
	}
	return s.info(key, oi), nil
}

func (s *S3) stat(ctx context.Context, op, key string) (minio.ObjectInfo, error) {
	if err := storage.ValidKey(key); err != nil {
		return minio.ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return minio.ObjectInfo{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, s.object(key), minio.StatObjectOptions{})
	return oi, s3Error(op, key, err)
}

// info describes an object. Modification times are whole seconds, as
// HTTP dates carry them, so that Stat, Open and List agree.
func (s *S3) info(key string, oi minio.ObjectInfo) storage.BlobInfo {
	return storage.BlobInfo{Key: key, Size: oi.Size, ModTime: oi.LastModified.UTC().Truncate(time.Second)}
}

// s3Reader reads one version of an object by ranges.
type s3Reader struct {
	ctx  context.Context
	s    *S3
	key  string
	size int64
	etag string
	off  int64
	body io.ReadCloser // the response being read, from off on
}

func (r *s3Reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.body == nil {
		opts := minio.GetObjectOptions{}
		if r.off > 0 {
			opts.SetRange(r.off, 0) // bytes=off-
		}
		if r.etag != "" {
			opts.SetMatchETag(r.etag)
		}
		body, _, _, err := r.s.core.GetObject(r.ctx, r.s.bucket, r.s.object(r.key), opts)
		if err != nil {
			if minio.ToErrorResponse(err).StatusCode == http.StatusPreconditionFailed {
				return 0, fmt.Errorf("blob: read %s: replaced while being read", r.key)
			}
			return 0, s3Error("read", r.key, err)
		}
		r.body = body
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	if err != nil && err != io.EOF {
		// A broken response: the next Read asks again from here.
		r.body.Close()
		r.body = nil
		return n, fmt.Errorf("blob: read %s: %w", r.key, err)
	}
	if err == io.EOF {
		r.body.Close()
		r.body = nil
		if r.off < r.size {
			err = fmt.Errorf("blob: read %s: %w", r.key, io.ErrUnexpectedEOF)
		}
	}
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// Seek moves the offset; the next Read asks for the object from there.
func (r *s3Reader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return r.off, fmt.Errorf("blob: seek %s: bad whence %d", r.key, whence)
	}
	if abs < 0 {
		return r.off, fmt.Errorf("blob: seek %s: negative position", r.key)
	}
	if abs != r.off && r.body != nil {
		r.body.Close()
		r.body = nil
	}
	r.off = abs
	return abs, nil
}

func (r *s3Reader) Close() error {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
	return nil
}

// Delete implements storage.Blobs.
func (s *S3) Delete(ctx context.Context, key string) error {
	// S3 deletes a missing object without complaint: ask first.
	if _, err := s.stat(ctx, "delete", key); err != nil {
		return err
	}
	return s3Error("delete", key, s.client.RemoveObject(ctx, s.bucket, s.object(key), minio.RemoveObjectOptions{}))
}

// List implements storage.Blobs.
func (s *S3) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	var out []storage.BlobInfo
	for oi := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.object(prefix), Recursive: true}) {
		if oi.Err != nil {
			return nil, fmt.Errorf("blob: list %q: %w", prefix, oi.Err)
		}
		key := strings.TrimPrefix(oi.Key, s.prefix)
		if storage.ValidKey(key) != nil {
			continue // not a blob of this store (written by something else)
		}
		out = append(out, s.info(key, oi))
	}
	slices.SortFunc(out, func(a, b storage.BlobInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// PresignGet implements storage.BlobPresigner: a GET URL of the object,
// signed with the store's credentials, valid for expires (at most seven
// days). filename, when set, is the name a browser saves the download
// under (response-content-disposition). Signing is local: no request is
// made, and the URL works only when the blob exists.
func (s *S3) PresignGet(ctx context.Context, key string, expires time.Duration, filename string) (string, error) {
	if err := storage.ValidKey(key); err != nil {
		return "", err
	}
	q := url.Values{}
	if filename != "" {
		q.Set("response-content-disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, s.object(key), expires, q)
	if err != nil {
		return "", fmt.Errorf("blob: presign %s: %w", key, err)
	}
	return u.String(), nil
}
