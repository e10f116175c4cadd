package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production/artwork"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/outbound"
)

// storeBlob streams r into a new blob; on any error nothing is stored.
func (s *server) storeBlob(ctx context.Context, key string, r io.Reader) (int64, error) {
	w, err := s.blobs.Create(ctx, key)
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
func (s *server) stagingKey(ctx context.Context, final string) (string, error) {
	_, err := s.blobs.Stat(ctx, final)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return final, nil
	case err != nil:
		return "", err
	}
	return path.Dir(final) + "/staged-" + storage.NewUUID() + "-" + path.Base(final), nil
}

// promote moves a checked file from its staging key to final.
func (s *server) promote(ctx context.Context, staged, final string) error {
	if staged == final {
		return nil
	}
	if err := s.copyBlob(ctx, staged, final); err != nil {
		return err
	}
	s.discard(ctx, staged)
	return nil
}

// discard deletes a blob nobody refers to; failures are only logged.
func (s *server) discard(ctx context.Context, key string) {
	if err := s.blobs.Delete(context.WithoutCancel(ctx), key); err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.log.WarnContext(ctx, "httpapi: deleting blob", "key", key, "err", err)
	}
}

// storeChecked writes a new file for final through write, runs check on
// it (nil: none) and only then puts it under final.
func (s *server) storeChecked(ctx context.Context, final string, write, check func(key string) error) error {
	key, err := s.stagingKey(ctx, final)
	if err != nil {
		return err
	}
	if err := write(key); err != nil {
		return err
	}
	if check != nil {
		if err := check(key); err != nil {
			s.discard(ctx, key)
			return err
		}
	}
	return s.promote(ctx, key, final)
}

// probeInto returns a check that probes the file as field's input and
// keeps what it found in info.
func (s *server) probeInto(ctx context.Context, field string, info *audio.Info) func(key string) error {
	return func(key string) (err error) {
		*info, err = s.probeBlob(ctx, field, key)
		return err
	}
}

// fetchInto downloads rawURL through the outbound client into the blob
// that key(name) names, where name is the file name the server gave (or
// the URL's), once check (nil: none) accepts it. Failures are form errors
// of field.
func (s *server) fetchInto(ctx context.Context, field, rawURL, fallback string, key func(name string) string, check func(key string) error) (name string, err error) {
	name = fileNameOf(rawURL, fallback)
	tmp := key("fetch-" + storage.NewUUID())
	w, err := s.blobs.Create(ctx, tmp)
	if err != nil {
		return "", err
	}
	_, _, fname, err := s.fetch.Fetch(ctx, rawURL, w)
	if err != nil {
		w.Abort()
		return "", s.fetchError(ctx, field, err, s.maxUp)
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	defer s.discard(ctx, tmp)
	if fname = production.SanitizeName(fname); fname != "" {
		name = fname
	}
	if check != nil {
		if err := check(tmp); err != nil {
			return "", err
		}
	}
	if err := s.copyBlob(ctx, tmp, key(name)); err != nil {
		return "", err
	}
	return name, nil
}

// fetchError maps a failed fetch of field's URL, limited to limit bytes.
func (s *server) fetchError(ctx context.Context, field string, err error, limit int64) error {
	switch {
	case errors.Is(err, outbound.ErrForbiddenAddress):
		return fieldError(field, "points to a private, loopback or otherwise forbidden address")
	case errors.Is(err, outbound.ErrTooLarge), errors.Is(err, errTooLarge):
		return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("%s: the file at the URL is larger than %d bytes", field, limit))
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
func (s *server) syncChapterImages(ctx context.Context, owner string, p *production.Production) (keep []string, err error) {
	for i := range p.Chapters {
		c := &p.Chapters[i]
		if c.Image == nil || *c.Image == "" {
			continue
		}
		field := fmt.Sprintf("chapters.%d.image", i)
		src, own, err := s.ownDownload(ctx, owner, *c.Image)
		if err == nil && own {
			_, err = s.blobs.Stat(ctx, src)
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
			err = s.readBlob(ctx, src, buf)
		} else if _, _, _, err = s.fetch.Fetch(ctx, *c.Image, buf); err != nil {
			return nil, s.fetchError(ctx, field, err, production.MaxChapterImageBytes)
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
		if _, err := s.storeBlob(ctx, key, bytes.NewReader(buf.Bytes())); err != nil {
			return nil, err
		}
		u := s.downloadURL(dlUpload, p.UUID, name)
		c.Image = &u
		keep = append(keep, key)
	}
	return keep, nil
}

// readBlob copies the blob at key into w.
func (s *server) readBlob(ctx context.Context, key string, w io.Writer) error {
	rc, _, err := s.blobs.Open(ctx, key)
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

func (s *server) copyBlob(ctx context.Context, from, to string) error {
	if from == to {
		return nil
	}
	rc, _, err := s.blobs.Open(ctx, from)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = s.storeBlob(ctx, to, rc)
	return err
}

// prune deletes the blobs under prefix except keep; cleanup after a
// replaced file, so failures are only logged.
func (s *server) prune(ctx context.Context, prefix string, keep ...string) {
	ctx = context.WithoutCancel(ctx)
	infos, err := s.blobs.List(ctx, prefix)
	if err != nil {
		s.log.WarnContext(ctx, "httpapi: listing blobs to prune", "prefix", prefix, "err", err)
		return
	}
	for _, b := range infos {
		if slices.Contains(keep, b.Key) {
			continue
		}
		if err := s.blobs.Delete(ctx, b.Key); err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.log.WarnContext(ctx, "httpapi: pruning blob", "key", b.Key, "err", err)
		}
	}
}

// probeBlob probes a stored input file and decodes it whole
// (decodeCheck). A file that no codec reads, or that is damaged or
// truncated, is a form error of field; messages name the file, never the
// server's path to it.
func (s *server) probeBlob(ctx context.Context, field, key string) (audio.Info, error) {
	rc, _, err := s.blobs.Open(ctx, key)
	if err != nil {
		return audio.Info{}, err
	}
	info, err := audio.Probe(ctx, rc)
	rc.Close()
	if err != nil {
		if ctx.Err() != nil {
			return info, ctx.Err()
		}
		return info, fieldError(field, "is not a supported audio or video file: "+scrubPaths(err.Error(), displayName(key, field)))
	}
	return info, s.decodeCheck(ctx, field, key, info)
}

// setInputInfo copies a probe of the main input into p and imports its
// tags into metadata fields that are still empty.
func setInputInfo(p *production.Production, info audio.Info) {
	p.Channels, p.SampleRate, p.Bitrate = info.Channels, info.SampleRate, info.Bitrate
	p.Format, p.HasVideo, p.Length, p.InputLength = info.Format, info.HasVideo, info.Length, info.Length
	p.Metadata.ImportTags(info.Tags)
}

func setTrackInfo(m *production.MultiInputFile, info audio.Info) {
	m.InputChannels, m.InputSampleRate, m.InputBitrate = info.Channels, info.SampleRate, info.Bitrate
	m.InputFiletype, m.InputLength = info.Format, info.Length
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
	return imageKeys{dlUpload, uuid, production.ImagePrefix(uuid), production.ImageKey, production.ThumbnailKey}
}

func presetImages(uuid string) imageKeys {
	return imageKeys{dlPreset, uuid, production.PresetImagePrefix(uuid), production.PresetImageKey, production.PresetThumbnailKey}
}

// coverThumbnail makes the thumbnail of the image in the blob at key. A
// file that is not a PNG or JPEG image the engine can embed is a form
// error of field.
func (s *server) coverThumbnail(ctx context.Context, field, key string) ([]byte, error) {
	rc, _, err := s.blobs.Open(ctx, key)
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
func (s *server) storeCover(ctx context.Context, field string, ik imageKeys, src, name string) (img, thumb string, err error) {
	th, err := s.coverThumbnail(ctx, field, src)
	if err != nil {
		return "", "", err
	}
	return s.putCover(ctx, ik, src, name, th)
}

// putCover is storeCover for an image already checked, with its thumbnail.
func (s *server) putCover(ctx context.Context, ik imageKeys, src, name string, th []byte) (img, thumb string, err error) {
	if err := s.copyBlob(ctx, src, ik.key(ik.uuid, name)); err != nil {
		return "", "", err
	}
	if _, err := s.storeBlob(ctx, ik.thumb(ik.uuid, name), bytes.NewReader(th)); err != nil {
		return "", "", err
	}
	return s.downloadURL(ik.kind, ik.uuid, name), s.downloadURL(ik.kind, ik.uuid, production.ThumbnailName(name)), nil
}

// imageProblem words a artwork.ErrImage for form_errors.
func imageProblem(err error) string {
	return "is not a usable PNG or JPEG image (" + strings.TrimPrefix(err.Error(), artwork.ErrImage.Error()+": ") + ")"
}

// ownDownload resolves a download URL of this server to the blob key it
// serves, for owner (so another user's file is not found). ok is false
// for foreign URLs.
func (s *server) ownDownload(ctx context.Context, owner, rawURL string) (key string, ok bool, err error) {
	prefix := s.base + "/api/download/"
	if !strings.HasPrefix(rawURL, prefix) {
		return "", false, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false, nil
	}
	rest := strings.TrimPrefix(u.EscapedPath(), strings.TrimSuffix(mustPath(prefix), "/")+"/")
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return "", true, storage.ErrNotFound
	}
	for i := range parts {
		if parts[i], err = url.PathUnescape(parts[i]); err != nil {
			return "", true, storage.ErrNotFound
		}
	}
	key, err = s.downloadKey(ctx, owner, parts[0], parts[1], parts[2])
	return key, true, err
}

func mustPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.EscapedPath()
}

// downloadKey maps a download path to its blob key after checking that
// owner owns the resource; the file itself may still be missing.
func (s *server) downloadKey(ctx context.Context, owner, kind, uuid, name string) (string, error) {
	switch kind {
	case dlResult, dlUpload:
		if _, err := s.store.GetResource(ctx, owner, storage.KindProduction, uuid); err != nil {
			return "", err
		}
		if kind == dlResult {
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
		if _, err := s.blobs.Stat(ctx, key); err == nil {
			return key, nil
		}
		if production.IsChapterImageName(name) {
			return production.ChapterImageKey(uuid, name), nil
		}
		return production.ImageKey(uuid, name), nil
	case dlPreset:
		if _, err := s.store.GetResource(ctx, owner, storage.KindPreset, uuid); err != nil {
			return "", err
		}
		if strings.Contains(name, "/") {
			return "", storage.ErrNotFound
		}
		return production.PresetImageKey(uuid, name), nil
	}
	return "", storage.ErrNotFound
}

// syncCover makes the stored cover follow the image field after an
// update changed it from before: a foreign URL is fetched, one of this
// server's download URLs (e.g. a preset's cover) is copied, null removes
// it. It returns the keys to keep in the image folder (for prune).
func (s *server) syncCover(ctx context.Context, owner string, ik imageKeys, before, beforeThumb, after *string, img, thumb **string) (changed bool, err error) {
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
	src, own, err := s.ownDownload(ctx, owner, *after)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return false, fieldError("image", "no such file on this server")
		}
		return false, err
	}
	var u, t string
	if own {
		if _, err := s.blobs.Stat(ctx, src); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return false, fieldError("image", "no such file on this server")
			}
			return false, err
		}
		if u, t, err = s.storeCover(ctx, "image", ik, src, path.Base(src)); err != nil {
			return false, err
		}
	} else {
		var th []byte
		checkImage := func(key string) (err error) {
			th, err = s.coverThumbnail(ctx, "image", key)
			return err
		}
		name, err := s.fetchInto(ctx, "image", *after, "cover", func(n string) string { return ik.key(ik.uuid, n) }, checkImage)
		if err != nil {
			return false, err
		}
		if u, t, err = s.putCover(ctx, ik, ik.key(ik.uuid, name), name, th); err != nil {
			return false, err
		}
	}
	*img, *thumb = &u, &t
	return true, nil
}

// syncInput fetches and probes a main input given as an http(s) URL (with
// no service), storing it under the production's input key; input_file
// then reads back as the file name.
func (s *server) syncInput(ctx context.Context, p *production.Production, before string) (changed bool, err error) {
	if p.InputFile == "" || p.InputFile == before || p.Service != nil || !isAbsURL(p.InputFile) {
		return false, nil
	}
	var info audio.Info
	name, err := s.fetchInto(ctx, "input_file", p.InputFile, "input", func(n string) string { return production.InputKey(p.UUID, n) }, s.probeInto(ctx, "input_file", &info))
	if err != nil {
		return false, err
	}
	p.InputFile = name
	setInputInfo(p, info)
	return true, nil
}

// syncMedia runs syncInput and syncCover for a production changed from
// before, and returns a cleanup to run once the change is stored.
func (s *server) syncMedia(ctx context.Context, owner string, before, p *production.Production) (func(), error) {
	if err := s.checkWebhookChange(ctx, before, p); err != nil {
		return nil, err
	}
	inChanged, err := s.syncInput(ctx, p, before.InputFile)
	if err != nil {
		return nil, err
	}
	svcChanged, err := s.syncServiceInput(ctx, owner, p, before)
	if err != nil {
		return nil, err
	}
	inChanged = inChanged || svcChanged
	multiChanged, err := s.syncMultiInputs(ctx, owner, p, before)
	if err != nil {
		return nil, err
	}
	ik := productionImages(p.UUID)
	imgChanged, err := s.syncCover(ctx, owner, ik, before.Image, before.Thumbnail, p.Image, &p.Image, &p.Thumbnail)
	if err != nil {
		return nil, err
	}
	chapterImages, err := s.syncChapterImages(ctx, owner, p)
	if err != nil {
		return nil, err
	}
	return func() {
		s.prune(ctx, production.ChapterImagePrefix(p.UUID), chapterImages...)
		if inChanged {
			s.prune(ctx, production.InputPrefix(p.UUID), production.InputKey(p.UUID, p.InputFile))
		}
		if imgChanged {
			s.pruneImages(ctx, ik, p.Image)
		}
		for _, m := range p.MultiInputFiles {
			if slices.Contains(multiChanged, m.ID) {
				s.prune(ctx, production.IntroPrefix(p.UUID, m.ID), production.IntroKey(p.UUID, m.ID, m.InputFile))
			}
		}
	}, nil
}

// pruneImages deletes the old covers of a resource whose image is now img.
func (s *server) pruneImages(ctx context.Context, ik imageKeys, img *string) {
	var keep []string
	if img != nil {
		if u, err := url.Parse(*img); err == nil {
			name, _ := url.PathUnescape(path.Base(u.EscapedPath()))
			keep = append(keep, ik.key(ik.uuid, name), ik.thumb(ik.uuid, name))
		}
	}
	s.prune(ctx, ik.prefix, keep...)
}

// contentTypeIs reports whether the request's media type is one of want.
func contentTypeIs(r *http.Request, want ...string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && slices.Contains(want, mt)
}
