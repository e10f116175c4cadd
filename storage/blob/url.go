package blob

import (
	"context"
	"strings"

	"github.com/audiopost/audiopost/storage"
)

// Store is a storage.Blobs that holds resources until Close: a *Dir or an
// *S3.
type Store interface {
	storage.Blobs
	Close() error
}

// OpenURL opens the blob store that loc names: an s3:// URL (see
// ParseS3URL; the credentials come from the environment) or else the path
// of a local folder (OpenDir), which several processes may share, also on
// a network file system.
func OpenURL(ctx context.Context, loc string) (Store, error) {
	if strings.HasPrefix(loc, "s3://") {
		c, err := ParseS3URL(loc)
		if err != nil {
			return nil, err
		}
		return OpenS3(ctx, c)
	}
	return OpenDir(loc)
}
