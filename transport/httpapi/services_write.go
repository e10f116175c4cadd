package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// Registering external services. The spec names only the listing (GET
// services.json) and ls; the other routes follow the API's pattern for
// productions and presets:
//
//	POST   /api/services.json            register a service
//	GET    /api/service/{uuid}.json      one service
//	POST   /api/service/{uuid}.json      change it: the keys sent replace
//	                                     theirs, null or "" removes one,
//	                                     keys not sent stay (passwords too)
//	DELETE /api/service/{uuid}.json      delete it
//	POST   /api/service/{uuid}/test.json connect, log in and list
//
// A create or update body is one flat object, in the shape GET returns:
// type, display_name, incoming, outgoing and the type's parameters (GET
// info/service_types.json), credentials included. "test": false skips
// the connection test that create and update make by default: without
// it a service is stored only when the server accepts the login and
// lists the directory, and a failure is a form error on the field it
// concerns (password for a refused login, host for an unreachable
// server, ...).

// serviceFields are the keys of a service request that are not settings.
var serviceFields = []string{"type", "display_name", "incoming", "outgoing", "test", "uuid"}

// decodeServiceInput reads a service request body; wrongly typed fields
// are form errors.
func decodeServiceInput(body []byte) (*app.ServiceInput, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, envelope.New(http.StatusBadRequest, CodeMalformedJSON, "the body must be a JSON object")
	}
	in, errs := &app.ServiceInput{Settings: map[string]any{}}, production.FieldErrors{}
	str := func(k string) *string {
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			return nil
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			errs.Add(k, "must be a string")
			return nil
		}
		return &v
	}
	boolean := func(k string) *bool {
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			return nil
		}
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			var s string
			if json.Unmarshal(raw, &s) != nil || !parseBool(s, &v) {
				errs.Add(k, "must be true or false")
				return nil
			}
		}
		return &v
	}
	in.Type, in.DisplayName, in.UUID = str("type"), str("display_name"), str("uuid")
	in.Incoming, in.Outgoing, in.Test = boolean("incoming"), boolean("outgoing"), boolean("test")
	for k, raw := range top {
		if slices.Contains(serviceFields, k) {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			errs.Add(k, "is not a JSON value")
			continue
		}
		in.Settings[k] = v
	}
	return in, errs.Err()
}

// parseBool reads the boolean spellings forms and the simple API use.
func parseBool(s string, v *bool) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		*v = true
	case "false", "0", "off", "no":
		*v = false
	default:
		return false
	}
	return true
}

// updateService: POST /api/service/{uuid}.json.
func (s *server) updateService(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return envelope.ErrNotFound
	}
	// A missing service is 404 before its body is read.
	if _, err := s.app.GetService(r.Context(), u, id); err != nil {
		return err
	}
	body, err := s.readJSON(w, r)
	if err != nil {
		return err
	}
	in, err := decodeServiceInput(body)
	if err != nil {
		return err
	}
	svc, err := s.app.UpdateService(r.Context(), u, id, in)
	if err != nil {
		return err
	}
	envelope.OK(w, serviceJSON(svc))
	return nil
}

// serviceTestJSON is the data of a successful test.
type serviceTestJSON struct {
	UUID string `json:"uuid"`
	// Files are the names of the regular files in the service's
	// directory, sorted.
	Files []string `json:"files"`
}

// serviceCommand: POST /api/service/{uuid}/{cmd}.json; cmd is test.
func (s *server) serviceCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if !okName || cmd != "test" {
		return envelope.ErrNotFound
	}
	svc, entries, err := s.app.TestService(r.Context(), u, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	res := serviceTestJSON{UUID: svc.UUID, Files: []string{}}
	for _, e := range entries {
		res.Files = append(res.Files, e.Name)
	}
	envelope.OK(w, res)
	return nil
}

// serviceLs: GET /api/service/{uuid}/ls.json, the names of the audio and
// video files in an incoming service's directory, sorted.
func (s *server) serviceLs(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if !okName || cmd != "ls" {
		return envelope.ErrNotFound
	}
	names, err := s.app.ListServiceFiles(r.Context(), u, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	envelope.OK(w, names)
	return nil
}
