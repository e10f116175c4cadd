package storage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// BlobInfo describes a stored blob.
type BlobInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// BlobWriter receives the content of a new blob. Nothing is visible under
// the key until Close returns nil; then the whole content is, atomically,
// replacing any previous blob. Abort (or a crash) discards the content.
type BlobWriter interface {
	io.Writer
	// Close commits the blob. After a failed Close nothing is visible.
	Close() error
	// Abort discards what was written. It is safe after Close (no-op).
	Abort() error
}

// Blobs stores audio files and side files under slash-separated keys such
// as "productions/<uuid>/output.mp3". Keys must pass ValidKey.
type Blobs interface {
	// Create starts writing a blob. If ctx is canceled before Close, the
	// writes fail and Close discards the blob.
	Create(ctx context.Context, key string) (BlobWriter, error)
	// Open opens a blob for reading; the reader seeks, for HTTP Range
	// downloads (http.ServeContent with info.ModTime).
	Open(ctx context.Context, key string) (io.ReadSeekCloser, BlobInfo, error)
	// Stat describes a blob; ErrNotFound when there is none.
	Stat(ctx context.Context, key string) (BlobInfo, error)
	// Delete removes a blob; ErrNotFound when there is none.
	Delete(ctx context.Context, key string) error
	// List returns the blobs whose keys start with prefix, sorted by key.
	// The prefix is a plain string prefix ("productions/ab" matches
	// "productions/abc/x").
	List(ctx context.Context, prefix string) ([]BlobInfo, error)
}

// BlobPresigner is implemented by blob stores whose blobs clients can
// download straight from the storage service (S3): the HTTP layer may
// redirect a download there instead of passing the bytes through.
type BlobPresigner interface {
	// PresignGet returns a URL that downloads the blob without further
	// credentials until expires has passed. filename, when set, is the
	// name a browser saves the download under.
	PresignGet(ctx context.Context, key string, expires time.Duration, filename string) (string, error)
}

// MaxKeyLen bounds blob keys, well inside every filesystem's and S3's
// limits.
const MaxKeyLen = 512

// TempPrefix starts the names of the temporary files a blob store may keep
// next to its blobs while they are written. No key segment may start with
// it, so a temporary file can never be mistaken for a blob.
const TempPrefix = ".tmp-"

// ValidKey reports (as ErrInvalidKey) why key cannot name a blob: it must
// be non-empty valid UTF-8 of at most MaxKeyLen bytes, relative,
// slash-separated without empty, "." or ".." segments, without backslashes,
// colons (drive letters on Windows), control characters or segments that
// start with TempPrefix.
func ValidKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidKey)
	case key[0] == '/':
		return fmt.Errorf("%w: %q is absolute", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ':' {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidKey, key, r)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, key)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: %q contains %q", ErrInvalidKey, key, seg)
		case strings.HasPrefix(seg, TempPrefix):
			return fmt.Errorf("%w: %q: segment starts with %q", ErrInvalidKey, key, TempPrefix)
		}
	}
	return nil
}
