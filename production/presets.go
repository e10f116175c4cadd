package production

import (
	"encoding/json"
	"slices"
)

// Presets are the presets a request may name (preset,
// preset_cover_image), by uuid, each in the shape of a production (see
// preset.Preset.Template). The caller looks them up before a request is
// applied, so that applying it needs no store: a uuid missing from the
// map is "no such preset" (another user's preset too), and a nil map
// means presets cannot be looked up where the request is applied.
type Presets map[string]*Production

// find returns preset uuid, or records at path why there is none.
func (ps Presets) find(uuid, path string, errs FieldErrors) *Production {
	if ps == nil {
		errs.Add(path, "presets cannot be looked up here")
		return nil
	}
	pr := ps[uuid]
	if pr == nil {
		errs.Add(path, "no such preset")
	}
	return pr
}

// ApplyPreset lays the values a preset defines over p: set metadata
// fields, algorithm keys, and the lists and references the preset has.
// pr is the preset in the shape of a production (preset.Preset.Template);
// it is not changed.
func (p *Production) ApplyPreset(pr *Production) {
	src := pr.Clone()
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

// coverFrom copies the cover image of preset uuid into p.
func (p *Production) coverFrom(presets Presets, uuid string, errs FieldErrors) {
	src := presets.find(uuid, "preset_cover_image", errs)
	if src == nil {
		return
	}
	if src.Image == nil {
		errs.Add("preset_cover_image", "that preset has no cover image")
		return
	}
	img := *src.Image
	p.Image = &img
	p.Thumbnail = nil
	if src.Thumbnail != nil {
		t := *src.Thumbnail
		p.Thumbnail = &t
	}
}

// mergeRequestLists prepares a request for a production that already
// carries a preset's values: output_files sent replace the preset's list,
// and multi_input_files sent with the id of an existing entry update that
// entry in place instead of being appended. It returns the request with
// those entries removed.
func (p *Production) mergeRequestLists(in *Input) Input {
	req := *in
	if in.OutputFiles != nil {
		p.OutputFiles = nil
	}
	req.MultiInputFiles = nil
	for _, m := range in.MultiInputFiles {
		i := slices.IndexFunc(p.MultiInputFiles, func(x MultiInputFile) bool { return m.ID != "" && x.ID == m.ID })
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
func mergeRaw(base AlgorithmValues, over RawAlgorithms) RawAlgorithms {
	out := RawAlgorithms{}
	for k, v := range base {
		b, err := json.Marshal(v)
		if err == nil {
			out[k] = b
		}
	}
	for k, v := range over {
		out[CanonicalKey(k)] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
