package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// External services are the accounts a user has on other servers (FTP,
// SFTP, WebDAV, S3) and speech recognizers, stored as storage.Service
// records of the types package production/services lists.

// ServiceTimeout bounds a connection test and a directory listing.
const ServiceTimeout = time.Minute

// ServiceInput is a request to register or change an external service:
// nil fields were not sent.
type ServiceInput struct {
	Type        *string
	DisplayName *string
	Incoming    *bool
	Outgoing    *bool
	// Test false saves without the connection test.
	Test *bool
	// UUID, when sent, must be the service's own.
	UUID *string
	// Settings are the type's parameters as sent (credentials too); a nil
	// or empty value removes the setting, one not sent stays.
	Settings map[string]any
}

// TestError is a failed connection test of a service being saved.
type TestError struct {
	Type string
	// Field is the setting the failure most likely concerns (password for
	// a refused login, host for an unreachable server).
	Field string
	Err   error
}

func (e *TestError) Error() string {
	return fmt.Sprintf("connection test failed (%s): %v", e.Field, e.Err)
}

func (e *TestError) Unwrap() error { return e.Err }

// FieldErrors words the failure as a form error of Field, the way a
// form shows it.
func (e *TestError) FieldErrors() production.FieldErrors {
	var se *transfer.SettingsError
	var msg string
	switch {
	case errors.As(e.Err, &se):
		form := production.FieldErrors{}
		for k, m := range se.Fields {
			form.Add(k, m)
		}
		return form
	case errors.Is(e.Err, transfer.ErrAuth):
		msg = "the server refused the login: " + e.Err.Error()
	case errors.Is(e.Err, transfer.ErrHostKey):
		msg = e.Err.Error()
	case errors.Is(e.Err, transfer.ErrForbiddenAddress):
		msg = "has a private, loopback or otherwise forbidden address, which this server does not connect to"
	case errors.Is(e.Err, context.DeadlineExceeded):
		msg = fmt.Sprintf("the server did not answer within %s", ServiceTimeout)
	case errors.Is(e.Err, speech.ErrUnavailable):
		msg = e.Err.Error()
	default:
		msg = "could not connect and list the directory: " + e.Err.Error()
	}
	return fieldError(e.Field, msg+` (send "test": false to save without testing)`)
}

// CreateService registers an external service of u (see saveService).
func (a *App) CreateService(ctx context.Context, u storage.User, in *ServiceInput) (storage.Service, error) {
	return a.saveService(ctx, u.ID, nil, in)
}

// UpdateService changes u's service id: the settings sent replace
// theirs, null or "" removes one, the rest (credentials too) stays, and
// the result is tested again unless in.Test is false.
func (a *App) UpdateService(ctx context.Context, u storage.User, id string, in *ServiceInput) (storage.Service, error) {
	old, err := a.store.GetService(ctx, u.ID, id)
	if err != nil {
		return storage.Service{}, err
	}
	return a.saveService(ctx, u.ID, &old, in)
}

// saveService registers a service (old nil) or changes one: it checks
// the request against the type's parameters, tests the connection unless
// asked not to, and stores the service. Every problem of the request is
// a form error of the field it concerns; a failed test is a *TestError.
func (a *App) saveService(ctx context.Context, owner string, old *storage.Service, in *ServiceInput) (storage.Service, error) {
	errs := production.FieldErrors{}
	var svc storage.Service
	settings := map[string]any{}
	if old != nil {
		svc = *old
		settings = services.Settings(*old)
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
		tctx, cancel := context.WithTimeout(ctx, ServiceTimeout)
		_, err := services.Test(tctx, svc, a.transfer)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return svc, ctx.Err()
			}
			return svc, &TestError{Type: svc.Type, Field: services.ErrorField(svc.Type, err), Err: err}
		}
	}
	if old == nil {
		err = a.store.CreateService(ctx, &svc)
	} else {
		err = a.store.UpdateService(ctx, svc)
	}
	return svc, err
}

// GetService returns u's service id.
func (a *App) GetService(ctx context.Context, u storage.User, id string) (storage.Service, error) {
	return a.store.GetService(ctx, u.ID, id)
}

// ListServices returns u's services.
func (a *App) ListServices(ctx context.Context, u storage.User) ([]storage.Service, error) {
	return a.store.ListServices(ctx, u.ID)
}

// DeleteService deletes u's service id. Productions and presets that
// name it keep the reference; their transfers to it fail with "the
// service no longer exists".
func (a *App) DeleteService(ctx context.Context, u storage.User, id string) error {
	return a.store.DeleteService(ctx, u.ID, id)
}

// TestService connects to u's service id, logs in and lists its
// directory (a recognizer: checks that it is available). Failures are
// *Error of kind ErrServiceUnsupported, ErrServiceMisconfigured,
// ErrServiceFailed or ErrBadRequest.
func (a *App) TestService(ctx context.Context, u storage.User, id string) (storage.Service, []transfer.Entry, error) {
	svc, err := a.store.GetService(ctx, u.ID, id)
	if err != nil {
		return svc, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ServiceTimeout)
	defer cancel()
	if _, ok := services.Lookup(svc.Type); !ok {
		return svc, nil, errorf(ErrServiceUnsupported, "service type %q is not supported by this server", svc.Type)
	}
	entries, err := services.Test(ctx, svc, a.transfer)
	if err != nil {
		return svc, nil, serviceError(svc, err)
	}
	return svc, entries, nil
}

// ListServiceFiles returns the names of the audio and video files in the
// directory of u's incoming service id, sorted.
func (a *App) ListServiceFiles(ctx context.Context, u storage.User, id string) ([]string, error) {
	svc, err := a.store.GetService(ctx, u.ID, id)
	if err != nil {
		return nil, err
	}
	if !svc.Incoming {
		return nil, errorf(ErrBadRequest, "service %s is not an incoming service", svc.UUID)
	}
	ctx, cancel := context.WithTimeout(ctx, ServiceTimeout)
	defer cancel()
	c, err := a.openService(ctx, svc)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	entries, err := c.List(ctx)
	if err != nil {
		return nil, serviceError(svc, err)
	}
	names := []string{}
	for _, e := range entries {
		if isMedia(e.Name) {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
