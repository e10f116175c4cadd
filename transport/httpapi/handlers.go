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
	"github.com/audiopost/audiopost/storage"
)

// readJSON reads a JSON request body within MaxBodyBytes. A body with a
// Content-Type other than JSON is 415; a missing Content-Type is taken as
// JSON, since many clients omit it.
func (s *server) readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Header.Get("Content-Type") != "" && !contentTypeIs(r, "application/json", "text/json") {
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "the request body must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the request body is larger than "+strconv.FormatInt(s.maxBody, 10)+" bytes")
		}
		return nil, newError(http.StatusBadRequest, CodeBadRequest, "reading the request body: "+err.Error())
	}
	return body, nil
}

// decodeErr turns a decoding error into the envelope's: field type errors
// are form errors, anything else a malformed body.
func decodeErr(err error) error {
	var fe production.FieldErrors
	if errors.As(err, &fe) {
		return invalid(fe)
	}
	return newError(http.StatusBadRequest, CodeMalformedJSON, err.Error())
}

func (s *server) decodeProductionInput(w http.ResponseWriter, r *http.Request) (*production.Input, error) {
	body, err := s.readJSON(w, r)
	if err != nil {
		return nil, err
	}
	in, err := production.DecodeInput(body)
	if err != nil {
		return nil, decodeErr(err)
	}
	return in, nil
}

func (s *server) decodePresetInput(w http.ResponseWriter, r *http.Request) (*preset.Input, error) {
	body, err := s.readJSON(w, r)
	if err != nil {
		return nil, err
	}
	in, err := preset.DecodeInput(body)
	if err != nil {
		return nil, decodeErr(err)
	}
	return in, nil
}

// createProduction: POST /api/productions.json.
func (s *server) createProduction(w http.ResponseWriter, r *http.Request, u storage.User) error {
	in, err := s.decodeProductionInput(w, r)
	if err != nil {
		return err
	}
	opts, err := s.applyOptsFor(r.Context(), u.ID, in)
	if err != nil {
		return err
	}
	p, err := production.New(in, opts)
	if err != nil {
		return err
	}
	p.UUID = storage.NewUUID()
	if err := s.storeNewProduction(r.Context(), u.ID, p, &production.Production{}, false); err != nil {
		return err
	}
	ok(w, s.productionView(p))
	return nil
}

// storeNewProduction resolves services, fetches URL inputs and stores a
// new production; with start it is stored Waiting with its job in one
// transaction. Blobs written for it are removed when storing fails.
func (s *server) storeNewProduction(ctx context.Context, owner string, p, before *production.Production, start bool) (err error) {
	defer func() {
		if err != nil {
			s.prune(ctx, production.ProductionPrefix(p.UUID))
		}
	}()
	if err := s.resolveServices(ctx, owner, p); err != nil {
		return err
	}
	cleanup, err := s.syncMedia(ctx, owner, before, p)
	if err != nil {
		return err
	}
	defer cleanup()
	return s.service.Create(ctx, owner, p, start)
}

// createPreset: POST /api/presets.json.
func (s *server) createPreset(w http.ResponseWriter, r *http.Request, u storage.User) error {
	in, err := s.decodePresetInput(w, r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	opts, err := s.applyOptsFor(ctx, u.ID, &in.Input)
	if err != nil {
		return err
	}
	pr, err := preset.New(in, opts)
	if err != nil {
		return err
	}
	pr.UUID = storage.NewUUID()
	if err := s.resolvePresetServices(ctx, u.ID, pr); err != nil {
		return err
	}
	ik := presetImages(pr.UUID)
	if _, err := s.syncCover(ctx, u.ID, ik, nil, nil, pr.Image, &pr.Image, &pr.Thumbnail); err != nil {
		return err
	}
	doc, err := encodePreset(pr)
	if err != nil {
		return err
	}
	if err := s.store.CreateResource(ctx, &storage.Resource{UUID: pr.UUID, Owner: u.ID, Kind: storage.KindPreset, Doc: doc}); err != nil {
		s.prune(ctx, production.PresetPrefix(pr.UUID))
		return err
	}
	ok(w, s.presetView(pr))
	return nil
}

// getProduction: GET /api/production/{uuid}.json.
func (s *server) getProduction(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	p, _, err := s.loadProduction(r.Context(), s.store, u.ID, id)
	if err != nil {
		return err
	}
	v := s.productionView(p)
	if err := s.withDeliveries(r.Context(), u.ID, v); err != nil {
		return err
	}
	ok(w, v)
	return nil
}

// getPreset: GET /api/preset/{uuid}.json.
func (s *server) getPreset(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	pr, _, err := s.loadPreset(r.Context(), s.store, u.ID, id)
	if err != nil {
		return err
	}
	ok(w, s.presetView(pr))
	return nil
}

// applyProductionInput applies an update request to p (stored as
// before), fetching URL inputs; the cleanup runs after storing.
func (s *server) applyProductionInput(ctx context.Context, owner string, p *production.Production, in *production.Input) (func(), error) {
	before := p.Clone()
	opts, err := s.applyOptsFor(ctx, owner, in)
	if err != nil {
		return nil, err
	}
	if err := p.Apply(in, opts); err != nil {
		return nil, err
	}
	if in.ResetData || in.Service.Set || in.OutgoingServices != nil || in.SpeechRecognition.Set || in.Preset != "" {
		if err := s.resolveServices(ctx, owner, p); err != nil {
			return nil, err
		}
	}
	return s.syncMedia(ctx, owner, before, p)
}

// updateProductionHandler: POST /api/production/{uuid}.json.
func (s *server) updateProductionHandler(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	in, err := s.decodeProductionInput(w, r)
	if err != nil {
		return err
	}
	return s.updateWith(w, r, u, id, in)
}

func (s *server) updateWith(w http.ResponseWriter, r *http.Request, u storage.User, id string, in *production.Input) error {
	var cleanup func()
	p, err := s.updateProduction(r.Context(), u.ID, id, func(p *production.Production) error {
		var err error
		cleanup, err = s.applyProductionInput(r.Context(), u.ID, p, in)
		return err
	})
	if err != nil {
		return err
	}
	cleanup()
	ok(w, s.productionView(p))
	return nil
}

// updatePresetHandler: POST /api/preset/{uuid}.json.
func (s *server) updatePresetHandler(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	in, err := s.decodePresetInput(w, r)
	if err != nil {
		return err
	}
	return s.updatePresetWith(w, r, u, id, in)
}

func (s *server) updatePresetWith(w http.ResponseWriter, r *http.Request, u storage.User, id string, in *preset.Input) error {
	ctx := r.Context()
	imgChanged := false
	pr, err := s.updatePreset(ctx, u.ID, id, func(pr *preset.Preset) error {
		before, beforeThumb := pr.Image, pr.Thumbnail
		opts, err := s.applyOptsFor(ctx, u.ID, &in.Input)
		if err != nil {
			return err
		}
		if err := pr.Apply(in, opts); err != nil {
			return err
		}
		if err := s.resolvePresetServices(ctx, u.ID, pr); err != nil {
			return err
		}
		imgChanged, err = s.syncCover(ctx, u.ID, presetImages(pr.UUID), before, beforeThumb, pr.Image, &pr.Image, &pr.Thumbnail)
		return err
	})
	if err != nil {
		return err
	}
	if imgChanged {
		s.pruneImages(ctx, presetImages(pr.UUID), pr.Image)
	}
	ok(w, s.presetView(pr))
	return nil
}

// deleteResource: DELETE /api/production/{uuid}.json and
// /api/preset/{uuid}.json. As the spec says, the production path deletes
// a preset too: both kinds are tried, the path's kind first. A production
// being processed cannot be deleted (409; stop it first); a waiting one
// has its job canceled in the same transaction. Stored files go too.
func (s *server) deleteResource(first storage.Kind) apiHandler {
	kinds := []storage.Kind{storage.KindProduction, storage.KindPreset}
	if first == storage.KindPreset {
		kinds = []storage.Kind{storage.KindPreset, storage.KindProduction}
	}
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		id, okName := jsonName(r, "file")
		if !okName {
			return errNotFound
		}
		ctx := r.Context()
		for _, kind := range kinds {
			var err error
			prefix := production.PresetPrefix(id)
			if kind == storage.KindProduction {
				prefix = production.ProductionPrefix(id)
				err = s.service.Delete(ctx, u.ID, id)
			} else {
				err = s.store.DeleteResource(ctx, u.ID, kind, id)
			}
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			s.prune(ctx, prefix)
			ok(w, map[string]string{"uuid": id})
			return nil
		}
		return errNotFound
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
		return nil, newError(http.StatusBadRequest, CodeMalformedJSON, "request body is not valid JSON: "+err.Error())
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
		return errNotFound
	case cmd == "start":
		return s.start(w, r, u, id)
	case cmd == "stop":
		return s.stop(w, r, u, id)
	case cmd == "upload":
		return s.uploadProduction(w, r, u, id)
	case !commandFields[cmd]:
		return errNotFound
	}
	body, err := s.wrapCommand(w, r, cmd)
	if err != nil {
		return err
	}
	in, err := production.DecodeInput(body)
	if err != nil {
		return decodeErr(err)
	}
	return s.updateWith(w, r, u, id, in)
}

// presetCommand: POST /api/preset/{uuid}/{cmd}.json.
func (s *server) presetCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	id := r.PathValue("uuid")
	switch {
	case !okName:
		return errNotFound
	case cmd == "upload":
		return s.uploadPreset(w, r, u, id)
	case !commandFields[cmd]:
		return errNotFound
	}
	body, err := s.wrapCommand(w, r, cmd)
	if err != nil {
		return err
	}
	in, err := preset.DecodeInput(body)
	if err != nil {
		return decodeErr(err)
	}
	return s.updatePresetWith(w, r, u, id, in)
}

// deletableLists are the DELETE sub-commands.
var deletableLists = map[string]production.List{
	"output_files": production.ListOutputFiles, "chapters": production.ListChapters,
	"multi_input_files": production.ListMultiInputFiles, "speech_recognition": production.ListSpeechRecognition,
	"webhook": "",
}

// productionDeleteList: DELETE /api/production/{uuid}/{list}.json.
func (s *server) productionDeleteList(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	list, known := deletableLists[cmd]
	if !okName || !known {
		return errNotFound
	}
	p, err := s.updateProduction(r.Context(), u.ID, r.PathValue("uuid"), func(p *production.Production) error {
		if cmd == "webhook" {
			return p.Apply(&production.Input{Webhook: production.Null[string]()}, s.applyOpts())
		}
		return p.ClearList(list)
	})
	if err != nil {
		return err
	}
	ok(w, s.productionView(p))
	return nil
}

// presetDeleteList: DELETE /api/preset/{uuid}/{list}.json.
func (s *server) presetDeleteList(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if _, known := deletableLists[cmd]; !okName || !known {
		return errNotFound
	}
	if cmd == "chapters" {
		return fieldError("chapters", "presets have no chapters")
	}
	pr, err := s.updatePreset(r.Context(), u.ID, r.PathValue("uuid"), func(pr *preset.Preset) error {
		switch cmd {
		case "output_files":
			pr.OutputFiles = nil
		case "multi_input_files":
			pr.MultiInputFiles = nil
		case "speech_recognition":
			pr.SpeechRecognition = nil
		case "webhook":
			pr.Webhook = nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	ok(w, s.presetView(pr))
	return nil
}

// productionQuery: GET /api/production/{uuid}/status.json.
func (s *server) productionQuery(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if !okName || cmd != "status" {
		return errNotFound
	}
	res, err := s.store.GetResource(r.Context(), u.ID, storage.KindProduction, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	st := production.Status(res.Status)
	ok(w, map[string]any{"uuid": res.UUID, "status": st, "status_string": st.String(),
		"progress": production.ShownProgress(st, res.Progress)})
	return nil
}

// start: POST /api/production/{uuid}/start.json (see Service.Start).
func (s *server) start(w http.ResponseWriter, r *http.Request, u storage.User, id string) error {
	ctx := r.Context()
	if err := s.service.Start(ctx, u.ID, id); err != nil {
		return err
	}
	return s.respondProduction(w, ctx, u.ID, id)
}

// stop: POST /api/production/{uuid}/stop.json (see Service.Stop).
func (s *server) stop(w http.ResponseWriter, r *http.Request, u storage.User, id string) error {
	ctx := r.Context()
	if err := s.service.Stop(ctx, u.ID, id); err != nil {
		return err
	}
	return s.respondProduction(w, ctx, u.ID, id)
}

func (s *server) respondProduction(w http.ResponseWriter, ctx context.Context, owner, id string) error {
	p, _, err := s.loadProduction(ctx, s.store, owner, id)
	if err != nil {
		return err
	}
	ok(w, s.productionView(p))
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
			return lp, fieldError(f.name, "must be a whole number >= 0")
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

// listProductions: GET /api/productions.json.
func (s *server) listProductions(w http.ResponseWriter, r *http.Request, u storage.User) error {
	lp, err := parseList(r)
	if err != nil {
		return err
	}
	rs, err := s.store.ListResources(r.Context(), u.ID, storage.KindProduction, lp.limit, lp.offset)
	if err != nil {
		return err
	}
	out := make([]any, 0, len(rs))
	for _, res := range rs {
		if lp.uuidsOnly {
			out = append(out, res.UUID)
			continue
		}
		p, err := decodeProduction(res)
		if err != nil {
			return err
		}
		if lp.minimal {
			out = append(out, s.minimalProduction(p))
		} else {
			out = append(out, s.productionView(p))
		}
	}
	ok(w, out)
	return nil
}

// listPresets: GET /api/presets.json.
func (s *server) listPresets(w http.ResponseWriter, r *http.Request, u storage.User) error {
	lp, err := parseList(r)
	if err != nil {
		return err
	}
	rs, err := s.store.ListResources(r.Context(), u.ID, storage.KindPreset, lp.limit, lp.offset)
	if err != nil {
		return err
	}
	out := make([]any, 0, len(rs))
	for _, res := range rs {
		if lp.uuidsOnly {
			out = append(out, res.UUID)
			continue
		}
		pr, err := decodePreset(res)
		if err != nil {
			return err
		}
		if lp.minimal {
			out = append(out, minimalPresetOf(pr))
		} else {
			out = append(out, s.presetView(pr))
		}
	}
	ok(w, out)
	return nil
}
