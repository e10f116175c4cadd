package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/storage/transfer"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// storeBlob streams r into a new blob; on any error nothing is stored.
func (a *App) storeBlob(ctx context.Context, key string, r io.Reader) (int64, error) {
	w, err := a.blobs.Create(ctx, key)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, r)
	if err != nil {
		w.Abort()
		return n, err
	}
	return n, w.Close()
}

// A new file never replaces a stored one of the same name before it is
// checked (probed as audio, decoded as an image): it is written beside it
// first, so a failed upload or fetch costs nothing that was there.

// stagingKey is where a new file for final is written before its check:
// final itself when nothing is stored there, a fresh name beside it else.
func (a *App) stagingKey(ctx context.Context, final string) (string, error) {
	_, err := a.blobs.Stat(ctx, final)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return final, nil
	case err != nil:
		return "", err
	}
	return path.Dir(final) + "/staged-" + storage.NewUUID() + "-" + path.Base(final), nil
}

// promote moves a checked file from its staging key to final.
func (a *App) promote(ctx context.Context, staged, final string) error {
	if staged == final {
		return nil
	}
	if err := a.copyBlob(ctx, staged, final); err != nil {
		return err
	}
	a.discard(ctx, staged)
	return nil
}

// discard deletes a blob nobody refers to; failures are only logged.
func (a *App) discard(ctx context.Context, key string) {
	if err := a.blobs.Delete(context.WithoutCancel(ctx), key); err != nil && !errors.Is(err, storage.ErrNotFound) {
		a.log.WarnContext(ctx, "app: deleting blob", "key", key, "err", err)
	}
}

// storeChecked writes a new file for final through write, runs check on
// it (nil: none) and only then puts it under final.
func (a *App) storeChecked(ctx context.Context, final string, write, check func(key string) error) error {
	key, err := a.stagingKey(ctx, final)
	if err != nil {
		return err
	}
	if err := write(key); err != nil {
		return err
	}
	if check != nil {
		if err := check(key); err != nil {
			a.discard(ctx, key)
			return err
		}
	}
	return a.promote(ctx, key, final)
}

// probeInto returns a check that probes the file as field's input and
// keeps what it found in info.
func (a *App) probeInto(ctx context.Context, field string, info *probed) func(key string) error {
	return func(key string) (err error) {
		*info, err = a.probeBlob(ctx, field, key)
		return err
	}
}

// fetchInto downloads rawURL through the outbound client into the blob
// that key(name) names, where name is the file name the server gave (or
// the URL's), once check (nil: none) accepts it. Failures are form errors
// of field.
func (a *App) fetchInto(ctx context.Context, field, rawURL, fallback string, key func(name string) string, check func(key string) error) (name string, err error) {
	name = fileNameOf(rawURL, fallback)
	tmp := key("fetch-" + storage.NewUUID())
	w, err := a.blobs.Create(ctx, tmp)
	if err != nil {
		return "", err
	}
	_, _, fname, err := a.fetch.Fetch(ctx, rawURL, w)
	if err != nil {
		w.Abort()
		return "", a.fetchError(ctx, field, err, a.maxUp)
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	defer a.discard(ctx, tmp)
	if fname = production.SanitizeName(fname); fname != "" {
		name = fname
	}
	if check != nil {
		if err := check(tmp); err != nil {
			return "", err
		}
	}
	if err := a.copyBlob(ctx, tmp, key(name)); err != nil {
		return "", err
	}
	return name, nil
}

// fetchError maps a failed fetch of field's URL, limited to limit bytes.
func (a *App) fetchError(ctx context.Context, field string, err error, limit int64) error {
	switch {
	case errors.Is(err, transfer.ErrForbiddenAddress):
		return fieldError(field, "points to a private, loopback or otherwise forbidden address")
	case errors.Is(err, transfer.ErrTooLarge), errors.Is(err, errTooLarge):
		return errorf(ErrTooLarge, "%s: the file at the URL is larger than %d bytes", field, limit)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fieldError(field, "could not be fetched: "+err.Error())
}

// errTooLarge stops a fetch into a cappedBuffer.
var errTooLarge = errors.New("larger than the limit")

// cappedBuffer collects at most limit bytes. The buffer is not embedded:
// its ReadFrom would let io.Copy bypass the limit.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.limit {
		return 0, errTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }

// syncChapterImages stores the chapter images given by URL (another
// server's, or a download URL of this one) under the production's chapter
// folder, named by their content, and points each chapter at its download
// URL. Images stored there already are kept. It returns the keys in use.
func (a *App) syncChapterImages(ctx context.Context, owner string, p *production.Production) (keep []string, err error) {
	for i := range p.Chapters {
		c := &p.Chapters[i]
		if c.Image == nil || *c.Image == "" {
			continue
		}
		field := fmt.Sprintf("chapters.%d.image", i)
		src, own, err := a.ownDownload(ctx, owner, *c.Image)
		if err == nil && own {
			_, err = a.blobs.Stat(ctx, src)
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, fieldError(field, "no such file on this server")
		}
		if err != nil {
			return nil, err
		}
		if own && src == production.ChapterImageKey(p.UUID, path.Base(src)) {
			keep = append(keep, src)
			continue
		}
		buf := &cappedBuffer{limit: production.MaxChapterImageBytes}
		if own {
			err = a.readBlob(ctx, src, buf)
		} else if _, _, _, err = a.fetch.Fetch(ctx, *c.Image, buf); err != nil {
			return nil, a.fetchError(ctx, field, err, production.MaxChapterImageBytes)
		}
		if errors.Is(err, errTooLarge) {
			return nil, fieldError(field, fmt.Sprintf("is larger than %d bytes", production.MaxChapterImageBytes))
		}
		if err != nil {
			return nil, err
		}
		mime, err := artwork.ImageType(buf.Bytes())
		if err != nil {
			return nil, fieldError(field, imageProblem(err))
		}
		name := production.ChapterImageName(buf.Bytes(), mime)
		key := production.ChapterImageKey(p.UUID, name)
		if _, err := a.storeBlob(ctx, key, bytes.NewReader(buf.Bytes())); err != nil {
			return nil, err
		}
		u := a.links.Download(DownloadUpload, p.UUID, name)
		c.Image = &u
		keep = append(keep, key)
	}
	return keep, nil
}

// readBlob copies the blob at key into w.
func (a *App) readBlob(ctx context.Context, key string, w io.Writer) error {
	rc, _, err := a.blobs.Open(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}

// fileNameOf is the sanitized last path segment of a URL, or fallback.
func fileNameOf(rawURL, fallback string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if n := production.SanitizeName(path.Base(u.Path)); n != "" && n != "/" && n != "_" {
			return n
		}
	}
	return fallback
}

func (a *App) copyBlob(ctx context.Context, from, to string) error {
	if from == to {
		return nil
	}
	rc, _, err := a.blobs.Open(ctx, from)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = a.storeBlob(ctx, to, rc)
	return err
}

// prune deletes the blobs under prefix except keep; cleanup after a
// replaced file, so failures are only logged.
func (a *App) prune(ctx context.Context, prefix string, keep ...string) {
	ctx = context.WithoutCancel(ctx)
	infos, err := a.blobs.List(ctx, prefix)
	if err != nil {
		a.log.WarnContext(ctx, "app: listing blobs to prune", "prefix", prefix, "err", err)
		return
	}
	for _, b := range infos {
		if slices.Contains(keep, b.Key) {
			continue
		}
		if err := a.blobs.Delete(ctx, b.Key); err != nil && !errors.Is(err, storage.ErrNotFound) {
			a.log.WarnContext(ctx, "app: pruning blob", "key", b.Key, "err", err)
		}
	}
}

// probed is what probing a stored input learns: its stream's Info, the
// file's size in bytes and the codec that decodes it.
type probed struct {
	audio.Info
	size    int64
	decoder string
}

// probeBlob probes a stored input file and decodes it whole
// (decodeCheck). A file that no codec reads, or that is damaged or
// truncated, is a form error of field; messages name the file, never the
// server's path to it.
func (a *App) probeBlob(ctx context.Context, field, key string) (probed, error) {
	rc, bi, err := a.blobs.Open(ctx, key)
	if err != nil {
		return probed{}, err
	}
	info, err := audio.Probe(ctx, rc)
	rc.Close()
	if err != nil {
		if ctx.Err() != nil {
			return probed{}, ctx.Err()
		}
		return probed{}, fieldError(field, "is not a supported audio or video file: "+scrubPaths(err.Error(), displayName(key, field)))
	}
	decoder, err := a.decodeCheck(ctx, field, key, info)
	return probed{Info: info, size: bi.Size, decoder: decoder}, err
}

// setInputInfo copies a probe of the main input into p and imports its
// tags into metadata fields that are still empty.
func setInputInfo(p *production.Production, info probed) {
	p.Channels, p.SampleRate, p.Bitrate = info.Channels, info.SampleRate, info.Bitrate
	p.Format, p.HasVideo, p.Length, p.InputLength = info.Format, info.HasVideo, info.Length, info.Length
	p.InputSize, p.InputDecoder = info.size, info.decoder
	p.Metadata.ImportTags(info.Tags)
}

func setTrackInfo(m *production.MultiInputFile, info probed) {
	m.InputChannels, m.InputSampleRate, m.InputBitrate = info.Channels, info.SampleRate, info.Bitrate
	m.InputFiletype, m.InputLength, m.InputDecoder = info.Format, info.Length, info.decoder
}

// imageKeys names where the cover and thumbnail of a resource live.
type imageKeys struct {
	kind   string // download kind
	uuid   string
	prefix string
	key    func(uuid, name string) string
	thumb  func(uuid, name string) string
}

func productionImages(uuid string) imageKeys {
	return imageKeys{DownloadUpload, uuid, production.ImagePrefix(uuid), production.ImageKey, production.ThumbnailKey}
}

func presetImages(uuid string) imageKeys {
	return imageKeys{DownloadPreset, uuid, production.PresetImagePrefix(uuid), production.PresetImageKey, production.PresetThumbnailKey}
}

// coverThumbnail makes the thumbnail of the image in the blob at key. A
// file that is not a PNG or JPEG image the engine can embed is a form
// error of field.
func (a *App) coverThumbnail(ctx context.Context, field, key string) ([]byte, error) {
	rc, _, err := a.blobs.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	th, err := artwork.Thumbnail(data, artwork.ThumbnailSize)
	if err != nil {
		return nil, fieldError(field, imageProblem(err))
	}
	return th, nil
}

// storeCover checks the cover image in the blob at src, makes its
// thumbnail, stores both under the image keys of name (copying src there
// if it lives elsewhere) and returns the image and thumbnail URLs.
// Nothing is stored for a file that fails the check.
func (a *App) storeCover(ctx context.Context, field string, ik imageKeys, src, name string) (img, thumb string, err error) {
	th, err := a.coverThumbnail(ctx, field, src)
	if err != nil {
		return "", "", err
	}
	return a.putCover(ctx, ik, src, name, th)
}

// putCover is storeCover for an image already checked, with its thumbnail.
func (a *App) putCover(ctx context.Context, ik imageKeys, src, name string, th []byte) (img, thumb string, err error) {
	if err := a.copyBlob(ctx, src, ik.key(ik.uuid, name)); err != nil {
		return "", "", err
	}
	if _, err := a.storeBlob(ctx, ik.thumb(ik.uuid, name), bytes.NewReader(th)); err != nil {
		return "", "", err
	}
	return a.links.Download(ik.kind, ik.uuid, name), a.links.Download(ik.kind, ik.uuid, production.ThumbnailName(name)), nil
}

// imageProblem words a artwork.ErrImage for form_errors.
func imageProblem(err error) string {
	return "is not a usable PNG or JPEG image (" + strings.TrimPrefix(err.Error(), artwork.ErrImage.Error()+": ") + ")"
}

// ownDownload resolves a download URL of this server to the blob key it
// serves, for owner (so another user's file is not found). ok is false
// for foreign URLs.
func (a *App) ownDownload(ctx context.Context, owner, rawURL string) (key string, ok bool, err error) {
	kind, uuid, name, own, named := a.links.ParseDownload(rawURL)
	switch {
	case !own:
		return "", false, nil
	case !named:
		return "", true, storage.ErrNotFound
	}
	key, err = a.downloadKey(ctx, owner, kind, uuid, name)
	return key, true, err
}

// syncCover makes the stored cover follow the image field after an
// update changed it from before: a foreign URL is fetched, one of this
// server's download URLs (e.g. a preset's cover) is copied, null removes
// it. It returns the keys to keep in the image folder (for prune).
func (a *App) syncCover(ctx context.Context, owner string, ik imageKeys, before, beforeThumb, after *string, img, thumb **string) (changed bool, err error) {
	if after == nil {
		*thumb = nil
		return before != nil, nil
	}
	if before != nil && *before == *after {
		// Apply drops the thumbnail whenever image is sent; the same
		// image keeps its thumbnail.
		*thumb = beforeThumb
		return false, nil
	}
	src, own, err := a.ownDownload(ctx, owner, *after)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return false, fieldError("image", "no such file on this server")
		}
		return false, err
	}
	var u, t string
	if own {
		if _, err := a.blobs.Stat(ctx, src); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return false, fieldError("image", "no such file on this server")
			}
			return false, err
		}
		if u, t, err = a.storeCover(ctx, "image", ik, src, path.Base(src)); err != nil {
			return false, err
		}
	} else {
		var th []byte
		checkImage := func(key string) (err error) {
			th, err = a.coverThumbnail(ctx, "image", key)
			return err
		}
		name, err := a.fetchInto(ctx, "image", *after, "cover", func(n string) string { return ik.key(ik.uuid, n) }, checkImage)
		if err != nil {
			return false, err
		}
		if u, t, err = a.putCover(ctx, ik, ik.key(ik.uuid, name), name, th); err != nil {
			return false, err
		}
	}
	*img, *thumb = &u, &t
	return true, nil
}

// syncInput fetches and probes a main input given as an http(s) URL (with
// no service), storing it under the production's input key; input_file
// then reads back as the file name.
func (a *App) syncInput(ctx context.Context, p *production.Production, before string) (changed bool, err error) {
	if p.InputFile == "" || p.InputFile == before || p.Service != nil || !IsAbsURL(p.InputFile) {
		return false, nil
	}
	var info probed
	name, err := a.fetchInto(ctx, "input_file", p.InputFile, "input", func(n string) string { return production.InputKey(p.UUID, n) }, a.probeInto(ctx, "input_file", &info))
	if err != nil {
		return false, err
	}
	p.InputFile = name
	setInputInfo(p, info)
	return true, nil
}

// syncMedia runs syncInput and syncCover for a production changed from
// before, and returns a cleanup to run once the change is stored.
func (a *App) syncMedia(ctx context.Context, owner string, before, p *production.Production) (func(), error) {
	if err := a.checkWebhookChange(ctx, before, p); err != nil {
		return nil, err
	}
	inChanged, err := a.syncInput(ctx, p, before.InputFile)
	if err != nil {
		return nil, err
	}
	svcChanged, err := a.syncServiceInput(ctx, owner, p, before)
	if err != nil {
		return nil, err
	}
	inChanged = inChanged || svcChanged
	multiChanged, err := a.syncMultiInputs(ctx, owner, p, before)
	if err != nil {
		return nil, err
	}
	ik := productionImages(p.UUID)
	imgChanged, err := a.syncCover(ctx, owner, ik, before.Image, before.Thumbnail, p.Image, &p.Image, &p.Thumbnail)
	if err != nil {
		return nil, err
	}
	chapterImages, err := a.syncChapterImages(ctx, owner, p)
	if err != nil {
		return nil, err
	}
	return func() {
		a.prune(ctx, production.ChapterImagePrefix(p.UUID), chapterImages...)
		if inChanged {
			a.prune(ctx, production.InputPrefix(p.UUID), production.InputKey(p.UUID, p.InputFile))
		}
		if imgChanged {
			a.pruneImages(ctx, ik, p.Image)
		}
		for _, m := range p.MultiInputFiles {
			if slices.Contains(multiChanged, m.ID) {
				a.prune(ctx, production.IntroPrefix(p.UUID, m.ID), production.IntroKey(p.UUID, m.ID, m.InputFile))
			}
		}
	}, nil
}

// pruneImages deletes the old covers of a resource whose image is now img.
func (a *App) pruneImages(ctx context.Context, ik imageKeys, img *string) {
	var keep []string
	if img != nil {
		if u, err := url.Parse(*img); err == nil {
			name, _ := url.PathUnescape(path.Base(u.EscapedPath()))
			keep = append(keep, ik.key(ik.uuid, name), ik.thumb(ik.uuid, name))
		}
	}
	a.prune(ctx, ik.prefix, keep...)
}
