package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/outbound"
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

// serviceInput is a decoded create or update request.
type serviceInput struct {
	Type        *string
	DisplayName *string
	Incoming    *bool
	Outgoing    *bool
	Test        *bool
	UUID        *string
	// Settings are the type's parameters as sent; nil values remove.
	Settings map[string]any
}

// decodeServiceInput reads a service request body; wrongly typed fields
// are form errors.
func decodeServiceInput(body []byte) (*serviceInput, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, newError(http.StatusBadRequest, CodeMalformedJSON, "the body must be a JSON object")
	}
	in, errs := &serviceInput{Settings: map[string]any{}}, production.FieldErrors{}
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
	if err := errs.Err(); err != nil {
		return nil, invalid(errs)
	}
	return in, nil
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

// settingsOf returns a service's settings as a map.
func settingsOf(svc storage.Service) map[string]any {
	m := map[string]any{}
	if len(svc.Config) > 0 {
		dec := json.NewDecoder(bytes.NewReader(svc.Config))
		dec.UseNumber()
		dec.Decode(&m)
	}
	return m
}

// saveService registers a service (old nil) or changes one: it checks
// the request against the type's parameters, tests the connection unless
// asked not to, and stores the service. Every problem is a form error of
// the field it concerns.
func (s *server) saveService(ctx context.Context, owner string, old *storage.Service, in *serviceInput) (storage.Service, error) {
	errs := production.FieldErrors{}
	var svc storage.Service
	settings := map[string]any{}
	if old != nil {
		svc = *old
		settings = settingsOf(*old)
		if in.Type != nil && *in.Type != old.Type {
			errs.Add("type", fmt.Sprintf("cannot change from %s; register a new service instead", old.Type))
		}
		if in.UUID != nil && *in.UUID != old.UUID {
			errs.Add("uuid", "does not match the service's uuid")
		}
	} else {
		svc = storage.Service{Owner: owner, Incoming: true, Outgoing: true}
		switch {
		case in.Type == nil || strings.TrimSpace(*in.Type) == "":
			errs.Add("type", "is required: one of "+strings.Join(services.TypeNames(), ", "))
		default:
			svc.Type = strings.ToLower(strings.TrimSpace(*in.Type))
			if _, ok := services.Lookup(svc.Type); !ok {
				errs.Add("type", strings.TrimPrefix(services.UnsupportedTypeError(svc.Type).Error(), transfer.ErrUnsupportedType.Error()+": "))
			}
			if services.IsSpeech(svc.Type) {
				// A recognizer holds no files: it is neither.
				svc.Incoming, svc.Outgoing = false, false
			}
		}
		if in.UUID != nil {
			errs.Add("uuid", "is assigned by the server")
		}
	}
	if err := errs.Err(); err != nil {
		return svc, err
	}
	for k, v := range in.Settings {
		if v == nil || v == "" {
			delete(settings, k)
		} else {
			settings[k] = v
		}
	}
	if services.IsSpeech(svc.Type) {
		for k, v := range map[string]*bool{"incoming": in.Incoming, "outgoing": in.Outgoing} {
			if v != nil && *v {
				errs.Add(k, "a speech recognition service holds no files: it is neither incoming nor outgoing")
			}
		}
	} else {
		if in.Incoming != nil {
			svc.Incoming = *in.Incoming
		}
		if in.Outgoing != nil {
			svc.Outgoing = *in.Outgoing
		}
		if !svc.Incoming && !svc.Outgoing {
			errs.Add("outgoing", "a service is incoming, outgoing or both")
		}
	}
	if in.DisplayName != nil {
		svc.DisplayName = strings.TrimSpace(*in.DisplayName)
	}
	if len(svc.DisplayName) > 200 {
		errs.Add("display_name", "is longer than 200 characters")
	}
	clean, err := services.CheckSettings(svc.Type, settings)
	var se *transfer.SettingsError
	switch {
	case errors.As(err, &se):
		for k, msg := range se.Fields {
			if k == "" {
				k = "non_field"
			}
			errs.Add(k, msg)
		}
	case err != nil:
		return svc, err
	}
	if err := errs.Err(); err != nil {
		return svc, err
	}
	if svc.DisplayName == "" {
		svc.DisplayName = services.DefaultName(svc.Type, clean)
	}
	if svc.Config, err = json.Marshal(clean); err != nil {
		return svc, err
	}
	if in.Test == nil || *in.Test {
		tctx, cancel := context.WithTimeout(ctx, serviceTimeout)
		_, err := services.Test(tctx, svc, s.transfer)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return svc, ctx.Err()
			}
			return svc, connectionFormError(svc.Type, err)
		}
	}
	if old == nil {
		err = s.store.CreateService(ctx, &svc)
	} else {
		err = s.store.UpdateService(ctx, svc)
	}
	return svc, err
}

// connectionFormError turns a failed connection test into a form error
// of the field it most likely concerns.
func connectionFormError(typ string, err error) error {
	field := services.ErrorField(typ, err)
	var se *transfer.SettingsError
	var msg string
	switch {
	case errors.As(err, &se):
		form := production.FieldErrors{}
		for k, m := range se.Fields {
			form.Add(k, m)
		}
		return invalid(form)
	case errors.Is(err, transfer.ErrAuth):
		msg = "the server refused the login: " + err.Error()
	case errors.Is(err, transfer.ErrHostKey):
		msg = err.Error()
	case errors.Is(err, outbound.ErrForbiddenAddress):
		msg = "has a private, loopback or otherwise forbidden address, which this server does not connect to"
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("the server did not answer within %s", serviceTimeout)
	case errors.Is(err, speech.ErrUnavailable):
		msg = err.Error()
	default:
		msg = "could not connect and list the directory: " + err.Error()
	}
	return fieldError(field, msg+` (send "test": false to save without testing)`)
}

// createService: POST /api/services.json.
func (s *server) createService(w http.ResponseWriter, r *http.Request, u storage.User) error {
	body, err := s.readJSON(w, r)
	if err != nil {
		return err
	}
	in, err := decodeServiceInput(body)
	if err != nil {
		return err
	}
	svc, err := s.saveService(r.Context(), u.ID, nil, in)
	if err != nil {
		return err
	}
	ok(w, serviceJSON(svc))
	return nil
}

// serviceByFile is the service a /api/service/{uuid}.json path names.
func (s *server) serviceByFile(r *http.Request, u storage.User) (storage.Service, error) {
	id, okName := jsonName(r, "file")
	if !okName {
		return storage.Service{}, errNotFound
	}
	return s.store.GetService(r.Context(), u.ID, id)
}

// getService: GET /api/service/{uuid}.json.
func (s *server) getService(w http.ResponseWriter, r *http.Request, u storage.User) error {
	svc, err := s.serviceByFile(r, u)
	if err != nil {
		return err
	}
	ok(w, serviceJSON(svc))
	return nil
}

// updateService: POST /api/service/{uuid}.json.
func (s *server) updateService(w http.ResponseWriter, r *http.Request, u storage.User) error {
	old, err := s.serviceByFile(r, u)
	if err != nil {
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
	svc, err := s.saveService(r.Context(), u.ID, &old, in)
	if err != nil {
		return err
	}
	ok(w, serviceJSON(svc))
	return nil
}

// deleteService: DELETE /api/service/{uuid}.json. Productions and presets
// that name the service keep the reference; their transfers to it fail
// with "the service no longer exists".
func (s *server) deleteService(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	if err := s.store.DeleteService(r.Context(), u.ID, id); err != nil {
		return err
	}
	ok(w, map[string]string{"uuid": id})
	return nil
}

// serviceTestJSON is the data of a successful test.
type serviceTestJSON struct {
	UUID string `json:"uuid"`
	// Files are the names of the regular files in the service's
	// directory, sorted.
	Files []string `json:"files"`
}

// testService connects to a stored service and lists its directory.
func (s *server) testService(ctx context.Context, svc storage.Service) (serviceTestJSON, error) {
	ctx, cancel := context.WithTimeout(ctx, serviceTimeout)
	defer cancel()
	if _, ok := services.Lookup(svc.Type); !ok {
		return serviceTestJSON{}, newError(http.StatusNotImplemented, CodeServiceNotSupported,
			fmt.Sprintf("service type %q is not supported by this server", svc.Type))
	}
	entries, err := services.Test(ctx, svc, s.transfer)
	if err != nil {
		return serviceTestJSON{}, serviceError(svc, err)
	}
	out := serviceTestJSON{UUID: svc.UUID, Files: []string{}}
	for _, e := range entries {
		out.Files = append(out.Files, e.Name)
	}
	return out, nil
}

// serviceCommand: POST /api/service/{uuid}/{cmd}.json; cmd is test.
func (s *server) serviceCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cmd, okName := jsonName(r, "cmd")
	if !okName || cmd != "test" {
		return errNotFound
	}
	svc, err := s.store.GetService(r.Context(), u.ID, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	res, err := s.testService(r.Context(), svc)
	if err != nil {
		return err
	}
	ok(w, res)
	return nil
}

// publicServiceKeys are the settings of a service that GET shows: the
// spec's type-specific fields and every parameter of its type that is no
// credential.
func publicServiceKeys(typ string) []string {
	var keys []string
	if t, ok := services.Lookup(typ); ok {
		for _, p := range t.Parameters {
			if !storage.IsCredentialKey(p.Name) {
				keys = append(keys, p.Name)
			}
		}
	}
	for _, k := range publicServiceFields {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// credentialsSet lists which credentials a service has (for pages: "a
// password is set"), never their values.
func credentialsSet(svc storage.Service) []string {
	m := settingsOf(svc)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if storage.IsCredentialKey(k) {
			out = append(out, k)
		}
	}
	return out
}
