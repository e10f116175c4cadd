package app

import (
	"errors"
	"fmt"

	"github.com/audiopost/audiopost/production"
)

// Kinds of *Error, for errors.Is. Each says what a client did or met, so
// that a transport can answer it (an HTTP status and error code).
var (
	// ErrTooLarge: a file or request is larger than the server's limit.
	ErrTooLarge = errors.New("app: too large")
	// ErrBadRequest: the request cannot be carried out as sent, for a
	// reason that is no single field's (an upload without a file, a
	// listing of a service that holds no input files).
	ErrBadRequest = errors.New("app: bad request")
	// ErrServiceUnsupported: the external service's type cannot do what
	// was asked on this server.
	ErrServiceUnsupported = errors.New("app: service type not supported")
	// ErrServiceMisconfigured: the external service lacks a setting its
	// type needs.
	ErrServiceMisconfigured = errors.New("app: service misconfigured")
	// ErrServiceFailed: the external service refused the login or could
	// not be reached; the request itself was fine.
	ErrServiceFailed = errors.New("app: external service failed")
)

// Error is a failure of one of the kinds above, with the message to show
// the user.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(e, e.Kind) true.
func (e *Error) Is(target error) bool { return target == e.Kind }

func errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// fieldError is one form error.
func fieldError(field, msg string) production.FieldErrors {
	return production.FieldErrors{field: msg}
}

// formErrors returns the form errors err carries, nil when it is no
// validation failure.
func formErrors(err error) production.FieldErrors {
	var fe production.FieldErrors
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}
