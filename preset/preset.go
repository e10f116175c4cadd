// Package preset implements presets: reusable production templates with
// the structure of a production but without chapters, input file and
// status, and the rules for creating and updating productions from them.
package preset

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
)

// ErrNotFound is what a Lookup returns for an unknown preset uuid (or one
// of another user). It is reported as a field error, never to the client as
// a server failure.
var ErrNotFound = errors.New("preset: not found")

// Lookup finds a preset by uuid for requests that name one (preset,
// preset_cover_image). It returns an error wrapping ErrNotFound when there
// is none.
type Lookup func(ctx context.Context, uuid string) (*Preset, error)

// Preset is a reusable production template as the server keeps and returns
// it.
type Preset struct {
	UUID              string                        `json:"uuid"`
	PresetName        string                        `json:"preset_name"`
	Metadata          production.Metadata           `json:"metadata"`
	OutputBasename    string                        `json:"output_basename"`
	OutputFiles       []production.OutputFile       `json:"output_files"`
	OutgoingServices  []production.OutgoingService  `json:"outgoing_services"`
	Algorithms        production.AlgorithmValues    `json:"algorithms"`
	MultiInputFiles   []production.MultiInputFile   `json:"multi_input_files"`
	SpeechRecognition *production.SpeechRecognition `json:"speech_recognition"`
	Image             *string                       `json:"image"`
	Thumbnail         *string                       `json:"thumbnail"`
	Webhook           *string                       `json:"webhook"`
	IsMultitrack      bool                          `json:"is_multitrack"`
	CreationTime      production.Time               `json:"creation_time"`
}

// presetOutputFile marshals an output file in the preset shape: size and
// checksum null or empty (a preset has no results) and
// outgoing_service_urls always present.
func presetOutputFile(o production.OutputFile) (json.RawMessage, error) {
	urls := o.OutgoingServiceURLs
	if urls == nil {
		urls = []string{}
	}
	o.Size, o.SizeString, o.DownloadURL, o.Checksum, o.Parts = nil, "", "", "", nil
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m["outgoing_service_urls"], err = json.Marshal(urls); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// MarshalJSON writes lists as arrays and output files in the preset shape.
func (pr Preset) MarshalJSON() ([]byte, error) {
	type plain Preset
	type shape struct {
		plain
		OutputFiles []json.RawMessage `json:"output_files"`
	}
	s := shape{plain: plain(pr), OutputFiles: []json.RawMessage{}}
	for _, o := range pr.OutputFiles {
		b, err := presetOutputFile(o)
		if err != nil {
			return nil, err
		}
		s.OutputFiles = append(s.OutputFiles, b)
	}
	s.Metadata.Tags = orEmpty(pr.Metadata.Tags)
	s.OutgoingServices = orEmpty(pr.OutgoingServices)
	s.MultiInputFiles = orEmpty(pr.MultiInputFiles)
	if s.Algorithms == nil {
		s.Algorithms = production.AlgorithmValues{}
	}
	return json.Marshal(s)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Input is what a client may send to create or update a preset: the
// production fields plus preset_name.
type Input struct {
	production.Input
	PresetName *string `json:"preset_name,omitempty"`
}

// DecodeInput decodes a preset create or update request like
// production.DecodeInput.
func DecodeInput(data []byte) (*Input, error) {
	top, err := production.SplitObject(data)
	if err != nil {
		return nil, err
	}
	in, errs := &Input{}, production.FieldErrors{}
	production.DecodeInputFields(top, &in.Input, errs)
	if raw, ok := top["preset_name"]; ok {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			errs.Add("preset_name", "must be a string")
		} else {
			in.PresetName = &name
		}
	}
	return in, errs.Err()
}

// view returns the production-shaped view of pr that the production rules
// validate and update.
func (pr *Preset) view() *production.Production {
	p := &production.Production{
		UUID: pr.UUID, Metadata: pr.Metadata, OutputBasename: pr.OutputBasename,
		OutputFiles: pr.OutputFiles, OutgoingServices: pr.OutgoingServices, Algorithms: pr.Algorithms,
		MultiInputFiles: pr.MultiInputFiles, SpeechRecognition: pr.SpeechRecognition,
		Image: pr.Image, Thumbnail: pr.Thumbnail, Webhook: pr.Webhook, IsMultitrack: pr.IsMultitrack,
		CreationTime: pr.CreationTime, Status: production.StatusNotStarted,
	}
	return p.Clone()
}

func fromView(p *production.Production, name string) *Preset {
	return &Preset{
		UUID: p.UUID, PresetName: name, Metadata: p.Metadata, OutputBasename: p.OutputBasename,
		OutputFiles: p.OutputFiles, OutgoingServices: p.OutgoingServices, Algorithms: p.Algorithms,
		MultiInputFiles: p.MultiInputFiles, SpeechRecognition: p.SpeechRecognition,
		Image: p.Image, Thumbnail: p.Thumbnail, Webhook: p.Webhook, IsMultitrack: p.IsMultitrack,
		CreationTime: p.CreationTime,
	}
}

// Validate checks a preset: preset_name is required and every production
// rule that applies to presets holds.
func Validate(pr *Preset) production.FieldErrors {
	errs := production.FieldErrors{}
	if msg := nameProblem(pr.PresetName); msg != "" {
		errs.Add("preset_name", msg)
	}
	errs.Merge("", production.Validate(pr.view(), production.ValidateOptions{Preset: true}))
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func nameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "is required"
	case len(name) > 500:
		return "must be at most 500 bytes"
	case strings.ContainsAny(name, "\x00\r\n"):
		return "must be a single line of text"
	}
	return ""
}

// New creates a preset from a creation request; preset_name is required.
// A preset cannot be created from another preset.
func New(ctx context.Context, in *Input, lookup Lookup, opts production.ApplyOptions) (*Preset, error) {
	now := opts.Now
	if now.IsZero() {
		now = production.Now()
	}
	pr := &Preset{CreationTime: now}
	errs := production.FieldErrors{}
	if in.PresetName == nil {
		errs.Add("preset_name", "is required")
	}
	if in.Preset != "" {
		errs.Add("preset", "a preset cannot be created from a preset")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if err := pr.Apply(ctx, in, lookup, opts); err != nil {
		return nil, err
	}
	return pr, nil
}

// Apply merges an update request into pr with the production update rules
// (lists appended, reset_data, reset_cover_image, preset_cover_image) and
// validates the result. On error pr is unchanged.
func (pr *Preset) Apply(ctx context.Context, in *Input, lookup Lookup, opts production.ApplyOptions) error {
	errs := production.FieldErrors{}
	if in.Preset != "" {
		errs.Add("preset", "not allowed on a preset")
	}
	name := pr.PresetName
	if in.PresetName != nil {
		name = strings.TrimSpace(*in.PresetName)
	}
	if msg := nameProblem(name); msg != "" {
		errs.Add("preset_name", msg)
	}
	v := pr.view()
	opts.Preset = true
	if err := v.Apply(&in.Input, opts); err != nil {
		var fe production.FieldErrors
		if !errors.As(err, &fe) {
			return err
		}
		errs.Merge("", fe)
	}
	if len(errs) == 0 && in.PresetCoverImage != "" {
		if err := coverFrom(ctx, v, in.PresetCoverImage, lookup, errs); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errs
	}
	*pr = *fromView(v, name)
	return nil
}

// coverFrom copies the cover image of preset uuid into p.
func coverFrom(ctx context.Context, p *production.Production, uuid string, lookup Lookup, errs production.FieldErrors) error {
	src, err := find(ctx, uuid, lookup, "preset_cover_image", errs)
	if err != nil || src == nil {
		return err
	}
	if src.Image == nil {
		errs.Add("preset_cover_image", "that preset has no cover image")
		return nil
	}
	img := *src.Image
	p.Image = &img
	p.Thumbnail = nil
	if src.Thumbnail != nil {
		t := *src.Thumbnail
		p.Thumbnail = &t
	}
	return nil
}

// find looks a preset up; a missing preset is a field error at path, other
// lookup failures are returned.
func find(ctx context.Context, uuid string, lookup Lookup, path string, errs production.FieldErrors) (*Preset, error) {
	if lookup == nil {
		errs.Add(path, "presets cannot be looked up here")
		return nil, nil
	}
	pr, err := lookup(ctx, uuid)
	if errors.Is(err, ErrNotFound) || (err == nil && pr == nil) {
		errs.Add(path, "no such preset")
		return nil, nil
	}
	return pr, err
}

// NewProduction creates a production from a creation request, resolving
// the request's preset (if any) through lookup.
//
// Production values override preset values: metadata and algorithms merge
// key by key with the request winning; output_files and outgoing_services
// sent in the request replace the preset's lists; multi_input_files sent
// with the id of a preset entry complete that entry (the request's fields
// and algorithm keys win), others are appended. Afterwards metadata fields
// still empty are imported from tags, the input file's tags (pass the
// zero audio.Tags when the input has not been probed yet and call
// Metadata.ImportTags later).
func NewProduction(ctx context.Context, in *production.Input, lookup Lookup, tags audio.Tags, opts production.ApplyOptions) (*production.Production, error) {
	now := opts.Now
	if now.IsZero() {
		now = production.Now()
	}
	opts.Now = now
	p := &production.Production{Status: production.StatusIncomplete, CreationTime: now}
	errs := production.FieldErrors{}
	req := *in
	if in.Preset != "" {
		pr, err := find(ctx, in.Preset, lookup, "preset", errs)
		if err != nil {
			return nil, err
		}
		if pr != nil {
			overlay(p, pr)
			req = mergeRequestLists(p, in)
		}
	}
	if len(errs) == 0 && in.PresetCoverImage != "" {
		if err := coverFrom(ctx, p, in.PresetCoverImage, lookup, errs); err != nil {
			return nil, err
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	req.Preset, req.PresetCoverImage = "", ""
	if err := p.Apply(&req, opts); err != nil {
		return nil, err
	}
	p.Metadata.ImportTags(tags)
	return p, nil
}

// UpdateProduction applies an update request to p, resolving preset and
// preset_cover_image through lookup. A preset on an update (allowed only
// without reset_data) overlays the preset's values on p, then the request's
// fields are applied as in NewProduction. On error p is unchanged.
func UpdateProduction(ctx context.Context, p *production.Production, in *production.Input, lookup Lookup, opts production.ApplyOptions) error {
	if !p.CanChange() {
		return production.ErrProcessing
	}
	errs := production.FieldErrors{}
	q := p.Clone()
	req := *in
	if in.Preset != "" && in.ResetData {
		errs.Add("preset", "cannot be combined with reset_data")
		return errs
	}
	if in.Preset != "" {
		pr, err := find(ctx, in.Preset, lookup, "preset", errs)
		if err != nil {
			return err
		}
		if pr != nil {
			overlay(q, pr)
			req = mergeRequestLists(q, in)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	req.Preset, req.PresetCoverImage = "", ""
	if err := q.Apply(&req, opts); err != nil {
		return err
	}
	if in.PresetCoverImage != "" {
		if err := coverFrom(ctx, q, in.PresetCoverImage, lookup, errs); err != nil {
			return err
		}
		if len(errs) > 0 {
			return errs
		}
	}
	*p = *q
	return nil
}

// overlay copies the values a preset defines onto p: set metadata fields,
// algorithm keys, and the lists and references the preset has.
func overlay(p *production.Production, pr *Preset) {
	src := pr.view()
	m := &p.Metadata
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&m.Title, src.Metadata.Title}, {&m.Artist, src.Metadata.Artist}, {&m.Album, src.Metadata.Album},
		{&m.Subtitle, src.Metadata.Subtitle}, {&m.Summary, src.Metadata.Summary}, {&m.Genre, src.Metadata.Genre},
		{&m.Publisher, src.Metadata.Publisher}, {&m.URL, src.Metadata.URL}, {&m.License, src.Metadata.License},
		{&m.LicenseURL, src.Metadata.LicenseURL}, {&m.Track, src.Metadata.Track}, {&m.Year, src.Metadata.Year},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if src.Metadata.AppendChapters {
		m.AppendChapters = true
	}
	if len(src.Metadata.Tags) > 0 {
		m.Tags = src.Metadata.Tags
	}
	if src.Metadata.Location != nil {
		m.Location = src.Metadata.Location
	}
	if src.OutputBasename != "" {
		p.OutputBasename = src.OutputBasename
	}
	if len(src.OutputFiles) > 0 {
		p.OutputFiles = src.OutputFiles
		for i := range p.OutputFiles {
			p.OutputFiles[i].OutgoingServiceURLs = nil
		}
	}
	if len(src.OutgoingServices) > 0 {
		p.OutgoingServices = src.OutgoingServices
	}
	p.Algorithms = p.Algorithms.Merge(src.Algorithms)
	if len(src.MultiInputFiles) > 0 {
		p.MultiInputFiles = src.MultiInputFiles
	}
	if src.SpeechRecognition != nil {
		p.SpeechRecognition = src.SpeechRecognition
	}
	if src.Image != nil {
		p.Image, p.Thumbnail = src.Image, src.Thumbnail
	}
	if src.Webhook != nil {
		p.Webhook = src.Webhook
	}
	if src.IsMultitrack {
		p.IsMultitrack = true
	}
}

// mergeRequestLists prepares a request for a production that already
// carries a preset's values: output_files sent replace the preset's list,
// and multi_input_files sent with the id of an existing entry update that
// entry in place instead of being appended. It returns the request with
// those entries removed.
func mergeRequestLists(p *production.Production, in *production.Input) production.Input {
	req := *in
	if in.OutputFiles != nil {
		p.OutputFiles = nil
	}
	req.MultiInputFiles = nil
	for _, m := range in.MultiInputFiles {
		i := slices.IndexFunc(p.MultiInputFiles, func(x production.MultiInputFile) bool { return m.ID != "" && x.ID == m.ID })
		if i < 0 {
			req.MultiInputFiles = append(req.MultiInputFiles, m)
			continue
		}
		// Remove the preset entry and append a merged request entry, so the
		// production rules parse and validate it like any sent entry.
		old := p.MultiInputFiles[i]
		p.MultiInputFiles = slices.Delete(p.MultiInputFiles, i, i+1)
		merged := m
		if merged.Type == "" {
			merged.Type = old.Type
		}
		if merged.Service == "" && merged.InputFile == "" {
			merged.Service, merged.InputFile = old.Service, old.InputFile
		}
		if merged.Offset == nil {
			off := old.Offset
			merged.Offset = &off
		}
		merged.Algorithms = mergeRaw(old.Algorithms, m.Algorithms)
		req.MultiInputFiles = append(req.MultiInputFiles, merged)
	}
	return req
}

// mergeRaw returns the raw form of base with the keys of over on top.
func mergeRaw(base production.AlgorithmValues, over production.RawAlgorithms) production.RawAlgorithms {
	out := production.RawAlgorithms{}
	for k, v := range base {
		b, err := json.Marshal(v)
		if err == nil {
			out[k] = b
		}
	}
	for k, v := range over {
		out[production.CanonicalKey(k)] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
