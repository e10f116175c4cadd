package httpapi

import (
	"mime/multipart"
	"net/http"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/internal/simpleform"
)

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
	mr, err := simpleform.Reader(w, r, s.maxUp)
	if err != nil {
		return err
	}
	err = simpleform.EachPart(mr, func(part *multipart.Part) error {
		if part.FileName() == "" {
			return envelope.FieldError(part.FormName(), "must be a file")
		}
		return simpleform.AddPart(ctx, up, part)
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
	mr, err := simpleform.Reader(w, r, s.maxUp)
	if err != nil {
		return err
	}
	err = simpleform.EachPart(mr, func(part *multipart.Part) error {
		if part.FormName() == "image" && part.FileName() == "" {
			return envelope.FieldError("image", "must be a file")
		}
		return simpleform.AddPart(ctx, up, part)
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
