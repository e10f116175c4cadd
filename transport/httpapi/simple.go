package httpapi

import (
	"net/http"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/internal/simpleform"
)

// simpleCreate: POST /api/simple/productions.json (multipart/form-data).
// It builds the JSON API's creation request from the form (metadata
// fields, comma-separated tags, algorithm keys, chapters as text file or
// string), creates the production from the preset, stores an uploaded
// input_file or image, fetches URL ones, and with action=start starts it
// in the same transaction. The response is the production. A field the
// simple API does not know is a form error (simpleform.UnknownFields),
// reported before any uploaded file is stored.
func (s *server) simpleCreate(w http.ResponseWriter, r *http.Request, u storage.User) error {
	p, err := simpleform.Create(w, r, s.app, u, s.maxUp, simpleform.Hooks{Check: simpleform.UnknownFields})
	if err != nil {
		return err
	}
	envelope.OK(w, s.productionView(p))
	return nil
}
