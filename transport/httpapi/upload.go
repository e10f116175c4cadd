package httpapi

import (
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// multipartReader checks the content type and wraps the body in the
// upload size limit.
func (s *server) multipartReader(w http.ResponseWriter, r *http.Request) (*multipart.Reader, error) {
	if !contentTypeIs(r, "multipart/form-data") {
		return nil, envelope.New(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the request body must be multipart/form-data")
	}
	if r.ContentLength > s.maxUp {
		// Refused before reading a byte of it.
		return nil, envelope.New(http.StatusRequestEntityTooLarge, CodeTooLarge, "the upload is larger than the server's limit")
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxUp)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, envelope.New(http.StatusBadRequest, CodeBadRequest, "malformed multipart body: "+err.Error())
	}
	return mr, nil
}

// partError maps a failure while reading a multipart body.
func partError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return envelope.New(http.StatusRequestEntityTooLarge, CodeTooLarge, "the upload is larger than the server's limit")
	}
	return envelope.New(http.StatusBadRequest, CodeBadRequest, "malformed multipart body: "+err.Error())
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
			return envelope.FieldError(field, "was sent twice")
		}
		seen[field] = true
		err = fn(part)
		part.Close()
		if err != nil {
			return err
		}
	}
}

// addPart hands a file part to up; failures to read or store it are
// the request's (a body over the limit, a broken multipart).
func addPart(ctx context.Context, up *app.Upload, part *multipart.Part) error {
	err := up.Add(ctx, part.FormName(), part.FileName(), part)
	var ce *app.CopyError
	if errors.As(err, &ce) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || ctx.Err() == nil {
			return partError(ce.Err)
		}
		return ce.Err
	}
	return err
}

// uploadProduction: POST /api/production/{uuid}/upload.json (multipart):
// image, input_file, intro_file, outro_file and one field per
// multi_input_files id (see App.SaveUpload). The response is the updated
// production.
func (s *server) uploadProduction(w http.ResponseWriter, r *http.Request, u storage.User, id string) error {
	ctx := r.Context()
	up, err := s.app.UploadTo(ctx, u, id)
	if err != nil {
		return err
	}
	mr, err := s.multipartReader(w, r)
	if err != nil {
		return err
	}
	err = eachPart(mr, func(part *multipart.Part) error {
		if part.FileName() == "" {
			return envelope.FieldError(part.FormName(), "must be a file")
		}
		return addPart(ctx, up, part)
	})
	if err != nil {
		up.Discard(ctx)
		return err
	}
	p, err := s.app.SaveUpload(ctx, up)
	if err != nil {
		return err
	}
	envelope.OK(w, s.productionView(p))
	return nil
}

// uploadPreset: POST /api/preset/{uuid}/upload.json takes only image:
// preset intros and outros come from external services (spec).
func (s *server) uploadPreset(w http.ResponseWriter, r *http.Request, u storage.User, id string) error {
	ctx := r.Context()
	up, err := s.app.UploadToPreset(ctx, u, id)
	if err != nil {
		return err
	}
	mr, err := s.multipartReader(w, r)
	if err != nil {
		return err
	}
	err = eachPart(mr, func(part *multipart.Part) error {
		if part.FormName() == "image" && part.FileName() == "" {
			return envelope.FieldError("image", "must be a file")
		}
		return addPart(ctx, up, part)
	})
	if err != nil {
		up.Discard(ctx)
		return err
	}
	pr, err := s.app.SavePresetUpload(ctx, up)
	if err != nil {
		return err
	}
	envelope.OK(w, pr)
	return nil
}
