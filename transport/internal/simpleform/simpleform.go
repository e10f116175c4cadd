// Package simpleform reads the simple API's multipart form (POST
// {base}/api/simple/productions.json), which the upload page shares: its
// text fields become the JSON API's creation request, its files stream
// into an upload of package production/app as they arrive. The API's
// upload calls read their multipart bodies with the same Reader,
// EachPart and AddPart.
package simpleform

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
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

// UnknownFields returns a form error for every field of a simple
// API request that is none of the above. Dropping such a field would
// process the production otherwise than the client asked (a misspelt
// "loudnesstarget" leaves the default target) and spend its credits; a
// form error names it before anything is stored.
func UnknownFields(fields map[string]string) error {
	errs := production.FieldErrors{}
	for name := range fields {
		if !slices.Contains(simpleFields, name) && !slices.Contains(simpleMetadata, name) && !simpleAlgorithm(name) {
			errs.Add(name, "is not a field of the simple API: it takes preset, service, input_file, action, image, output_basename, chapters, webhook, "+
				"the metadata fields ("+strings.Join(simpleMetadata, ", ")+", append_chapters) and the keys of the algorithms object (see info/algorithms)")
		}
	}
	return errs.Err()
}

// Hooks let the upload page share the simple API's code path.
type Hooks struct {
	// Check runs with the text fields read so far before the first file
	// part is stored, and once more after the last part; an error aborts
	// the request (the upload page checks its CSRF token here, so a
	// forged request stores nothing).
	Check func(fields map[string]string) error
	// Extra adds fields to the JSON API creation request built from the
	// form.
	Extra func(fields map[string]string, req map[string]any) error
}

// Create stores the production of a simple API request for u: the
// form's files (at most maxBytes in all) go into an upload as they
// arrive, its text fields make the JSON API's creation request, and
// App.CreateProductionWithFiles does the rest.
func Create(w http.ResponseWriter, r *http.Request, a *app.App, u storage.User, maxBytes int64, hooks Hooks) (*production.Production, error) {
	ctx := r.Context()
	mr, err := Reader(w, r, maxBytes)
	if err != nil {
		return nil, err
	}
	up := a.NewUpload(u)
	fields := map[string]string{}
	files := map[string]bool{}
	textLeft := int64(maxSimpleText)
	err = EachPart(mr, func(part *multipart.Part) error {
		field := part.FormName()
		if part.FileName() != "" && hooks.Check != nil && len(files) == 0 {
			if err := hooks.Check(fields); err != nil {
				return err
			}
		}
		if part.FileName() != "" && field != "chapters" {
			files[field] = true
			return AddPart(ctx, up, part)
		}
		b, err := io.ReadAll(io.LimitReader(part, textLeft+1))
		if err != nil {
			return partError(err)
		}
		if textLeft -= int64(len(b)); textLeft < 0 {
			return envelope.New(http.StatusRequestEntityTooLarge, envelope.CodeTooLarge, "the text fields are larger than the server's limit")
		}
		fields[field] = string(b)
		return nil
	})
	in, start, err := simpleInput(err, fields, files, hooks)
	if err != nil {
		up.Discard(ctx)
		return nil, err
	}
	return a.CreateProductionWithFiles(ctx, u, in, up, start)
}

// simpleInput decodes the text fields of a simple API request that was
// read without error into the creation request and whether to start.
func simpleInput(err error, fields map[string]string, files map[string]bool, hooks Hooks) (*production.Input, bool, error) {
	if err != nil {
		return nil, false, err
	}
	if hooks.Check != nil {
		if err := hooks.Check(fields); err != nil {
			return nil, false, err
		}
	}
	req, err := simpleRequestMap(fields, files["input_file"], files["image"])
	if err != nil {
		return nil, false, err
	}
	if hooks.Extra != nil {
		if err := hooks.Extra(fields, req); err != nil {
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

// Reader checks the content type and wraps the body in the upload size
// limit of maxBytes.
func Reader(w http.ResponseWriter, r *http.Request, maxBytes int64) (*multipart.Reader, error) {
	if !ContentTypeIs(r, "multipart/form-data") {
		return nil, envelope.New(http.StatusUnsupportedMediaType, envelope.CodeUnsupportedMedia, "the request body must be multipart/form-data")
	}
	if r.ContentLength > maxBytes {
		// Refused before reading a byte of it.
		return nil, envelope.New(http.StatusRequestEntityTooLarge, envelope.CodeTooLarge, "the upload is larger than the server's limit")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, envelope.New(http.StatusBadRequest, envelope.CodeBadRequest, "malformed multipart body: "+err.Error())
	}
	return mr, nil
}

// partError maps a failure while reading a multipart body.
func partError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return envelope.New(http.StatusRequestEntityTooLarge, envelope.CodeTooLarge, "the upload is larger than the server's limit")
	}
	return envelope.New(http.StatusBadRequest, envelope.CodeBadRequest, "malformed multipart body: "+err.Error())
}

// EachPart calls fn for every part of a multipart body. A field sent
// twice is an error.
func EachPart(mr *multipart.Reader, fn func(p *multipart.Part) error) error {
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

// AddPart hands a file part to up; failures to read or store it are
// the request's (a body over the limit, a broken multipart).
func AddPart(ctx context.Context, up *app.Upload, part *multipart.Part) error {
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

// ContentTypeIs reports whether the request's media type is one of want.
func ContentTypeIs(r *http.Request, want ...string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && slices.Contains(want, mt)
}
