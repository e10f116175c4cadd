package blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob/s3test"
)

// incomplete lists the multipart uploads in progress in the store's bucket.
func incomplete(t *testing.T, s *S3) []string {
	t.Helper()
	var out []string
	for u := range s.client.ListIncompleteUploads(t.Context(), s.bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		out = append(out, u.Key)
	}
	return out
}

// A blob larger than a part streams: its parts go out while it is
// written, in a multipart upload nobody sees until Close completes it.
func TestS3MultipartStreams(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t)
	s, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Insecure: true, Bucket: srv.Bucket(t), Prefix: "mp",
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, PartSize: minPartSize})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 2*minPartSize+12345)
	rand.Read(payload)

	w, err := s.Create(ctx, "big/input.wav")
	if err != nil {
		t.Fatal(err)
	}
	// Odd write sizes, as io.Copy from a decoder would make.
	for rest := payload[:minPartSize+100]; len(rest) > 0; {
		n := min(len(rest), 32<<10+7)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	// One part is out: the upload exists, the blob does not.
	if got := incomplete(t, s); len(got) != 1 || got[0] != "mp/big/input.wav" {
		t.Fatalf("uploads in progress while writing: %q", got)
	}
	if _, err := s.Stat(ctx, "big/input.wav"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("blob visible before Close: %v", err)
	}
	if _, err := w.Write(payload[minPartSize+100:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := incomplete(t, s); len(got) != 0 {
		t.Errorf("uploads left after Close: %q", got)
	}
	r, info, err := s.Open(ctx, "big/input.wav")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || info.Size != int64(len(payload)) || !bytes.Equal(got, payload) {
		t.Fatalf("read back %d of %d bytes (%v), equal %v", len(got), info.Size, err, bytes.Equal(got, payload))
	}
	// The object is where the prefix says, whole, on the server's disk.
	if onDisk, err := os.ReadFile(filepath.Join(srv.Root, s.bucket, "mp", "big", "input.wav")); err != nil || !bytes.Equal(onDisk, payload) {
		t.Errorf("server's file: %d bytes, %v", len(onDisk), err)
	}

	// Abort and cancel mid-upload leave neither a blob nor an upload.
	for _, how := range []string{"abort", "cancel"} {
		cctx, cancel := context.WithCancel(ctx)
		w, _ := s.Create(cctx, "big/"+how)
		w.Write(payload[:minPartSize+1])
		if len(incomplete(t, s)) != 1 {
			t.Fatalf("%s: no upload in progress", how)
		}
		if how == "abort" {
			w.Abort()
		} else {
			cancel()
			if _, err := w.Write(payload[:10]); !errors.Is(err, context.Canceled) {
				t.Errorf("write after cancel: %v", err)
			}
			if err := w.Close(); err == nil {
				t.Error("Close after cancel succeeded")
			}
		}
		cancel()
		if got := incomplete(t, s); len(got) != 0 {
			t.Errorf("%s: uploads left: %q", how, got)
		}
		if _, err := s.Stat(ctx, "big/"+how); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: blob visible: %v", how, err)
		}
	}

	// A writer that crashed leaves its upload: CleanTemp aborts it once
	// it is old enough, and OpenS3 does for the ones older than
	// TempMaxAge.
	if _, err := s.core.NewMultipartUpload(ctx, s.bucket, "mp/crashed", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CleanTemp(ctx, time.Hour); err != nil || n != 0 {
		t.Errorf("CleanTemp(1h) = %d, %v; want 0 (the upload is recent)", n, err)
	}
	if n, err := s.CleanTemp(ctx, -time.Minute); err != nil || n != 1 {
		t.Errorf("CleanTemp = %d, %v; want 1", n, err)
	}
	if got := incomplete(t, s); len(got) != 0 {
		t.Errorf("uploads left after CleanTemp: %q", got)
	}
}

// A reader reads the version it opened, or fails; never a mix.
func TestS3ReaderSticksToItsVersion(t *testing.T) {
	s := openS3Test(t, "")
	putBlob(t, s, "k", strings.Repeat("a", 1000))
	r, _, err := s.Open(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 10)
	io.ReadFull(r, buf)
	putBlob(t, s, "k", strings.Repeat("b", 1000))
	r.Seek(500, io.SeekStart) // a new request for the rest
	got, err := io.ReadAll(r)
	if err == nil || !strings.Contains(err.Error(), "replaced") || strings.Contains(string(got), "b") {
		t.Fatalf("reading on after the blob was replaced: %q, %v; want an error saying so", got, err)
	}
}

// Prefixes keep stores on one bucket apart.
func TestS3Prefix(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	open := func(prefix string) *S3 {
		s, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Insecure: true, Bucket: bucket, Prefix: prefix,
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b, root := open("/one"), open("two/"), open("")
	putBlob(t, a, "x/y", "a")
	putBlob(t, b, "x/y", "b")
	if readBlob(t, a, "x/y") != "a" || readBlob(t, b, "x/y") != "b" {
		t.Error("prefixes mixed")
	}
	if l := listKeys(t, a, ""); l != "x/y" {
		t.Errorf("a lists %s", l)
	}
	if l := listKeys(t, root, ""); l != "one/x/y,two/x/y" {
		t.Errorf("the bucket root lists %s", l)
	}
	if err := a.Delete(ctx, "x/y"); err != nil {
		t.Fatal(err)
	}
	if readBlob(t, b, "x/y") != "b" {
		t.Error("delete in one prefix removed the other's blob")
	}
	if _, err := OpenS3(ctx, S3Config{Endpoint: srv.Endpoint, Insecure: true, Bucket: bucket, Prefix: "a/../b",
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("prefix a/../b: %v", err)
	}
}

func TestS3Presign(t *testing.T) {
	s := openS3Test(t, "pre")
	putBlob(t, s, "p/out.mp3", "the audio")
	var bp storage.BlobPresigner = s
	u, err := bp.PresignGet(t.Context(), "p/out.mp3", time.Minute, "Episode 1.mp3")
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(u) // no credentials: the signature is in the URL
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "the audio" {
		t.Errorf("presigned GET: HTTP %d %q", res.StatusCode, body)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, "Episode 1.mp3") {
		t.Errorf("Content-Disposition %q", cd)
	}
	// Tampering with the key breaks the signature.
	res, err = http.Get(strings.Replace(u, "out.mp3", "other.mp3", 1))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("tampered URL: HTTP %d, want 403", res.StatusCode)
	}
}

func TestParseS3URL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET")
	t.Setenv("AWS_SESSION_TOKEN", "")
	c, err := ParseS3URL("s3://media/audiopost/prod?endpoint=minio.lan:9000&region=eu-west-1&insecure=1&part_size=16777216")
	want := S3Config{Endpoint: "minio.lan:9000", Insecure: true, Region: "eu-west-1", Bucket: "media", Prefix: "audiopost/prod",
		AccessKey: "AKID", SecretKey: "SECRET", PartSize: 16 << 20}
	if err != nil || c != want {
		t.Errorf("ParseS3URL = %+v, %v\nwant %+v", c, err, want)
	}
	if c, err := ParseS3URL("s3://bucket"); err != nil || c.Bucket != "bucket" || c.Endpoint != "" || c.Insecure || c.Prefix != "" {
		t.Errorf("bare bucket: %+v, %v", c, err)
	}
	for _, bad := range []string{"s3:///prefix", "http://bucket/x", "s3://k:s@bucket/", "s3://b/?insecure=maybe",
		"s3://b/?part_size=big", "s3://b/?endpont=typo"} {
		if _, err := ParseS3URL(bad); err == nil {
			t.Errorf("ParseS3URL(%q) accepted", bad)
		} else if strings.Contains(err.Error(), ":s@") {
			t.Errorf("error shows the secret: %v", err)
		}
	}
}

func TestOpenURL(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	st, err := OpenURL(t.Context(), srv.URL(bucket, "pre/fix"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, ok := st.(*S3); !ok || s.Prefix() != "pre/fix/" || s.Bucket() != bucket {
		t.Fatalf("OpenURL(s3://) = %T %+v", st, st)
	}
	putBlob(t, st, "a", "x")
	if _, err := os.Stat(filepath.Join(srv.Root, bucket, "pre", "fix", "a")); err != nil {
		t.Error(err)
	}
	dir := filepath.Join(t.TempDir(), "blobs")
	st2, err := OpenURL(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, ok := st2.(*Dir); !ok {
		t.Errorf("OpenURL(folder) = %T", st2)
	}
	// A missing bucket, and wrong credentials, fail at open.
	if _, err := OpenURL(t.Context(), srv.URL("no-such-bucket", "")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing bucket: %v", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	if _, err := OpenURL(t.Context(), srv.URL(bucket, "")); err == nil {
		t.Error("wrong secret key accepted")
	}
}
