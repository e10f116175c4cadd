package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
)

// Error codes of the envelope's error_code (see the table in doc.go).
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

// envelope is the JSON object every API response is.
type envelope struct {
	StatusCode   int               `json:"status_code"`
	FormErrors   map[string]string `json:"form_errors"`
	ErrorCode    *string           `json:"error_code"`
	ErrorMessage string            `json:"error_message"`
	Data         any               `json:"data,omitempty"`
}

// apiError is an error with its HTTP status, error code and form errors;
// handlers return it and writeError renders it.
type apiError struct {
	status int
	code   string
	msg    string
	form   production.FieldErrors
	cause  error // logged for 500s, never shown
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.cause }

func newError(status int, code, msg string) *apiError {
	return &apiError{status: status, code: code, msg: msg}
}

// invalid is a 400 with form errors.
func invalid(form production.FieldErrors) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeValidation, msg: "the request has invalid fields", form: form}
}

// fieldError is a 400 with one form error.
func fieldError(field, msg string) *apiError {
	return invalid(production.FieldErrors{field: msg})
}

var errNotFound = newError(http.StatusNotFound, CodeNotFound, "not found")

func writeEnvelope(w http.ResponseWriter, status int, e *envelope) {
	e.StatusCode = status
	if e.FormErrors == nil {
		e.FormErrors = map[string]string{}
	}
	b, err := json.Marshal(e)
	if err != nil {
		// Only a Data value that cannot marshal gets here: a bug.
		status = http.StatusInternalServerError
		code := CodeInternal
		b, _ = json.Marshal(&envelope{StatusCode: status, FormErrors: map[string]string{}, ErrorCode: &code, ErrorMessage: "internal server error"})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// ok writes a 200 envelope with data.
func ok(w http.ResponseWriter, data any) {
	writeEnvelope(w, http.StatusOK, &envelope{Data: data})
}

// writeError renders err: an *apiError as it says, production and storage
// sentinels by their meaning, anything else as a logged 500.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.classify(err)
	if ae.code == CodeInternal {
		s.log.ErrorContext(r.Context(), "httpapi: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	form := map[string]string{}
	for k, v := range ae.form {
		if k == "" {
			k = "non_field"
		}
		form[k] = v
	}
	if ae.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		w.Header().Set("Allow", "GET, POST, DELETE")
	}
	if ae.status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	code := ae.code
	writeEnvelope(w, ae.status, &envelope{FormErrors: form, ErrorCode: &code, ErrorMessage: ae.msg})
}

func (s *server) classify(err error) *apiError {
	var ae *apiError
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
		return invalid(te.FieldErrors())
	case errors.Is(err, livestream.ErrState):
		return newError(http.StatusConflict, CodeStartNotAllowed, err.Error())
	case errors.As(err, &mbe):
		return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body too large")
	case errors.Is(err, production.ErrNotStartable):
		return newError(http.StatusConflict, CodeStartNotAllowed, "the production cannot be started now (start_allowed is false): "+strings.TrimPrefix(err.Error(), production.ErrNotStartable.Error()+": "))
	case errors.Is(err, production.ErrNotRunning):
		return newError(http.StatusConflict, CodeNotRunning, "the production is not waiting or processing"+strings.TrimPrefix(err.Error(), production.ErrNotRunning.Error()))
	case errors.Is(err, production.ErrProcessing):
		return newError(http.StatusConflict, CodeChangeNotAllowed, "the production is being processed; changes are not allowed now (change_allowed is false)")
	case errors.As(err, &fe):
		return invalid(fe)
	case errors.Is(err, production.ErrInvalid):
		return newError(http.StatusBadRequest, CodeMalformedJSON, err.Error())
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrNoSecretKey):
		return newError(http.StatusServiceUnavailable, CodeCredentialsUnavailable,
			"this server cannot store or use service credentials: its operator has configured no secret key for them")
	case errors.Is(err, storage.ErrConflict):
		return newError(http.StatusConflict, CodeConflict, "the resource was changed concurrently; reload and retry")
	}
	return &apiError{status: http.StatusInternalServerError, code: CodeInternal, msg: "internal server error", cause: err}
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

func appError(e *app.Error) *apiError {
	for _, k := range appErrors {
		if e.Kind == k.kind {
			return newError(k.status, k.code, e.Msg)
		}
	}
	return &apiError{status: http.StatusInternalServerError, code: CodeInternal, msg: "internal server error", cause: e}
}
