// Package envelope is the error envelope of audiopost's HTTP interface,
// shared by the JSON API (transport/httpapi) and the web pages
// (transport/webpages): the response object every API call answers with,
// the error codes, and the one table that turns the errors of the
// application layer into statuses and codes. The pages render the same
// classification as HTML, so a failure reads alike in both.
package envelope

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
)

// Error codes of the envelope's error_code (httpapi re-exports them; the
// table is in its doc.go).
const (
	CodeValidation          = "validation_failed"
	CodeMalformedJSON       = "malformed_json"
	CodeBadRequest          = "bad_request"
	CodeUnauthorized        = "unauthorized"
	CodeNotFound            = "not_found"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeChangeNotAllowed    = "change_not_allowed"
	CodeStartNotAllowed     = "start_not_allowed"
	CodeNotRunning          = "not_running"
	CodeConflict            = "conflict"
	CodeTooLarge            = "too_large"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodeRateLimited         = "rate_limited"
	CodeInternal            = "internal_error"
	CodeServiceNotSupported = "service_type_not_supported"
	// CodeServiceMisconfigured: a service lacks a setting its type needs.
	CodeServiceMisconfigured = "service_misconfigured"
	// CodeServiceFailed: the external service refused the login or could
	// not be reached (502).
	CodeServiceFailed = "service_failed"
	// CodeCredentialsUnavailable: service credentials cannot be sealed or
	// opened, because the operator configured no secret key (503).
	CodeCredentialsUnavailable = "credentials_unavailable"
)

// Envelope is the JSON object every API response is.
type Envelope struct {
	StatusCode   int               `json:"status_code"`
	FormErrors   map[string]string `json:"form_errors"`
	ErrorCode    *string           `json:"error_code"`
	ErrorMessage string            `json:"error_message"`
	Data         any               `json:"data,omitempty"`
}

// Error is an error with its HTTP status, error code and form errors;
// handlers return it and WriteError renders it.
type Error struct {
	Status int
	Code   string
	Msg    string
	Form   production.FieldErrors
	Cause  error // logged for 500s, never shown
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Cause }

// New returns an Error without form errors.
func New(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Msg: msg}
}

// Invalid is a 400 with form errors.
func Invalid(form production.FieldErrors) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeValidation, Msg: "the request has invalid fields", Form: form}
}

// FieldError is a 400 with one form error.
func FieldError(field, msg string) *Error {
	return Invalid(production.FieldErrors{field: msg})
}

// ErrNotFound is the 404 of a missing resource, or of another user's.
var ErrNotFound = New(http.StatusNotFound, CodeNotFound, "not found")

// DecodeError turns a decoding error into the envelope's: field type
// errors are form errors, anything else a malformed body.
func DecodeError(err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var fe production.FieldErrors
	if errors.As(err, &fe) {
		return Invalid(fe)
	}
	return New(http.StatusBadRequest, CodeMalformedJSON, err.Error())
}

// Write writes e with the given status.
func Write(w http.ResponseWriter, status int, e *Envelope) {
	e.StatusCode = status
	if e.FormErrors == nil {
		e.FormErrors = map[string]string{}
	}
	b, err := json.Marshal(e)
	if err != nil {
		// Only a Data value that cannot marshal gets here: a bug.
		status = http.StatusInternalServerError
		code := CodeInternal
		b, _ = json.Marshal(&Envelope{StatusCode: status, FormErrors: map[string]string{}, ErrorCode: &code, ErrorMessage: "internal server error"})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// OK writes a 200 envelope with data.
func OK(w http.ResponseWriter, data any) {
	Write(w, http.StatusOK, &Envelope{Data: data})
}

// WriteError renders err: an *Error as it says, production and storage
// sentinels by their meaning, anything else as a 500 logged to log.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae := Classify(err)
	if ae.Code == CodeInternal {
		log.ErrorContext(r.Context(), "httpapi: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	form := map[string]string{}
	for k, v := range ae.Form {
		if k == "" {
			k = "non_field"
		}
		form[k] = v
	}
	if ae.Status == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		w.Header().Set("Allow", "GET, POST, DELETE")
	}
	if ae.Status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	code := ae.Code
	Write(w, ae.Status, &Envelope{FormErrors: form, ErrorCode: &code, ErrorMessage: ae.Msg})
}

// Classify returns the status, code and message err is answered with.
func Classify(err error) *Error {
	var ae *Error
	var fe production.FieldErrors
	var mbe *http.MaxBytesError
	var ape *app.Error
	var te *app.TestError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ape):
		return appError(ape)
	case errors.As(err, &te):
		return Invalid(te.FieldErrors())
	case errors.Is(err, livestream.ErrState):
		return New(http.StatusConflict, CodeStartNotAllowed, err.Error())
	case errors.As(err, &mbe):
		return New(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body too large")
	case errors.Is(err, production.ErrNotStartable):
		return New(http.StatusConflict, CodeStartNotAllowed, "the production cannot be started now (start_allowed is false): "+strings.TrimPrefix(err.Error(), production.ErrNotStartable.Error()+": "))
	case errors.Is(err, production.ErrNotRunning):
		return New(http.StatusConflict, CodeNotRunning, "the production is not waiting or processing"+strings.TrimPrefix(err.Error(), production.ErrNotRunning.Error()))
	case errors.Is(err, production.ErrProcessing):
		return New(http.StatusConflict, CodeChangeNotAllowed, "the production is being processed; changes are not allowed now (change_allowed is false)")
	case errors.As(err, &fe):
		return Invalid(fe)
	case errors.Is(err, production.ErrInvalid):
		return New(http.StatusBadRequest, CodeMalformedJSON, err.Error())
	case errors.Is(err, storage.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, storage.ErrNoSecretKey):
		return New(http.StatusServiceUnavailable, CodeCredentialsUnavailable,
			"this server cannot store or use service credentials: its operator has configured no secret key for them")
	case errors.Is(err, storage.ErrConflict):
		return New(http.StatusConflict, CodeConflict, "the resource was changed concurrently; reload and retry")
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Msg: "internal server error", Cause: err}
}

// appErrors are the HTTP answers to the kinds of app.Error.
var appErrors = []struct {
	kind   error
	status int
	code   string
}{
	{app.ErrTooLarge, http.StatusRequestEntityTooLarge, CodeTooLarge},
	{app.ErrBadRequest, http.StatusBadRequest, CodeBadRequest},
	{app.ErrServiceUnsupported, http.StatusNotImplemented, CodeServiceNotSupported},
	{app.ErrServiceMisconfigured, http.StatusBadRequest, CodeServiceMisconfigured},
	{app.ErrServiceFailed, http.StatusBadGateway, CodeServiceFailed},
}

func appError(e *app.Error) *Error {
	for _, k := range appErrors {
		if e.Kind == k.kind {
			return New(k.status, k.code, e.Msg)
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Msg: "internal server error", Cause: e}
}
