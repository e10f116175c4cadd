package httpapi

import (
	"net/http"

	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// Error codes of the envelope's error_code (see the table in doc.go); the
// envelope and its error table are package transport/internal/envelope's,
// which the web pages share.
const (
	CodeValidation          = envelope.CodeValidation
	CodeMalformedJSON       = envelope.CodeMalformedJSON
	CodeBadRequest          = envelope.CodeBadRequest
	CodeUnauthorized        = envelope.CodeUnauthorized
	CodeNotFound            = envelope.CodeNotFound
	CodeMethodNotAllowed    = envelope.CodeMethodNotAllowed
	CodeChangeNotAllowed    = envelope.CodeChangeNotAllowed
	CodeStartNotAllowed     = envelope.CodeStartNotAllowed
	CodeNotRunning          = envelope.CodeNotRunning
	CodeConflict            = envelope.CodeConflict
	CodeTooLarge            = envelope.CodeTooLarge
	CodeUnsupportedMedia    = envelope.CodeUnsupportedMedia
	CodeRateLimited         = envelope.CodeRateLimited
	CodeInternal            = envelope.CodeInternal
	CodeServiceNotSupported = envelope.CodeServiceNotSupported
	// CodeServiceMisconfigured: a service lacks a setting its type needs.
	CodeServiceMisconfigured = envelope.CodeServiceMisconfigured
	// CodeServiceFailed: the external service refused the login or could
	// not be reached (502).
	CodeServiceFailed = envelope.CodeServiceFailed
	// CodeCredentialsUnavailable: service credentials cannot be sealed or
	// opened, because the operator configured no secret key (503).
	CodeCredentialsUnavailable = envelope.CodeCredentialsUnavailable
)

// writeError renders err in the envelope, logging internal errors.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	envelope.WriteError(w, r, s.log, err)
}
