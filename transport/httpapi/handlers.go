package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/internal/simpleform"
)

// readJSON reads a JSON request body within MaxBodyBytes. A body with a
// Content-Type other than JSON is 415; a missing Content-Type is taken as
// JSON, since many clients omit it.
func (s *server) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Header.Get("Content-Type") != "" && !simpleform.ContentTypeIs(r, "application/json", "text/json") {
		return nil, envelope.New(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the request body must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, envelope.New(http.StatusRequestEntityTooLarge, CodeTooLarge, "the request body is larger than "+strconv.FormatInt(s.maxBody, 10)+" bytes")
		}
		return nil, envelope.New(http.StatusBadRequest, CodeBadRequest, "reading the request body: "+err.Error())
	}
	return body, nil
}

// getProduction: GET /api/production/{uuid}.json.
func (s *server) getProduction(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return envelope.ErrNotFound
	}
	p, err := s.app.GetProduction(r.Context(), u, id)
	if err != nil {
		return err
	}
	v := s.productionView(p)
	if v.WebhookDeliveries, err = s.app.WebhookDeliveries(r.Context(), u, id); err != nil {
		return err
	}
	envelope.OK(w, v)
	return nil
}

// deleteResource: DELETE /api/production/{uuid}.json and
// /api/preset/{uuid}.json. As the spec says, the production path deletes
// a preset too: both kinds are tried, the path's kind first. A production
// being processed cannot be deleted (409; stop it first).
func (s *server) deleteResource(first storage.Kind) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		id, okName := jsonName(r, "file")
		if !okName {
			return envelope.ErrNotFound
		}
		ctx := r.Context()
		deletes := []func(context.Context, storage.User, string) error{s.app.DeleteProduction, s.app.DeletePreset}
		if first == storage.KindPreset {
			deletes[0], deletes[1] = deletes[1], deletes[0]
		}
		for _, del := range deletes {
			err := del(ctx, u, id)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			envelope.OK(w, map[string]string{"uuid": id})
			return nil
		}
		return envelope.ErrNotFound
	}
}

// wrapCommand turns the body of POST {kind}/{uuid}/{cmd}.json into the
// update request {"cmd": body}, so type errors carry the field's path.
// The webhook command also takes {"webhook": url}.
func (s *server) wrapCommand(w http.ResponseWriter, r *http.Request, cmd string) ([]byte, error) {
	body, err := s.readJSON(w, r)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, envelope.New(http.StatusBadRequest, CodeMalformedJSON, "request body is not valid JSON: "+err.Error())
	}
	if cmd == "webhook" {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			if v, ok := obj["webhook"]; ok {
				raw = v
			} else if v, ok := obj["url"]; ok {
				raw = v
			}
		}
	}
	return json.Marshal(map[string]json.RawMessage{cmd: raw})
}

// commandFields are the sub-commands that set one field.
var commandFields = map[string]bool{
	"metadata": true, "output_files": true, "outgoing_services": true, "algorithms": true, "chapters": true,
	"multi_input_files": true, "speech_recognition": true, "webhook": true,
}

// productionCommand: POST /api/production/{uuid}/{cmd}.json.
func (s *server) productionCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	id := r.PathValue("uuid")
	switch {
	case !okName:
		return envelope.ErrNotFound
	case cmd == "start":
		p, err := s.app.StartProduction(r.Context(), u, id)
		return respond(w, s.productionView, p, err)
	case cmd == "stop":
		p, err := s.app.StopProduction(r.Context(), u, id)
		return respond(w, s.productionView, p, err)
	case cmd == "upload":
		return s.uploadProduction(w, r, u, id)
	case !commandFields[cmd]:
		return envelope.ErrNotFound
	}
	body, err := s.wrapCommand(w, r, cmd)
	if err != nil {
		return err
	}
	in, err := production.DecodeInput(body)
	if err != nil {
		return envelope.DecodeError(err)
	}
	p, err := s.app.UpdateProduction(r.Context(), u, id, in)
	return respond(w, s.productionView, p, err)
}

// presetCommand: POST /api/preset/{uuid}/{cmd}.json.
func (s *server) presetCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	id := r.PathValue("uuid")
	switch {
	case !okName:
		return envelope.ErrNotFound
	case cmd == "upload":
		return s.uploadPreset(w, r, u, id)
	case !commandFields[cmd]:
		return envelope.ErrNotFound
	}
	body, err := s.wrapCommand(w, r, cmd)
	if err != nil {
		return err
	}
	in, err := preset.DecodeInput(body)
	if err != nil {
		return envelope.DecodeError(err)
	}
	pr, err := s.app.UpdatePreset(r.Context(), u, id, in)
	return respond(w, same, pr, err)
}

// deletableLists are the DELETE sub-commands.
var deletableLists = map[string]production.List{
	"output_files": production.ListOutputFiles, "chapters": production.ListChapters,
	"multi_input_files": production.ListMultiInputFiles, "speech_recognition": production.ListSpeechRecognition,
	"webhook": app.ListWebhook,
}

// clearedList serves DELETE /api/{production,preset}/{uuid}/{list}.json.
func clearedList[T, V any](clear func(context.Context, storage.User, string, production.List) (T, error), view func(T) V) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		cmd, okName := jsonName(r, "cmd")
		list, known := deletableLists[cmd]
		if !okName || !known {
			return envelope.ErrNotFound
		}
		v, err := clear(r.Context(), u, r.PathValue("uuid"), list)
		return respond(w, view, v, err)
	}
}

// productionQuery: GET /api/production/{uuid}/status.json.
func (s *server) productionQuery(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if !okName || cmd != "status" {
		return envelope.ErrNotFound
	}
	pg, err := s.app.ProductionProgress(r.Context(), u, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	envelope.OK(w, map[string]any{"uuid": pg.UUID, "status": pg.Status, "status_string": pg.Status.String(), "progress": pg.Percent})
	return nil
}

// MaxListLimit caps limit for uuids_only and minimal_data lists; full
// lists are capped at 10 as the spec says.
const (
	MaxListLimit  = 1000
	FullListLimit = 10
)

type listParams struct {
	limit, offset      int
	uuidsOnly, minimal bool
}

func parseList(r *http.Request) (listParams, error) {
	q := r.URL.Query()
	lp := listParams{limit: FullListLimit, uuidsOnly: isTrue(q.Get("uuids_only")), minimal: isTrue(q.Get("minimal_data"))}
	capLimit := FullListLimit
	if lp.uuidsOnly || lp.minimal {
		capLimit = MaxListLimit
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"limit", &lp.limit}, {"offset", &lp.offset}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return lp, envelope.FieldError(f.name, "must be a whole number >= 0")
		}
		*f.dst = n
	}
	if lp.limit == 0 || lp.limit > capLimit {
		lp.limit = capLimit
	}
	return lp, nil
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}
