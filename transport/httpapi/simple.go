package httpapi

import (
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// maxSimpleText bounds the text fields of a simple API request together
// (a chapter text is the largest).
const maxSimpleText = production.MaxChapterText + 64<<10

// Simple API form fields, by where they go. Every key of the algorithms
// object (single-track and master) is a form field too: besides the six
// the spec lists (hipfilter, leveler, normloudness, denoise,
// loudnesstarget, denoiseamount), silence_cutter, filtermethod,
// maxpeak, ... go to the algorithms as they would in JSON.
var (
	simpleFields   = []string{"preset", "service", "input_file", "action", "image", "output_basename", "chapters", "webhook", "append_chapters"}
	simpleMetadata = []string{"title", "artist", "album", "subtitle", "summary", "genre", "publisher", "url", "license", "license_url", "track", "year", "tags"}
)

// simpleAlgorithm reports whether a form field is an algorithm key.
func simpleAlgorithm(field string) bool {
	_, ok := production.LookupAlgorithm(field, production.ScopeSingletrack|production.ScopeMaster)
	return ok
}

// unknownSimpleFields returns a form error for every field of a simple
// API request that is none of the above. Dropping such a field would
// process the production otherwise than the client asked (a misspelt
// "loudnesstarget" leaves the default target) and spend its credits; a
// form error names it before anything is stored.
func unknownSimpleFields(fields map[string]string) error {
	errs := production.FieldErrors{}
	for name := range fields {
		if !slices.Contains(simpleFields, name) && !slices.Contains(simpleMetadata, name) && !simpleAlgorithm(name) {
			errs.Add(name, "is not a field of the simple API: it takes preset, service, input_file, action, image, output_basename, chapters, webhook, "+
				"the metadata fields ("+strings.Join(simpleMetadata, ", ")+", append_chapters) and the keys of the algorithms object (see info/algorithms)")
		}
	}
	return errs.Err()
}

// simpleCreate: POST /api/simple/productions.json (multipart/form-data).
// It builds the JSON API's creation request from the form (metadata
// fields, comma-separated tags, algorithm keys, chapters as text file or
// string), creates the production from the preset, stores an uploaded
// input_file or image, fetches URL ones, and with action=start starts it
// in the same transaction. The response is the production. A field the
// simple API does not know is a form error (unknownSimpleFields),
// reported before any uploaded file is stored.
func (s *server) simpleCreate(w http.ResponseWriter, r *http.Request, u storage.User) error {
	p, err := s.createSimple(w, r, u, simpleHooks{check: unknownSimpleFields})
	if err != nil {
		return err
	}
	envelope.OK(w, s.productionView(p))
	return nil
}

// simpleHooks let the upload page share the simple API's code path.
type simpleHooks struct {
	// check runs with the text fields read so far before the first file
	// part is stored, and once more after the last part; an error aborts
	// the request (the upload page checks its CSRF token here, so a
	// forged request stores nothing).
	check func(fields map[string]string) error
	// extra adds fields to the JSON API creation request built from the
	// form.
	extra func(fields map[string]string, req map[string]any) error
}

// createSimple stores the production of a simple API request: the
// form's files go into an upload as they arrive, its text fields make
// the JSON API's creation request, and App.CreateProductionWithFiles
// does the rest.
func (s *server) createSimple(w http.ResponseWriter, r *http.Request, u storage.User, hooks simpleHooks) (*production.Production, error) {
	ctx := r.Context()
	mr, err := s.multipartReader(w, r)
	if err != nil {
		return nil, err
	}
	up := s.app.NewUpload(u)
	fields := map[string]string{}
	files := map[string]bool{}
	textLeft := int64(maxSimpleText)
	err = eachPart(mr, func(part *multipart.Part) error {
		field := part.FormName()
		if part.FileName() != "" && hooks.check != nil && len(files) == 0 {
			if err := hooks.check(fields); err != nil {
				return err
			}
		}
		if part.FileName() != "" && field != "chapters" {
			files[field] = true
			return addPart(ctx, up, part)
		}
		b, err := io.ReadAll(io.LimitReader(part, textLeft+1))
		if err != nil {
			return partError(err)
		}
		if textLeft -= int64(len(b)); textLeft < 0 {
			return envelope.New(http.StatusRequestEntityTooLarge, CodeTooLarge, "the text fields are larger than the server's limit")
		}
		fields[field] = string(b)
		return nil
	})
	in, start, err := s.simpleInput(err, fields, files, hooks)
	if err != nil {
		up.Discard(ctx)
		return nil, err
	}
	return s.app.CreateProductionWithFiles(ctx, u, in, up, start)
}

// simpleInput decodes the text fields of a simple API request that was
// read without error into the creation request and whether to start.
func (s *server) simpleInput(err error, fields map[string]string, files map[string]bool, hooks simpleHooks) (*production.Input, bool, error) {
	if err != nil {
		return nil, false, err
	}
	if hooks.check != nil {
		if err := hooks.check(fields); err != nil {
			return nil, false, err
		}
	}
	req, err := simpleRequestMap(fields, files["input_file"], files["image"])
	if err != nil {
		return nil, false, err
	}
	if hooks.extra != nil {
		if err := hooks.extra(fields, req); err != nil {
			return nil, false, err
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, false, err
	}
	in, err := production.DecodeInput(body)
	if err != nil {
		return nil, false, envelope.DecodeError(err)
	}
	action := strings.ToLower(strings.TrimSpace(fields["action"]))
	if action != "" && action != "save" && action != "start" {
		return nil, false, envelope.FieldError("action", "must be start or save")
	}
	return in, action == "start", nil
}

// simpleRequest turns the simple API's text fields into a JSON API
// creation request, so both share decoding and validation.
func simpleRequest(f map[string]string, inputUploaded, imageUploaded bool) ([]byte, error) {
	req, err := simpleRequestMap(f, inputUploaded, imageUploaded)
	if err != nil {
		return nil, err
	}
	return json.Marshal(req)
}

// simpleRequestMap is simpleRequest before encoding.
func simpleRequestMap(f map[string]string, inputUploaded, imageUploaded bool) (map[string]any, error) {
	req := map[string]any{}
	str := func(form, key string) {
		if v, ok := f[form]; ok {
			req[key] = strings.TrimSpace(v)
		}
	}
	str("preset", "preset")
	str("service", "service")
	str("output_basename", "output_basename")
	str("webhook", "webhook")
	if !inputUploaded {
		str("input_file", "input_file")
	}
	if !imageUploaded {
		str("image", "image")
	}
	if v, ok := req["preset"]; ok && v == "" {
		delete(req, "preset")
	}
	if v, ok := req["service"]; ok && v == "" {
		delete(req, "service")
	}
	md := map[string]any{}
	for _, k := range simpleMetadata {
		if v, ok := f[k]; ok {
			md[k] = strings.TrimSpace(v)
		}
	}
	if v, ok := f["append_chapters"]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, envelope.FieldError("metadata.append_chapters", "must be true or false")
		}
		md["append_chapters"] = b
	}
	if len(md) > 0 {
		req["metadata"] = md
	}
	alg := map[string]string{}
	for k, v := range f {
		if simpleAlgorithm(k) && strings.TrimSpace(v) != "" {
			alg[k] = strings.TrimSpace(v)
		}
	}
	if len(alg) > 0 {
		req["algorithms"] = alg
	}
	if text, ok := f["chapters"]; ok && strings.TrimSpace(text) != "" {
		chs, err := production.ParseChapters(text)
		if err != nil {
			return nil, envelope.FieldError("chapters", err.Error())
		}
		req["chapters"] = production.ChapterFields(chs)
	}
	return req, nil
}
