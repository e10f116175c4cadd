package webpages

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// editView is the edit form of one production.
type editView struct {
	UUID      string
	Action    string
	StatusURL string
	Fields    []formField
	Append    bool
	Groups    []algGroup
	// StartAllowed shows "Start without saving changes"; SaveStartAllowed
	// "Save and start", which a settings error also allows (saving a
	// change may remove its cause).
	StartAllowed     bool
	SaveStartAllowed bool
	ChangeAllowed    bool
}

// formField is one metadata input.
type formField struct {
	Name, Label, Value, Type string
	Error                    string
}

// algGroup is a switch and the settings that refine it.
type algGroup struct {
	Switch   *algField
	Settings []algField
}

// algField is one algorithm checkbox or select.
type algField struct {
	Key, Label, Description, Type string
	Checked                       bool
	Options                       []algOption
	Error                         string
}

type algOption struct {
	Value, Label string
	Selected     bool
}

// editMetadata are the metadata inputs of the edit form, in order.
var editMetadata = []struct{ name, label, typ string }{
	{"title", "Title", "text"}, {"artist", "Artist", "text"}, {"album", "Album", "text"},
	{"subtitle", "Subtitle", "text"}, {"summary", "Summary", "textarea"}, {"genre", "Genre", "text"},
	{"publisher", "Publisher", "text"}, {"track", "Track", "text"}, {"year", "Year", "text"},
	{"url", "URL", "url"}, {"license", "License", "text"}, {"license_url", "License URL", "url"},
	{"tags", "Tags (comma-separated)", "text"},
}

func metadataValue(m production.Metadata, name string) string {
	switch name {
	case "title":
		return m.Title
	case "artist":
		return m.Artist
	case "album":
		return m.Album
	case "subtitle":
		return m.Subtitle
	case "summary":
		return m.Summary
	case "genre":
		return m.Genre
	case "publisher":
		return m.Publisher
	case "track":
		return m.Track
	case "year":
		return m.Year
	case "url":
		return m.URL
	case "license":
		return m.License
	case "license_url":
		return m.LicenseURL
	case "tags":
		return production.JoinTags(m.Tags)
	}
	return ""
}

// optionValue is the form value of an algorithm value.
func optionValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// algRow is an algorithm of the form with its info entry.
type algRow struct {
	production.Algorithm
	info production.AlgorithmInfoEntry
}

// formAlgorithms are the algorithms the edit form of p shows, in table
// order: switches and selects of p's scope (single track or multitrack
// master); the denoise segments list has no form input.
func formAlgorithms(p *production.Production) []algRow {
	scope := p.Scope()
	info := production.AlgorithmInfoFor(scope)
	var rows []algRow
	seen := map[string]bool{}
	for _, a := range production.AlgorithmTable() {
		e, ok := info[a.Key]
		// Only what works: settings this server does not apply yet are
		// not offered.
		if !ok || seen[a.Key] || a.Scopes&scope == 0 || a.Pending != "" || (e.Type != "checkbox" && e.Type != "select") {
			continue
		}
		seen[a.Key] = true
		rows = append(rows, algRow{a, e})
	}
	return rows
}

// current is the effective value of an algorithm of p: its own or the
// default (nil for keys that follow another key).
func current(p *production.Production, row algRow) any {
	if v, ok := p.Algorithms[row.Key]; ok && v != nil {
		return v
	}
	return row.info.DefaultValue
}

// editViewOf builds the form from p, or from a rejected submission (form
// non-nil) so that the user's input survives; errs are form errors by
// field path.
func (pg *pages) editViewOf(pr *pageReq, p *production.Production, form map[string][]string, errs production.FieldErrors) *editView {
	ev := &editView{
		UUID: p.UUID, Action: pg.editURL(pr, p.UUID), StatusURL: pg.statusURL(pr, p.UUID),
		ChangeAllowed: p.CanChange(), Append: p.Metadata.AppendChapters,
	}
	// No start where starting again would fail the same way.
	blocked := p.RestartBlocked(pr.user.Credits())
	ev.StartAllowed = p.CanStart() && blocked == ""
	ev.SaveStartAllowed = p.CanStart() && (blocked == "" || p.ErrorKind == production.ErrorSettings)
	get := func(name, def string) string {
		if form == nil {
			return def
		}
		if v, ok := form[name]; ok && len(v) > 0 {
			return v[0]
		}
		return ""
	}
	for _, f := range editMetadata {
		ev.Fields = append(ev.Fields, formField{Name: f.name, Label: f.label, Type: f.typ,
			Value: get(f.name, metadataValue(p.Metadata, f.name)), Error: errs["metadata."+f.name]})
	}
	if form != nil {
		ev.Append = get("append_chapters", "") != ""
	}
	labels := map[string]string{}
	for _, row := range formAlgorithms(p) {
		labels[row.Key] = row.DisplayName
	}
	index := map[string]int{} // switch key -> group
	for _, row := range formAlgorithms(p) {
		cur := optionValue(current(p, row))
		f := algField{Key: row.Key, Label: row.DisplayName, Description: row.Description, Type: row.info.Type,
			Error: errs["algorithms."+row.Key]}
		if row.info.Type == "checkbox" {
			f.Checked = cur == "true"
			if form != nil {
				f.Checked = get("alg."+row.Key, "") != ""
			}
		} else {
			sel := get("alg."+row.Key, cur)
			switch {
			case row.DefaultFrom != "":
				f.Options = append(f.Options, algOption{Value: "", Label: "Same as " + labels[row.DefaultFrom], Selected: sel == ""})
			case row.DefaultLabel != "":
				f.Options = append(f.Options, algOption{Value: "", Label: row.DefaultLabel, Selected: sel == ""})
			}
			for _, o := range row.info.Options {
				v := optionValue(o.Value)
				f.Options = append(f.Options, algOption{Value: v, Label: o.DisplayName, Selected: v == sel})
			}
		}
		gi, ok := index[row.BelongsTo]
		switch {
		case row.BelongsTo == "" && row.info.Type == "checkbox":
			index[row.Key] = len(ev.Groups)
			ev.Groups = append(ev.Groups, algGroup{Switch: &f})
		case row.BelongsTo != "" && ok:
			ev.Groups[gi].Settings = append(ev.Groups[gi].Settings, f)
		default:
			// A setting without a switch in this scope (the multitrack
			// master's loudness target) stands alone.
			ev.Groups = append(ev.Groups, algGroup{Settings: []algField{f}})
		}
	}
	return ev
}

// editRequest turns the submitted form into an update request: every
// metadata field, and the algorithms whose value the user changed (so an
// unset key keeps following its default).
func editRequest(p *production.Production, form map[string][]string) ([]byte, production.FieldErrors) {
	errs := production.FieldErrors{}
	get := func(name string) string {
		if v := form[name]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	md := map[string]any{"append_chapters": get("append_chapters") != ""}
	for _, f := range editMetadata {
		md[f.name] = get(f.name)
	}
	alg := map[string]any{}
	for _, row := range formAlgorithms(p) {
		cur := optionValue(current(p, row))
		if row.info.Type == "checkbox" {
			on := get("alg."+row.Key) != ""
			if strconv.FormatBool(on) != cur {
				alg[row.Key] = on
			}
			continue
		}
		v, sent := form["alg."+row.Key]
		if !sent || len(v) == 0 || v[0] == cur {
			continue
		}
		if v[0] == "" && row.DefaultFrom != "" {
			alg[row.Key] = nil // back to following its base key
			continue
		}
		found := false
		for _, o := range row.info.Options {
			if optionValue(o.Value) == v[0] {
				alg[row.Key], found = o.Value, true
				break
			}
		}
		if !found {
			errs.Add("algorithms."+row.Key, "is not one of the offered values")
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	req := map[string]any{"metadata": md}
	if len(alg) > 0 {
		req["algorithms"] = alg
	}
	b, err := json.Marshal(req)
	if err != nil {
		errs.Add("", err.Error())
		return nil, errs
	}
	return b, nil
}

// editForm serves GET {base}/production/{uuid}/edit/.
func (pg *pages) editForm(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	p, err := pg.app.GetProduction(r.Context(), pr.user, r.PathValue("uuid"))
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	pg.renderEdit(w, r, pr, http.StatusOK, p, nil, nil, nil)
}

func (pg *pages) renderEdit(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, p *production.Production, form map[string][]string, errs production.FieldErrors, msgs []string) {
	title := "Edit " + p.Metadata.Title
	if p.Metadata.Title == "" {
		title = "Edit production"
	}
	d := pg.data(pr, title)
	d.Edit = pg.editViewOf(pr, p, form, errs)
	d.Errors = msgs
	pg.render(w, r, pr, status, "edit", d)
}

// editPost serves POST {base}/production/{uuid}/edit/: with edit=1 it
// stores the form through the API's update code path; with action=start
// it (then) starts the production like start.json. Success redirects to
// the status page; failures show the form again with the messages.
func (pg *pages) editPost(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	ctx := r.Context()
	id := r.PathValue("uuid")
	p, err := pg.app.GetProduction(ctx, pr.user, id)
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, pg.maxBody)
	if err := r.ParseForm(); err != nil {
		pg.renderEdit(w, r, pr, http.StatusBadRequest, p, nil, nil, []string{"The form could not be read: " + err.Error()})
		return
	}
	form := r.PostForm
	if !pg.validCSRF(pr, form.Get("csrf_token")) {
		pg.renderEdit(w, r, pr, errCSRF.Status, p, nil, nil, []string{errCSRF.Msg})
		return
	}
	action := form.Get("action")
	if action != "" && action != "save" && action != "start" {
		pg.renderEdit(w, r, pr, http.StatusBadRequest, p, form, nil, []string{"action must be save or start"})
		return
	}
	if form.Get("edit") != "" {
		body, errs := editRequest(p, form)
		if len(errs) > 0 {
			ae := envelope.Invalid(errs)
			pg.renderEdit(w, r, pr, ae.Status, p, form, ae.Form, messages(ae))
			return
		}
		in, err := production.DecodeInput(body)
		if err != nil {
			err = envelope.DecodeError(err)
		} else {
			var q *production.Production
			if q, err = pg.app.UpdateProduction(ctx, pr.user, id, in); err == nil {
				p = q
			}
		}
		if err != nil {
			ae := envelope.Classify(err)
			if ae.Status == http.StatusNotFound || ae.Code == envelope.CodeInternal {
				pg.renderFailure(w, r, pr, err)
				return
			}
			pg.renderEdit(w, r, pr, ae.Status, p, form, ae.Form, messages(ae))
			return
		}
	}
	if action == "start" {
		if _, err := pg.app.StartProduction(ctx, pr.user, id); err != nil {
			ae := envelope.Classify(err)
			if ae.Status == http.StatusNotFound || ae.Code == envelope.CodeInternal {
				pg.renderFailure(w, r, pr, err)
				return
			}
			pg.renderEdit(w, r, pr, ae.Status, p, nil, nil, messages(ae))
			return
		}
	}
	http.Redirect(w, r, pg.statusURL(pr, id), http.StatusSeeOther)
}
