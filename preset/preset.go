// Package preset implements presets: reusable production templates with
// the structure of a production but without chapters, input file and
// status, their creation, update and validation. A production is created
// by package production, which applies a preset to it
// (production.Production.ApplyPreset) in the shape Preset.Template gives.
package preset

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/audiopost/audiopost/production"
)

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

// Template returns pr in the shape of a production: what the production
// rules validate and update, and what a production the preset is applied
// to takes (production.Production.ApplyPreset, production.Presets).
func (pr *Preset) Template() *production.Production {
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
	errs.Merge("", production.Validate(pr.Template(), production.ValidateOptions{Preset: true}))
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
// A preset cannot be created from another preset; preset_cover_image is
// taken from opts.Presets.
func New(in *Input, opts production.ApplyOptions) (*Preset, error) {
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
	if err := pr.Apply(in, opts); err != nil {
		return nil, err
	}
	return pr, nil
}

// Apply merges an update request into pr with the production update rules
// (lists appended, reset_data, reset_cover_image, preset_cover_image from
// opts.Presets) and validates the result. On error pr is unchanged.
func (pr *Preset) Apply(in *Input, opts production.ApplyOptions) error {
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
	v := pr.Template()
	opts.Preset = true
	if err := v.Apply(&in.Input, opts); err != nil {
		var fe production.FieldErrors
		if !errors.As(err, &fe) {
			return err
		}
		errs.Merge("", fe)
	}
	if len(errs) > 0 {
		return errs
	}
	*pr = *fromView(v, name)
	return nil
}
