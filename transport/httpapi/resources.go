package httpapi

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

func encodeProduction(p *production.Production) ([]byte, error) { return production.EncodeDocument(p) }

func decodeProduction(r storage.Resource) (*production.Production, error) {
	return production.DecodeDocument(r)
}

func encodePreset(pr *preset.Preset) ([]byte, error) { return preset.EncodeDocument(pr) }

func decodePreset(r storage.Resource) (*preset.Preset, error) { return preset.DecodeDocument(r) }

func apiTime(t time.Time) production.Time {
	return production.Time{Time: t.UTC().Truncate(time.Millisecond)}
}

func (s *server) applyOpts() production.ApplyOptions {
	return production.ApplyOptions{Now: apiTime(s.now())}
}

func (s *server) loadProduction(ctx context.Context, tx storage.Tx, owner, uuid string) (*production.Production, storage.Resource, error) {
	r, err := tx.GetResource(ctx, owner, storage.KindProduction, uuid)
	if err != nil {
		return nil, r, err
	}
	p, err := decodeProduction(r)
	return p, r, err
}

func (s *server) loadPreset(ctx context.Context, tx storage.Tx, owner, uuid string) (*preset.Preset, storage.Resource, error) {
	r, err := tx.GetResource(ctx, owner, storage.KindPreset, uuid)
	if err != nil {
		return nil, r, err
	}
	pr, err := decodePreset(r)
	return pr, r, err
}

// presets looks up the presets of owner a request names (preset,
// preset_cover_image), for production.ApplyOptions.Presets.
func (s *server) presets(ctx context.Context, owner string, uuids ...string) (production.Presets, error) {
	out := production.Presets{}
	for _, id := range uuids {
		if id == "" {
			continue
		}
		pr, _, err := s.loadPreset(ctx, s.store, owner, id)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			out[id] = pr.Template()
		}
	}
	return out, nil
}

// applyOptsFor are applyOpts with the presets of owner in names.
func (s *server) applyOptsFor(ctx context.Context, owner string, in *production.Input) (production.ApplyOptions, error) {
	opts := s.applyOpts()
	var err error
	opts.Presets, err = s.presets(ctx, owner, in.Preset, in.PresetCoverImage)
	return opts, err
}

// updateProduction loads a production, lets fn change it, fits it to the
// work budget (production.FitBudget) and stores it with optimistic
// concurrency; a concurrent change makes it reload and call fn once more,
// a second one is ErrConflict (409).
func (s *server) updateProduction(ctx context.Context, owner, uuid string, fn func(p *production.Production) error) (*production.Production, error) {
	for attempt := 0; ; attempt++ {
		p, r, err := s.loadProduction(ctx, s.store, owner, uuid)
		if err != nil {
			return nil, err
		}
		if err := fn(p); err != nil {
			return nil, err
		}
		if err := p.FitBudget(s.service.Limits); err != nil {
			return nil, err
		}
		if r.Doc, err = encodeProduction(p); err != nil {
			return nil, err
		}
		r.Status = int(p.Status)
		err = s.store.UpdateResource(ctx, &r)
		if errors.Is(err, storage.ErrConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// updatePreset is updateProduction for presets.
func (s *server) updatePreset(ctx context.Context, owner, uuid string, fn func(pr *preset.Preset) error) (*preset.Preset, error) {
	for attempt := 0; ; attempt++ {
		pr, r, err := s.loadPreset(ctx, s.store, owner, uuid)
		if err != nil {
			return nil, err
		}
		if err := fn(pr); err != nil {
			return nil, err
		}
		if r.Doc, err = encodePreset(pr); err != nil {
			return nil, err
		}
		err = s.store.UpdateResource(ctx, &r)
		if errors.Is(err, storage.ErrConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return pr, nil
	}
}

// Download kinds of GET /api/download/{kind}/{uuid}/{filename}.
const (
	dlResult = "audio-result" // productions/{uuid}/output/{filename}
	dlUpload = "audio-upload" // input, cover image and thumbnail, intros ({id}/{filename})
	dlPreset = "preset"       // presets/{uuid}/image/{filename}
)

// downloadURL is the absolute URL of a stored file.
func (s *server) downloadURL(kind, uuid string, name ...string) string {
	var b strings.Builder
	b.WriteString(s.base)
	b.WriteString("/api/download/")
	b.WriteString(kind)
	b.WriteByte('/')
	b.WriteString(url.PathEscape(uuid))
	for _, n := range name {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(n))
	}
	return b.String()
}

// isAbsURL reports whether s already is a URL, as opposed to a file name
// the engine stored.
func isAbsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}

// productionView is the response form of p: a copy with the URLs of its
// files and pages filled in from BaseURL, and its output files as
// responses list them (every part of an output split on chapters an
// entry of its own, see Production.ListedOutputFiles), so that every
// file written has an entry with its download_url and checksum.
func (s *server) productionView(p *production.Production) *production.Production {
	q := p.Clone()
	q.StatusPage = s.base + "/production/" + url.PathEscape(q.UUID) + "/status/"
	q.EditPage = s.base + "/production/" + url.PathEscape(q.UUID) + "/edit/"
	q.OutputFiles = q.ListedOutputFiles()
	for i := range q.OutputFiles {
		o := &q.OutputFiles[i]
		// Size is set by the engine once the file exists.
		if o.Size != nil && o.DownloadURL == "" {
			o.DownloadURL = s.downloadURL(dlResult, q.UUID, q.OutputFilename(i))
		}
	}
	if q.WaveformImage != "" && !isAbsURL(q.WaveformImage) {
		q.WaveformImage = s.downloadURL(dlResult, q.UUID, q.WaveformImage)
	}
	if q.LoudnessImage != "" && !isAbsURL(q.LoudnessImage) {
		q.LoudnessImage = s.downloadURL(dlResult, q.UUID, q.LoudnessImage)
	}
	if q.WaveformImage == "" {
		for i, o := range q.OutputFiles {
			if o.Format == "waveform" && o.Size != nil {
				q.WaveformImage = s.downloadURL(dlResult, q.UUID, q.OutputFilename(i))
			}
		}
	}
	for i := range q.Chapters {
		if img := q.Chapters[i].Image; img != nil && *img != "" && !isAbsURL(*img) {
			u := s.downloadURL(dlUpload, q.UUID, *img)
			q.Chapters[i].Image = &u
		}
	}
	return q
}

// withDeliveries lists the webhook calls of the production v (a view)
// from the outbox into v.WebhookDeliveries, newest first.
func (s *server) withDeliveries(ctx context.Context, owner string, v *production.Production) error {
	ds, err := s.store.ListDeliveries(ctx, owner, v.UUID)
	if err != nil {
		return err
	}
	v.WebhookDeliveries = make([]production.WebhookDelivery, 0, len(ds))
	for _, d := range ds {
		v.WebhookDeliveries = append(v.WebhookDeliveries, deliveryView(d))
	}
	return nil
}

// deliveryView is a delivery as the API shows it to the production's
// owner: no URL (the production has it) and no payload but its status.
func deliveryView(d storage.Delivery) production.WebhookDelivery {
	at := func(t time.Time) *production.Time {
		pt := production.Time{Time: t.UTC().Truncate(time.Millisecond)}
		return &pt
	}
	w := production.WebhookDelivery{State: string(d.State), Attempts: d.Attempts, Created: *at(d.Created),
		HTTPStatus: d.HTTPStatus, Error: d.LastError}
	if vals, err := url.ParseQuery(string(d.Payload)); err == nil {
		if n, err := strconv.Atoi(vals.Get("status")); err == nil {
			w.Status = production.Status(n)
		}
	}
	if d.Attempts > 0 {
		w.LastAttempt = at(d.Updated)
	}
	// A claimed delivery's next_attempt_at is its lease, not a schedule.
	if d.State == storage.DeliveryPending && d.Worker == "" {
		w.NextAttempt = at(d.NextAttempt)
	}
	return w
}

// presetView is the response form of a preset.
func (s *server) presetView(pr *preset.Preset) *preset.Preset {
	q := *pr
	return &q
}

// minimalProduction is a production in a minimal_data list.
type minimalProduction struct {
	Status       production.Status `json:"status"`
	UUID         string            `json:"uuid"`
	IsMultitrack bool              `json:"is_multitrack"`
	CreationTime production.Time   `json:"creation_time"`
	Metadata     minimalMetadata   `json:"metadata"`
	OutputFiles  []minimalOutput   `json:"output_files"`
}

type minimalMetadata struct {
	Title string `json:"title"`
}

type minimalOutput struct {
	Format      string `json:"format"`
	Bitrate     int    `json:"bitrate"`
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
}

// minimalPreset is a preset in a minimal_data list.
type minimalPreset struct {
	PresetName   string          `json:"preset_name"`
	CreationTime production.Time `json:"creation_time"`
	UUID         string          `json:"uuid"`
	IsMultitrack bool            `json:"is_multitrack"`
	Metadata     minimalMetadata `json:"metadata"`
}

func (s *server) minimalProduction(p *production.Production) minimalProduction {
	v := s.productionView(p)
	m := minimalProduction{Status: v.Status, UUID: v.UUID, IsMultitrack: v.IsMultitrack, CreationTime: v.CreationTime,
		Metadata: minimalMetadata{Title: v.Metadata.Title}, OutputFiles: []minimalOutput{}}
	for i, o := range v.OutputFiles {
		m.OutputFiles = append(m.OutputFiles, minimalOutput{Format: o.Format, Bitrate: o.Bitrate, DownloadURL: o.DownloadURL, Filename: v.OutputFilename(i)})
	}
	return m
}

func minimalPresetOf(pr *preset.Preset) minimalPreset {
	return minimalPreset{PresetName: pr.PresetName, CreationTime: pr.CreationTime, UUID: pr.UUID,
		IsMultitrack: pr.IsMultitrack, Metadata: minimalMetadata{Title: pr.Metadata.Title}}
}
