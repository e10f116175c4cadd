package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/storage"
)

// serviceChecker resolves the service uuids a request names, for one
// owner, remembering lookups.
type serviceChecker struct {
	a     *App
	ctx   context.Context
	owner string
	seen  map[string]*storage.Service
	errs  production.FieldErrors
}

func (a *App) services(ctx context.Context, owner string) *serviceChecker {
	return &serviceChecker{a: a, ctx: ctx, owner: owner, seen: map[string]*storage.Service{}, errs: production.FieldErrors{}}
}

// get returns the service or records a form error at path (nil result).
func (c *serviceChecker) get(path, uuid string) (*storage.Service, error) {
	if svc, ok := c.seen[uuid]; ok {
		if svc == nil {
			c.errs.Add(path, "no such service")
		}
		return svc, nil
	}
	svc, err := c.a.store.GetService(c.ctx, c.owner, uuid)
	if errors.Is(err, storage.ErrNotFound) {
		c.seen[uuid] = nil
		c.errs.Add(path, "no such service")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.seen[uuid] = &svc
	return &svc, nil
}

func (c *serviceChecker) err() error { return c.errs.Err() }

// resolveServices checks that every service a production names is one of
// the owner's with the right direction, and fills the response fields of
// outgoing services and speech recognition from the service records.
func (a *App) resolveServices(ctx context.Context, owner string, p *production.Production) error {
	c := a.services(ctx, owner)
	if p.Service != nil {
		svc, err := c.get("service", *p.Service)
		if err != nil {
			return err
		}
		if svc != nil && !svc.Incoming {
			c.errs.Add("service", "is not an incoming service")
		}
	}
	if err := c.common(p.OutgoingServices, p.MultiInputFiles, p.SpeechRecognition); err != nil {
		return err
	}
	return c.err()
}

// resolvePresetServices is resolveServices for a preset.
func (a *App) resolvePresetServices(ctx context.Context, owner string, pr *preset.Preset) error {
	c := a.services(ctx, owner)
	if err := c.common(pr.OutgoingServices, pr.MultiInputFiles, pr.SpeechRecognition); err != nil {
		return err
	}
	return c.err()
}

func (c *serviceChecker) common(outs []production.OutgoingService, multi []production.MultiInputFile, sr *production.SpeechRecognition) error {
	for i := range outs {
		o := &outs[i]
		svc, err := c.get(fmt.Sprintf("outgoing_services.%d.uuid", i), o.UUID)
		if err != nil {
			return err
		}
		if svc == nil {
			continue
		}
		if !svc.Outgoing {
			c.errs.Add(fmt.Sprintf("outgoing_services.%d.uuid", i), "is not an outgoing service")
		}
		o.DisplayName, o.Type, o.Incoming, o.Outgoing = svc.DisplayName, svc.Type, svc.Incoming, svc.Outgoing
	}
	for i, m := range multi {
		if m.Service == "" {
			continue
		}
		path := fmt.Sprintf("multi_input_files.%d.service", i)
		svc, err := c.get(path, m.Service)
		if err != nil {
			return err
		}
		if svc != nil && !svc.Incoming {
			c.errs.Add(path, "is not an incoming service")
		}
	}
	if sr != nil {
		svc, err := c.get("speech_recognition.uuid", sr.UUID)
		if err != nil {
			return err
		}
		if svc != nil {
			sr.Type = svc.Type
			if !services.IsSpeech(svc.Type) {
				c.errs.Add("speech_recognition.uuid", fmt.Sprintf("is a %s service, not a speech recognition service (register one of type %s)", svc.Type, strings.Join(speechTypeNames(), ", ")))
			}
		}
	}
	return nil
}

// speechTypeNames are the recognizer types of the catalogue.
func speechTypeNames() []string {
	var out []string
	for _, n := range services.TypeNames() {
		if services.IsSpeech(n) {
			out = append(out, n)
		}
	}
	return out
}
