package httpapi

import (
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"slices"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// uploaded is one file of a multipart request, stored under staged until
// checked, then under key.
type uploaded struct {
	field, key, name string
	staged           string
}

// stagePart stores a file part under the staging key of final.
func (s *server) stagePart(ctx context.Context, part *multipart.Part, field, final, name string) (uploaded, error) {
	staged, err := s.stagingKey(ctx, final)
	if err != nil {
		return uploaded{}, err
	}
	if err := s.storePart(ctx, part, staged); err != nil {
		return uploaded{}, err
	}
	return uploaded{field: field, key: final, name: name, staged: staged}, nil
}

// multipartReader checks the content type and wraps the body in the
// upload size limit.
func (s *server) multipartReader(w http.ResponseWriter, r *http.Request) (*multipart.Reader, error) {
	if !contentTypeIs(r, "multipart/form-data") {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the request body must be multipart/form-data")
	}
	if r.ContentLength > s.maxUp {
		// Refused before reading a byte of it.
		return nil, newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the upload is larger than the server's limit")
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUp)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, newError(http.StatusBadRequest, CodeBadRequest, "malformed multipart body: "+err.Error())
	}
	return mr, nil
}

// partError maps a failure while reading a multipart body.
func partError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the upload is larger than the server's limit")
	}
	return newError(http.StatusBadRequest, CodeBadRequest, "malformed multipart body: "+err.Error())
}

// eachPart calls fn for every part of a multipart body. A field sent
// twice is an error.
func eachPart(mr *multipart.Reader, fn func(p *multipart.Part) error) error {
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return partError(err)
		}
		field := part.FormName()
		if field == "" {
			part.Close()
			continue
		}
		if seen[field] {
			part.Close()
			return fieldError(field, "was sent twice")
		}
		seen[field] = true
		err = fn(part)
		part.Close()
		if err != nil {
			return err
		}
	}
}

// storePart stores a file part under key.
func (s *server) storePart(ctx context.Context, part *multipart.Part, key string) error {
	if _, err := s.storeBlob(ctx, key, part); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || ctx.Err() == nil {
			return partError(err)
		}
		return err
	}
	return nil
}

// uploadName is the sanitized file name of a part, or fallback.
func uploadName(part *multipart.Part, fallback string) string {
	if n := production.SanitizeName(part.FileName()); n != "" {
		return n
	}
	return fallback
}

// uploadProduction: POST /api/production/{uuid}/upload.json (multipart):
// image, input_file, intro_file, outro_file and one field per
// multi_input_files id. Files are stored under the blob layout of package
// production, inputs probed (format, channels, samplerate, bitrate,
// length, has_video; tags imported into empty metadata), covers get a
// thumbnail. The response is the updated production.
func (s *server) uploadProduction(w http.ResponseWriter, r *http.Request, u storage.User, id string) (err error) {
	ctx := r.Context()
	p, _, err := s.loadProduction(ctx, s.store, u.ID, id)
	if err != nil {
		return err
	}
	if !p.CanChange() {
		return production.ErrProcessing
	}
	mr, err := s.multipartReader(w, r)
	if err != nil {
		return err
	}
	var ups []uploaded
	defer func() {
		for _, up := range ups {
			if err != nil || up.staged != up.key {
				s.discard(ctx, up.staged)
			}
		}
	}()
	err = eachPart(mr, func(part *multipart.Part) error {
		field := part.FormName()
		if part.FileName() == "" {
			return fieldError(field, "must be a file")
		}
		name := uploadName(part, field)
		var key string
		switch field {
		case "image":
			key = production.ImageKey(id, name)
		case "input_file":
			key = production.InputKey(id, name)
		case "intro_file":
			key = production.IntroKey(id, production.InputIntro, name)
		case "outro_file":
			key = production.IntroKey(id, production.InputOutro, name)
		default:
			if !slices.ContainsFunc(p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.ID == field }) {
				return fieldError(field, "is not an upload field: use image, input_file, intro_file, outro_file or the id of a multi_input_files entry")
			}
			key = production.IntroKey(id, field, name)
		}
		up, err := s.stagePart(ctx, part, field, key, name)
		if err != nil {
			return err
		}
		ups = append(ups, up)
		return nil
	})
	if err != nil {
		return err
	}
	if len(ups) == 0 {
		return newError(http.StatusBadRequest, CodeBadRequest, "the upload contains no file")
	}
	// Every file is checked before any replaces a stored one, and every
	// bad one is reported.
	infos := map[string]audio.Info{}
	var th []byte
	bad := production.FieldErrors{}
	for _, up := range ups {
		if up.field == "image" {
			th, err = s.coverThumbnail(ctx, "image", up.staged)
		} else {
			infos[up.field], err = s.probeBlob(ctx, up.field, up.staged)
		}
		if fe := formErrors(err); fe != nil {
			bad.Merge("", fe)
		} else if err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return invalid(bad)
	}
	var img, thumb string
	for _, up := range ups {
		if up.field == "image" {
			if img, thumb, err = s.putCover(ctx, productionImages(id), up.staged, up.name, th); err != nil {
				return err
			}
			continue
		}
		if err := s.copyBlob(ctx, up.staged, up.key); err != nil {
			return err
		}
	}
	p, err = s.updateProduction(ctx, u.ID, id, func(p *production.Production) error {
		if !p.CanChange() {
			return production.ErrProcessing
		}
		for _, up := range ups {
			info := infos[up.field]
			switch up.field {
			case "image":
				p.Image, p.Thumbnail = &img, &thumb
			case "input_file":
				p.InputFile, p.Service = up.name, nil
				setInputInfo(p, info)
			case "intro_file", "outro_file":
				typ := production.InputIntro
				if up.field == "outro_file" {
					typ = production.InputOutro
				}
				// One single intro (outro): the upload replaces them all.
				p.MultiInputFiles = slices.DeleteFunc(p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.Type == typ || m.ID == typ })
				m := production.MultiInputFile{Type: typ, ID: typ, InputFile: up.name}
				setTrackInfo(&m, info)
				p.MultiInputFiles = append(p.MultiInputFiles, m)
			default:
				i := slices.IndexFunc(p.MultiInputFiles, func(m production.MultiInputFile) bool { return m.ID == up.field })
				if i < 0 {
					return fieldError(up.field, "the multi_input_files entry was removed meanwhile")
				}
				m := &p.MultiInputFiles[i]
				m.InputFile, m.Service = up.name, ""
				setTrackInfo(m, info)
			}
		}
		// Validates the result and moves the status from Incomplete to
		// Not Started now that there is an input.
		return p.Apply(&production.Input{}, s.applyOpts())
	})
	if err != nil {
		return err
	}
	for _, up := range ups {
		switch up.field {
		case "image":
			s.pruneImages(ctx, productionImages(id), p.Image)
		case "input_file":
			s.prune(ctx, production.InputPrefix(id), up.key)
		case "intro_file":
			s.prune(ctx, production.IntroPrefix(id, production.InputIntro), up.key)
		case "outro_file":
			s.prune(ctx, production.IntroPrefix(id, production.InputOutro), up.key)
		default:
			s.prune(ctx, production.IntroPrefix(id, up.field), up.key)
		}
	}
	ok(w, s.productionView(p))
	return nil
}

// uploadPreset: POST /api/preset/{uuid}/upload.json takes only image:
// preset intros and outros come from external services (spec).
func (s *server) uploadPreset(w http.ResponseWriter, r *http.Request, u storage.User, id string) (err error) {
	ctx := r.Context()
	if _, _, err := s.loadPreset(ctx, s.store, u.ID, id); err != nil {
		return err
	}
	mr, err := s.multipartReader(w, r)
	if err != nil {
		return err
	}
	var up *uploaded
	defer func() {
		if up != nil && (err != nil || up.staged != up.key) {
			s.discard(ctx, up.staged)
		}
	}()
	err = eachPart(mr, func(part *multipart.Part) error {
		field := part.FormName()
		if field != "image" {
			return fieldError(field, "presets take only an image upload; their intros and outros must come from an external service or URL")
		}
		if part.FileName() == "" {
			return fieldError(field, "must be a file")
		}
		name := uploadName(part, "cover")
		staged, err := s.stagePart(ctx, part, field, production.PresetImageKey(id, name), name)
		if err != nil {
			return err
		}
		up = &staged
		return nil
	})
	if err != nil {
		return err
	}
	if up == nil {
		return newError(http.StatusBadRequest, CodeBadRequest, "the upload contains no file")
	}
	ik := presetImages(id)
	img, thumb, err := s.storeCover(ctx, "image", ik, up.staged, up.name)
	if err != nil {
		return err
	}
	pr, err := s.updatePresetImage(ctx, u.ID, id, img, thumb)
	if err != nil {
		return err
	}
	s.pruneImages(ctx, ik, pr.Image)
	ok(w, s.presetView(pr))
	return nil
}
