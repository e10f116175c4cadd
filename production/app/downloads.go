package app

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// OpenDownload opens a file of u for download: kind is DownloadResult
// (an output file), DownloadUpload (input, cover, thumbnail, chapter
// image; intros and tracks as {id}/{filename}) or DownloadPreset (a
// preset's cover and thumbnail), uuid the production's or preset's and
// name the file's. Another user's file is storage.ErrNotFound like a
// missing one. The reader seeks, for ranged downloads.
func (a *App) OpenDownload(ctx context.Context, u storage.User, kind, uuid, name string) (io.ReadSeekCloser, storage.BlobInfo, error) {
	key, err := a.downloadKey(ctx, u.ID, kind, uuid, name)
	if err != nil {
		return nil, storage.BlobInfo{}, err
	}
	if storage.ValidKey(key) != nil {
		return nil, storage.BlobInfo{}, storage.ErrNotFound
	}
	rc, info, err := a.blobs.Open(ctx, key)
	if errors.Is(err, storage.ErrInvalidKey) {
		err = storage.ErrNotFound
	}
	return rc, info, err
}

// downloadKey maps a download path to its blob key after checking that
// owner owns the resource; the file itself may still be missing.
func (a *App) downloadKey(ctx context.Context, owner, kind, uuid, name string) (string, error) {
	switch kind {
	case DownloadResult, DownloadUpload:
		if _, err := a.store.GetResource(ctx, owner, storage.KindProduction, uuid); err != nil {
			return "", err
		}
		if kind == DownloadResult {
			if strings.Contains(name, "/") {
				return "", storage.ErrNotFound
			}
			return production.OutputKey(uuid, name), nil
		}
		if id, file, ok := strings.Cut(name, "/"); ok {
			if strings.Contains(file, "/") {
				return "", storage.ErrNotFound
			}
			return production.IntroKey(uuid, id, file), nil
		}
		// Inputs, covers and chapter images share the flat name space of
		// audio-upload; the input wins a clash.
		key := production.InputKey(uuid, name)
		if _, err := a.blobs.Stat(ctx, key); err == nil {
			return key, nil
		}
		if production.IsChapterImageName(name) {
			return production.ChapterImageKey(uuid, name), nil
		}
		return production.ImageKey(uuid, name), nil
	case DownloadPreset:
		if _, err := a.store.GetResource(ctx, owner, storage.KindPreset, uuid); err != nil {
			return "", err
		}
		if strings.Contains(name, "/") {
			return "", storage.ErrNotFound
		}
		return production.PresetImageKey(uuid, name), nil
	}
	return "", storage.ErrNotFound
}
