package webpages

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// The services page, a settings page like the account page:
//
//	GET  {base}/services/             the user's services and a form to add one
//	                                  (?type=sftp chooses the form's type)
//	POST {base}/services/             action=add (the form's fields), test or
//	                                  delete (uuid); add and delete redirect back
//
// Adding goes through App.CreateService, as POST /api/services.json does: the
// same checks, the same connection test, the same form errors (shown at
// their fields; secrets are never put back into the form).

// servicesView is what templates/services.html shows.
type servicesView struct {
	Action     string // the page's URL, for the GET form that chooses a type
	Bearer     string // which that form carries on
	PostAction string // the page's URL for the POST forms (with the bearer token)
	Notice     string
	Rows       []serviceRow
	Types      []typeChoice
	Type       string // the add form's type; "" before one is chosen
	Fields     []serviceField
	Name       string
	In, Out    bool
	Test       bool
	// Speech is set when Type is a speech recognizer, which holds no
	// files (no incoming or outgoing choice).
	Speech bool
}

type serviceRow struct {
	UUID, Name, Type, Direction string
	Settings                    []string // "host: files.example.org"
	Credentials                 string   // "password and username set"
}

type typeChoice struct {
	Value, Label string
	Selected     bool
}

// serviceField is one parameter of the add form.
type serviceField struct {
	Name, Label, Kind, Hint, Value, Error string
	Required, Checked                     bool
	Options                               []typeChoice
}

func (pg *pages) servicesURL(pr *pageReq) string { return pg.link(pr, pg.prefix+"/services/") }

// servicesPage serves GET {base}/services/.
func (pg *pages) servicesPage(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	q := r.URL.Query()
	v := &servicesView{Type: q.Get("type"), In: true, Out: true, Test: true}
	switch {
	case q.Get("added") != "":
		v.Notice = "The service was added: " + q.Get("added") + "."
	case q.Get("removed") != "":
		v.Notice = "The service was removed."
	}
	if _, ok := services.Lookup(v.Type); !ok && v.Type != "" {
		v.Type = ""
		pg.renderServicesMsg(w, r, pr, http.StatusBadRequest, v, nil, nil, []string{"Choose one of the listed service types."})
		return
	}
	pg.renderServices(w, r, pr, http.StatusOK, v, nil, nil)
}

// renderServices renders the page with the user's services, the add form
// of v.Type (values from form, errors at their fields) and errors.
func (pg *pages) renderServices(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, v *servicesView, form url.Values, fieldErrs production.FieldErrors) {
	pg.renderServicesMsg(w, r, pr, status, v, form, fieldErrs, nil)
}

func (pg *pages) renderServicesMsg(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, v *servicesView, form url.Values, fieldErrs production.FieldErrors, msgs []string) {
	svcs, err := pg.app.ListServices(r.Context(), pr.user)
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	v.Action, v.Bearer, v.PostAction = pg.prefix+"/services/", pr.bearer, pg.servicesURL(pr)
	v.Speech = services.IsSpeech(v.Type)
	for _, s := range svcs {
		v.Rows = append(v.Rows, serviceRowOf(s))
	}
	for _, t := range services.Types() {
		v.Types = append(v.Types, typeChoice{Value: t.Name, Label: t.DisplayName, Selected: t.Name == v.Type})
	}
	if t, ok := services.Lookup(v.Type); ok {
		for _, p := range t.Parameters {
			f := serviceField{Name: p.Name, Label: p.DisplayName, Kind: p.Kind, Hint: p.Hint, Required: p.Required, Error: fieldErrs[p.Name]}
			switch {
			case p.Kind == "password":
				// Secrets never go back into a page.
			case form != nil:
				f.Value = lastValue(form, "set."+p.Name)
			case p.Default != nil:
				f.Value = fmt.Sprint(p.Default)
			}
			if p.Kind == "checkbox" {
				f.Checked = f.Value == "true"
			}
			for _, o := range p.Options {
				f.Options = append(f.Options, typeChoice{Value: o.Value, Label: o.DisplayName, Selected: o.Value == f.Value})
			}
			v.Fields = append(v.Fields, f)
		}
	}
	d := pg.data(pr, "External services")
	d.Svc = v
	// Errors of fields the form shows stand at the field; the others
	// (type, directions, unknown settings) at the top.
	shown := map[string]bool{}
	for _, f := range v.Fields {
		shown[f.Name] = true
	}
	for _, k := range slices.Sorted(maps.Keys(fieldErrs)) {
		switch {
		case shown[k]:
		case k == "non_field" || k == "":
			d.Errors = append(d.Errors, fieldErrs[k])
		default:
			d.Errors = append(d.Errors, strings.ReplaceAll(k, "_", " ")+": "+fieldErrs[k])
		}
	}
	d.Errors = append(d.Errors, msgs...)
	pg.render(w, r, pr, status, "services", d)
}

// serviceRowOf is one line of the list.
func serviceRowOf(s storage.Service) serviceRow {
	row := serviceRow{UUID: s.UUID, Name: s.DisplayName, Type: s.Type,
		Direction: map[[2]bool]string{{true, true}: "in and out", {true, false}: "in", {false, true}: "out", {false, false}: "speech recognition"}[[2]bool{s.Incoming, s.Outgoing}]}
	if t, ok := services.Lookup(s.Type); ok {
		row.Type = t.DisplayName
	}
	pub := services.PublicSettings(s)
	for _, k := range services.PublicKeys(s.Type) {
		if v, ok := pub[k]; ok {
			row.Settings = append(row.Settings, fmt.Sprintf("%s: %v", k, v))
		}
	}
	if c := services.CredentialsSet(s); len(c) > 0 {
		row.Credentials = strings.Join(c, ", ") + " set"
	}
	return row
}

// lastValue is the last value of a form field: checkboxes come after the
// hidden "false" that stands for them unchecked.
func lastValue(form url.Values, k string) string {
	vs := form[k]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// servicesPost serves POST {base}/services/.
func (pg *pages) servicesPost(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	v := &servicesView{In: true, Out: true, Test: true}
	r.Body = http.MaxBytesReader(w, r.Body, pg.maxBody)
	if err := r.ParseForm(); err != nil {
		pg.renderServicesMsg(w, r, pr, http.StatusBadRequest, v, nil, nil, []string{"The form could not be read: " + err.Error()})
		return
	}
	form := r.PostForm
	if !pg.validCSRF(pr, form.Get("csrf_token")) {
		pg.renderServicesMsg(w, r, pr, errCSRF.Status, v, nil, nil, []string{errCSRF.Msg})
		return
	}
	ctx := r.Context()
	switch form.Get("action") {
	case "add":
		v.Type = form.Get("type")
		v.Name = form.Get("display_name")
		in := &app.ServiceInput{Type: &v.Type, DisplayName: &v.Name, Settings: map[string]any{}}
		v.In, v.Out, v.Test = lastValue(form, "incoming") == "true", lastValue(form, "outgoing") == "true", lastValue(form, "test") == "true"
		in.Test = &v.Test
		if !services.IsSpeech(v.Type) {
			in.Incoming, in.Outgoing = &v.In, &v.Out
		}
		for k := range form {
			if name, ok := strings.CutPrefix(k, "set."); ok {
				if val := lastValue(form, k); val != "" {
					in.Settings[name] = val
				}
			}
		}
		svc, err := pg.app.CreateService(ctx, pr.user, in)
		if err != nil {
			ae := envelope.Classify(err)
			if ae.Code == envelope.CodeInternal {
				pg.renderFailure(w, r, pr, err)
				return
			}
			if _, ok := services.Lookup(v.Type); !ok {
				v.Type = ""
			}
			var msgs []string
			if len(ae.Form) == 0 {
				msgs = []string{ae.Msg}
			}
			pg.renderServicesMsg(w, r, pr, ae.Status, v, form, ae.Form, msgs)
			return
		}
		http.Redirect(w, r, pg.link(pr, pg.prefix+"/services/?"+url.Values{"added": {svc.DisplayName}}.Encode()), http.StatusSeeOther)
	case "delete":
		if err := pg.app.DeleteService(ctx, pr.user, form.Get("uuid")); err != nil {
			pg.renderServiceFailure(w, r, pr, v, err)
			return
		}
		http.Redirect(w, r, pg.link(pr, pg.prefix+"/services/?removed=1"), http.StatusSeeOther)
	case "test":
		svc, entries, err := pg.app.TestService(ctx, pr.user, form.Get("uuid"))
		if err != nil {
			pg.renderServiceFailure(w, r, pr, v, err)
			return
		}
		v.Notice = fmt.Sprintf("%s answered: %d file(s) in its directory.", svc.DisplayName, len(entries))
		pg.renderServices(w, r, pr, http.StatusOK, v, nil, nil)
	default:
		pg.renderServicesMsg(w, r, pr, http.StatusBadRequest, v, nil, nil, []string{"action must be add, test or delete"})
	}
}

// renderServiceFailure shows a failed test or delete above the list.
func (pg *pages) renderServiceFailure(w http.ResponseWriter, r *http.Request, pr *pageReq, v *servicesView, err error) {
	ae := envelope.Classify(err)
	if ae.Code == envelope.CodeInternal {
		pg.renderFailure(w, r, pr, err)
		return
	}
	msg := ae.Msg
	if ae.Status == http.StatusNotFound {
		msg = "There is no such service in your account."
	}
	pg.renderServicesMsg(w, r, pr, ae.Status, v, nil, nil, []string{msg})
}
