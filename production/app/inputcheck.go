package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
)

// DecodeCheckTimeout bounds the full decode of an uploaded or fetched
// input (decodeCheck). Native codecs decode an hour of audio in well under
// a second to a few seconds; a file that takes longer (long video through
// ffmpeg) is accepted unchecked rather than holding the request.
const DecodeCheckTimeout = 60 * time.Second

// decodeCheck decodes the whole input at key, so that a damaged or
// truncated file is refused when it arrives instead of failing at
// processing: a decoding error, or fewer frames than the header declared,
// is a form error of field. It returns the codec that decoded it (see
// audio.CodecOf), the one the engine will decode it with.
func (a *App) decodeCheck(ctx context.Context, field, key string, info audio.Info) (decoder string, err error) {
	rc, _, err := a.blobs.Open(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	dctx, cancel := context.WithTimeout(ctx, DecodeCheckTimeout)
	defer cancel()
	started := time.Now()
	d, err := audio.Decode(dctx, rc)
	if err == nil {
		decoder = audio.CodecOf(d)
		var frames int64
		frames, err = drain(d)
		d.Close()
		if err == nil && d.Info().Frames > 0 && frames < d.Info().Frames {
			err = fmt.Errorf("truncated: %d of %d sample frames present", frames, d.Info().Frames)
		}
	}
	switch {
	case err == nil:
		return decoder, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case dctx.Err() != nil:
		a.log.InfoContext(ctx, "app: input not fully decoded within the check's time limit; accepted unchecked",
			"key", key, "took", time.Since(started).Round(time.Millisecond))
		return decoder, nil
	}
	return "", fieldError(field, "is damaged or incomplete and cannot be decoded: "+scrubPaths(err.Error(), displayName(key, field)))
}

// drain decodes d to the end and counts the frames.
func drain(d audio.Decoder) (int64, error) {
	buf := audio.NewBuffer(max(1, d.Format().Channels), 16384)
	var n int64
	for {
		k, err := d.Read(buf)
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// displayName is the name a user knows the file at key by: its base name
// without the staging prefix, or field for a download in progress.
func displayName(key, field string) string {
	base := path.Base(key)
	if rest, ok := strings.CutPrefix(base, "staged-"); ok && len(rest) > 37 && rest[36] == '-' {
		return rest[37:]
	}
	if strings.HasPrefix(base, "fetch-") {
		return field
	}
	return base
}

// scrubPaths replaces the server's file paths in a message shown to users
// (a decoder's or ffmpeg's error) with name.
func scrubPaths(msg, name string) string { return production.ScrubPaths(msg, name) }
