package httpapi

import (
	"mime"
	"net/http"
	"path"

	"github.com/audiopost/audiopost/storage"
)

// download: GET /api/download/{kind}/{uuid}/{filename}, with Range
// support through http.ServeContent. kind is audio-result (output files),
// audio-upload (input, cover image, thumbnail; intros and tracks as
// {id}/{filename}) or preset (preset cover and thumbnail). Another user's
// files are 404 like missing ones.
func (s *server) download(w http.ResponseWriter, r *http.Request, u storage.User) error {
	name := r.PathValue("name")
	rc, info, err := s.app.OpenDownload(r.Context(), u, r.PathValue("kind"), r.PathValue("uuid"), name)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": path.Base(name)}))
	// Uploaded files are user content: never let a browser run them as a
	// page of this origin.
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	http.ServeContent(w, r, path.Base(name), info.ModTime, rc)
	return nil
}
