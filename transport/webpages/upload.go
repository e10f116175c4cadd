package webpages

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/internal/simpleform"
)

// uploadView is the upload form.
type uploadView struct {
	Action  string
	Title   string
	Presets []algOption
	Formats []algOption
	Replace bool
}

// defaultUploadFormat is preselected: every browser plays it.
const defaultUploadFormat = "mp3"

// maxPagePresets bounds the preset select.
const maxPagePresets = 200

// uploadFormats are the output formats offered on the upload page: the
// audio ones a single-track production can have.
func uploadFormats() []production.OutputFormat {
	var out []production.OutputFormat
	for _, f := range production.OutputFormats() {
		if (f.Type == production.TypeLossy || f.Type == production.TypeLossless) && !f.MultitrackOnly && f.Name != "input" {
			out = append(out, f)
		}
	}
	return out
}

func (pg *pages) uploadViewOf(r *http.Request, pr *pageReq, fields map[string]string) (*uploadView, error) {
	uv := &uploadView{Action: pg.link(pr, pg.prefix+"/upload/")}
	format, presetID := defaultUploadFormat, ""
	if fields != nil {
		uv.Title, format, presetID = fields["title"], fields["output_format"], fields["preset"]
		uv.Replace = fields["replace_outputs"] != ""
	}
	prs, err := pg.app.ListPresets(r.Context(), pr.user, maxPagePresets, 0)
	if err != nil {
		return nil, err
	}
	uv.Presets = append(uv.Presets, algOption{Value: "", Label: "No preset", Selected: presetID == ""})
	for _, p := range prs {
		name := p.PresetName
		if name == "" {
			name = p.UUID
		}
		uv.Presets = append(uv.Presets, algOption{Value: p.UUID, Label: name, Selected: p.UUID == presetID})
	}
	uv.Formats = append(uv.Formats, algOption{Value: "", Label: "None (the preset's outputs only)", Selected: format == ""})
	for _, f := range uploadFormats() {
		uv.Formats = append(uv.Formats, algOption{Value: f.Name, Label: f.DisplayName, Selected: f.Name == format})
	}
	return uv, nil
}

// uploadForm serves GET {base}/upload/.
func (pg *pages) uploadForm(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	pg.renderUpload(w, r, pr, http.StatusOK, nil, nil)
}

func (pg *pages) renderUpload(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, fields map[string]string, msgs []string) {
	uv, err := pg.uploadViewOf(r, pr, fields)
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	d := pg.data(pr, "New production")
	d.Upload = uv
	d.Errors = msgs
	pg.render(w, r, pr, status, "upload", d)
}

// uploadPost serves POST {base}/upload/: the simple API's code path with
// the page's CSRF check before any file is stored. The output format
// chosen is added to the preset's outputs (unless the preset already has
// that format), or replaces them when "replace" is ticked. Success
// redirects to the new production's status page.
func (pg *pages) uploadPost(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	prq := pr
	var fields map[string]string
	p, err := simpleform.Create(w, r, pg.app, pr.user, pg.maxUp, simpleform.Hooks{
		Check: func(f map[string]string) error {
			fields = f
			if !pg.validCSRF(pr, f["csrf_token"]) {
				return errCSRF
			}
			return nil
		},
		Extra: func(f map[string]string, req map[string]any) error {
			format := strings.TrimSpace(f["output_format"])
			if format == "" {
				return nil
			}
			if !pg.offered(format) {
				return envelope.FieldError("output_format", "is not an offered output format")
			}
			// The preset's outputs as a request would send them: the
			// response-only fields (size, download_url, ...) left out.
			var outputs []map[string]any
			has := false
			if id := strings.TrimSpace(f["preset"]); id != "" && f["replace_outputs"] == "" {
				pr, err := pg.app.GetPreset(r.Context(), prq.user, id)
				if errors.Is(err, storage.ErrNotFound) {
					return envelope.FieldError("preset", "no such preset")
				}
				if err != nil {
					return err
				}
				for _, o := range pr.OutputFiles {
					m := map[string]any{"format": o.Format, "bitrate": o.Bitrate, "ending": o.Ending, "suffix": o.Suffix,
						"filename": o.Filename, "split_on_chapters": o.SplitOnChapters, "mono_mixdown": o.MonoMixdown,
						"outgoing_services": o.OutgoingServices}
					if o.Subtitles != nil {
						b, _ := json.Marshal(o.Subtitles)
						json.Unmarshal(b, &m)
					}
					outputs = append(outputs, m)
					has = has || o.Format == format
				}
			}
			if !has {
				outputs = append(outputs, map[string]any{"format": format})
			}
			req["output_files"] = outputs
			return nil
		},
	})
	if err != nil {
		if errors.Is(err, errCSRF) {
			pg.renderUpload(w, r, pr, errCSRF.Status, nil, []string{errCSRF.Msg})
			return
		}
		ae := envelope.Classify(err)
		if ae.Code == envelope.CodeInternal {
			pg.renderFailure(w, r, pr, err)
			return
		}
		pg.renderUpload(w, r, pr, ae.Status, fields, messages(ae))
		return
	}
	http.Redirect(w, r, pg.statusURL(pr, p.UUID), http.StatusSeeOther)
}

func (pg *pages) offered(format string) bool {
	for _, f := range uploadFormats() {
		if f.Name == format {
			return true
		}
	}
	return false
}
