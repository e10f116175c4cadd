package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/storage"
)

// serviceChecker resolves the service uuids a request names, for one
// owner, remembering lookups.
type serviceChecker struct {
	s     *server
	ctx   context.Context
	owner string
	seen  map[string]*storage.Service
	errs  production.FieldErrors
}

func (s *server) services(ctx context.Context, owner string) *serviceChecker {
	return &serviceChecker{s: s, ctx: ctx, owner: owner, seen: map[string]*storage.Service{}, errs: production.FieldErrors{}}
}

// get returns the service or records a form error at path (nil result).
func (c *serviceChecker) get(path, uuid string) (*storage.Service, error) {
	if svc, ok := c.seen[uuid]; ok {
		if svc == nil {
			c.errs.Add(path, "no such service")
		}
		return svc, nil
	}
	svc, err := c.s.store.GetService(c.ctx, c.owner, uuid)
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

func (c *serviceChecker) err() error {
	if len(c.errs) > 0 {
		return invalid(c.errs)
	}
	return nil
}

// resolveServices checks that every service a production names is one of
// the owner's with the right direction, and fills the response fields of
// outgoing services and speech recognition from the service records.
func (s *server) resolveServices(ctx context.Context, owner string, p *production.Production) error {
	c := s.services(ctx, owner)
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
func (s *server) resolvePresetServices(ctx context.Context, owner string, pr *preset.Preset) error {
	c := s.services(ctx, owner)
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

// publicServiceFields are the keys of a service's config that GET
// services.json shows (the spec's type-specific fields); everything else,
// passwords and keys in particular, stays private.
var publicServiceFields = []string{
	"email", "path", "host", "port", "base_url", "permissions", "url",
	"libsyn_show_slug", "libsyn_directory", "bucket", "canned_acl", "key_prefix", "program_keyword",
}

func serviceJSON(svc storage.Service) map[string]any {
	m := map[string]any{"type": svc.Type, "uuid": svc.UUID, "display_name": svc.DisplayName,
		"incoming": svc.Incoming, "outgoing": svc.Outgoing}
	var cfg map[string]any
	if len(svc.Config) > 0 && json.Unmarshal(svc.Config, &cfg) == nil {
		for _, k := range publicServiceKeys(svc.Type) {
			if v, ok := cfg[k]; ok {
				m[k] = v
			}
		}
	}
	return m
}

// listServices: GET /api/services.json.
func (s *server) listServices(w http.ResponseWriter, r *http.Request, u storage.User) error {
	svcs, err := s.store.ListServices(r.Context(), u.ID)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(svcs))
	for _, svc := range svcs {
		out = append(out, serviceJSON(svc))
	}
	ok(w, out)
	return nil
}

// ServiceParameter describes one setting of a service type in GET
// info/service_types.json.
type ServiceParameter struct {
	DefaultValue any             `json:"default_value"`
	Type         string          `json:"type"` // text, password, number, checkbox, select
	DisplayName  string          `json:"display_name"`
	Options      []ServiceOption `json:"options,omitempty"`
}

// ServiceOption is one choice of a select parameter.
type ServiceOption struct {
	DisplayName string `json:"display_name"`
	Value       string `json:"value"`
}

// ServiceType is one value of GET info/service_types.json.
type ServiceType struct {
	DisplayName string                      `json:"display_name"`
	Parameters  map[string]ServiceParameter `json:"parameters"`
}

// ServiceTypes returns the service types accounts can be registered for
// (the catalogue of production/services: ftp, s3, sftp and webdav, which
// transfer files in both directions, and the speech recognizers
// pocketsphinx, whisper and openai), with the parameters each takes. HTTP
// inputs need no service: input_file takes an http(s) URL.
func ServiceTypes() map[string]ServiceType {
	out := map[string]ServiceType{}
	for _, t := range services.Types() {
		params := map[string]ServiceParameter{}
		for _, p := range t.Parameters {
			sp := ServiceParameter{DefaultValue: p.Default, Type: p.Kind, DisplayName: p.DisplayName}
			for _, o := range p.Options {
				sp.Options = append(sp.Options, ServiceOption{DisplayName: o.DisplayName, Value: o.Value})
			}
			params[p.Name] = sp
		}
		out[t.Name] = ServiceType{DisplayName: t.DisplayName, Parameters: params}
	}
	return out
}

// infoData returns the data of one info call.
func infoData(what string) (any, bool) {
	switch what {
	case "service_types":
		return ServiceTypes(), true
	case "algorithms":
		return production.AlgorithmInfo(), true
	case "output_files":
		return production.OutputFormatInfo(), true
	case "production_status":
		return production.StatusInfo(), true
	}
	return nil, false
}

// infoOne: GET /api/info/{what}.json.
func (s *server) infoOne(w http.ResponseWriter, r *http.Request, u storage.User) error {
	what, okName := jsonName(r, "what")
	data, known := infoData(what)
	if !okName || !known {
		return errNotFound
	}
	ok(w, data)
	return nil
}

// info: GET /api/info.json, the four info calls in one object keyed by
// their names.
func (s *server) info(w http.ResponseWriter, r *http.Request, u storage.User) error {
	out := map[string]any{}
	for _, k := range []string{"service_types", "algorithms", "output_files", "production_status"} {
		out[k], _ = infoData(k)
	}
	ok(w, out)
	return nil
}

// userJSON is GET user.json's data.
type userJSON struct {
	Username                 string          `json:"username"`
	UserID                   string          `json:"user_id"`
	DateJoined               production.Time `json:"date_joined"`
	RechargeDate             production.Time `json:"recharge_date"`
	Email                    string          `json:"email"`
	Credits                  float64         `json:"credits"`
	OnetimeCredits           float64         `json:"onetime_credits"`
	RecurringCredits         float64         `json:"recurring_credits"`
	RechargeRecurringCredits float64         `json:"recharge_recurring_credits"`
	NotificationEmail        bool            `json:"notification_email"`
	ErrorEmail               bool            `json:"error_email"`
	WarningEmail             bool            `json:"warning_email"`
	LowCreditsEmail          bool            `json:"low_credits_email"`
	LowCreditsThreshold      float64         `json:"low_credits_threshold"`
}

// user: GET /api/user.json. Credits are hours. The user is re-read so the
// balances are current.
func (s *server) user(w http.ResponseWriter, r *http.Request, u storage.User) error {
	cur, err := s.store.GetUser(r.Context(), u.ID)
	if err != nil {
		return err
	}
	ok(w, userJSON{
		Username: cur.Username, UserID: cur.ID, DateJoined: apiTime(cur.Joined), Email: cur.Email,
		Credits: cur.Credits().Hours(), OnetimeCredits: cur.OnetimeCredits.Hours(), RecurringCredits: cur.RecurringCredits.Hours(),
		RechargeRecurringCredits: cur.RechargeCredits.Hours(), NotificationEmail: cur.NotifyEmail, ErrorEmail: cur.ErrorEmail,
		WarningEmail: cur.WarningEmail, LowCreditsEmail: cur.LowCreditsEmail, LowCreditsThreshold: cur.LowCreditsThreshold.Hours(),
		RechargeDate: rechargeDate(cur),
	})
	return nil
}

func rechargeDate(u storage.User) production.Time {
	if u.RechargeDate.IsZero() {
		return production.Time{}
	}
	return apiTime(u.RechargeDate)
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
