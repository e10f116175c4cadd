package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// mediaEndings are the file endings service ls lists: the audio and video
// formats the decoders (Go or ffmpeg) read.
var mediaEndings = map[string]bool{
	"wav": true, "wave": true, "flac": true, "mp3": true, "mp2": true, "m4a": true, "m4b": true, "aac": true,
	"mp4": true, "m4v": true, "mov": true, "mkv": true, "webm": true, "avi": true, "mpg": true, "mpeg": true,
	"ogg": true, "oga": true, "opus": true, "aif": true, "aiff": true, "aifc": true, "caf": true, "wma": true,
	"wmv": true, "3gp": true, "amr": true, "ts": true, "flv": true, "alac": true, "ac3": true, "eac3": true,
}

// isMedia reports whether a file name has an audio or video ending.
func isMedia(name string) bool {
	return mediaEndings[strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))]
}

// openService connects to one of the owner's services, mapping failures
// to API errors: the service's own refusal or unreachability is a 502
// (the request was fine, the upstream was not), a setting it lacks a 400.
func (a *App) openService(ctx context.Context, svc storage.Service) (transfer.Conn, error) {
	if !transfer.Supported(svc.Type) {
		return nil, errorf(ErrServiceUnsupported, "service type %q has no file transfer in this server", svc.Type)
	}
	c, err := transfer.Open(ctx, svc, a.transfer)
	if err != nil {
		return nil, serviceError(svc, err)
	}
	return c, nil
}

// serviceError turns a transfer failure into an error naming the
// service: the service's own refusal or unreachability is
// ErrServiceFailed (the request was fine, the upstream was not), a
// setting it lacks ErrServiceMisconfigured.
func serviceError(svc storage.Service, err error) error {
	name := fmt.Sprintf("service %s (%s)", svc.UUID, svc.Type)
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, transfer.ErrConfig):
		return errorf(ErrServiceMisconfigured, "%s: %v", name, err)
	case errors.Is(err, transfer.ErrAuth), errors.Is(err, transfer.ErrHostKey):
		return errorf(ErrServiceFailed, "%s refused the connection: %v", name, err)
	case errors.Is(err, transfer.ErrForbiddenAddress):
		return errorf(ErrServiceFailed, "%s: its host has a private, loopback or otherwise forbidden address", name)
	case errors.Is(err, transfer.ErrNotFound), errors.Is(err, transfer.ErrName):
		return errorf(ErrBadRequest, "%s: %v", name, err)
	}
	return errorf(ErrServiceFailed, "%s failed: %v", name, err)
}

// fetchFromService copies the named file of an incoming service into the
// blob key(name). Failures are form errors of field.
func (a *App) fetchFromService(ctx context.Context, owner, field, serviceUUID, name string, key func(string) string, check func(key string) error) error {
	svc, err := a.store.GetService(ctx, owner, serviceUUID)
	if errors.Is(err, storage.ErrNotFound) {
		return fieldError(field, "no such service")
	}
	if err != nil {
		return err
	}
	c, err := a.openService(ctx, svc)
	if err != nil {
		return err
	}
	defer c.Close()
	rc, err := c.Open(ctx, name)
	switch {
	case errors.Is(err, transfer.ErrNotFound):
		return fieldError(field, fmt.Sprintf("no file %q on service %s", name, svc.UUID))
	case errors.Is(err, transfer.ErrName):
		return fieldError(field, fmt.Sprintf("%q is not a file name", name))
	case err != nil:
		return serviceError(svc, err)
	}
	defer rc.Close()
	return a.storeChecked(ctx, key(name), func(to string) error {
		lim := &io.LimitedReader{R: rc, N: a.maxUp + 1}
		n, err := a.storeBlob(ctx, to, lim)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return serviceError(svc, err)
		}
		if n > a.maxUp {
			a.discard(ctx, to)
			return errorf(ErrTooLarge, "%s: the file on the service is larger than %d bytes", field, a.maxUp)
		}
		return nil
	}, check)
}

// syncServiceInput fetches and probes a main input named on an incoming
// service when the production's input or service changed; input_file
// keeps the name and service the uuid.
func (a *App) syncServiceInput(ctx context.Context, owner string, p *production.Production, before *production.Production) (bool, error) {
	if p.Service == nil || p.InputFile == "" {
		return false, nil
	}
	if before != nil && before.Service != nil && *before.Service == *p.Service && before.InputFile == p.InputFile {
		return false, nil
	}
	// Any name the service has is fine (blob keys sanitize it); one that
	// could leave the directory is refused by transfer (ErrName).
	name := p.InputFile
	key := func(n string) string { return production.InputKey(p.UUID, n) }
	var info probed
	if err := a.fetchFromService(ctx, owner, "input_file", *p.Service, name, key, a.probeInto(ctx, "input_file", &info)); err != nil {
		return false, err
	}
	setInputInfo(p, info)
	return true, nil
}

// syncMultiInputs fetches and probes the intros, outros and tracks whose
// input_file is an http(s) URL or a file on an incoming service, when new
// or changed since before. A URL then reads back as the file name, as the
// main input's does.
//
// Every entry is tried: the form errors of all the bad ones are reported
// together, so a client fixes every track in one round.
func (a *App) syncMultiInputs(ctx context.Context, owner string, p *production.Production, before *production.Production) (changed []string, err error) {
	bad := production.FieldErrors{}
	prev := map[string]production.MultiInputFile{}
	if before != nil {
		for _, m := range before.MultiInputFiles {
			prev[m.ID] = m
		}
	}
	for i := range p.MultiInputFiles {
		m := &p.MultiInputFiles[i]
		if m.InputFile == "" {
			continue
		}
		if b, ok := prev[m.ID]; ok && b.InputFile == m.InputFile && b.Service == m.Service {
			continue
		}
		field := fmt.Sprintf("multi_input_files.%d.input_file", i)
		key := func(n string) string { return production.IntroKey(p.UUID, m.ID, n) }
		name := m.InputFile
		var info probed
		switch {
		case m.Service != "":
			err = a.fetchFromService(ctx, owner, field, m.Service, name, key, a.probeInto(ctx, field, &info))
		case IsAbsURL(name):
			name, err = a.fetchInto(ctx, field, name, m.ID, key, a.probeInto(ctx, field, &info))
		default:
			continue // an uploaded file, or one still to upload
		}
		if fe := formErrors(err); fe != nil {
			bad.Merge("", fe)
			continue
		}
		if err != nil {
			return changed, err
		}
		m.InputFile = name
		setTrackInfo(m, info)
		changed = append(changed, m.ID)
	}
	return changed, bad.Err()
}
