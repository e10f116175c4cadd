package httpapi

import (
	"maps"
	"net/http"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// serviceJSON is a service as GET services.json shows it: no secrets.
func serviceJSON(svc storage.Service) map[string]any {
	m := map[string]any{"type": svc.Type, "uuid": svc.UUID, "display_name": svc.DisplayName,
		"incoming": svc.Incoming, "outgoing": svc.Outgoing}
	maps.Copy(m, services.PublicSettings(svc))
	return m
}

// listServices: GET /api/services.json.
func (s *server) listServices(w http.ResponseWriter, r *http.Request, u storage.User) error {
	svcs, err := s.app.ListServices(r.Context(), u)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(svcs))
	for _, svc := range svcs {
		out = append(out, serviceJSON(svc))
	}
	envelope.OK(w, out)
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
		return envelope.ErrNotFound
	}
	envelope.OK(w, data)
	return nil
}

// info: GET /api/info.json, the four info calls in one object keyed by
// their names.
func (s *server) info(w http.ResponseWriter, r *http.Request, u storage.User) error {
	out := map[string]any{}
	for _, k := range []string{"service_types", "algorithms", "output_files", "production_status"} {
		out[k], _ = infoData(k)
	}
	envelope.OK(w, out)
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
	cur, err := s.app.CurrentUser(r.Context(), u)
	if err != nil {
		return err
	}
	envelope.OK(w, userJSON{
		Username: cur.Username, UserID: cur.ID, DateJoined: app.APITime(cur.Joined), Email: cur.Email,
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
	return app.APITime(u.RechargeDate)
}
