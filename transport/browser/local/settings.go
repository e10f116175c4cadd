package local

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
)

// Offered are the output formats a production without a server can have:
// the audio formats audiopost encodes in Go and the side files it writes
// itself. The others need a program the browser does not have (ffmpeg
// for the lossy formats, ALAC and video; a speech recognizer for
// subtitles and transcripts) or several inputs (tracks).
var Offered = []string{"flac", "wav", "wav-24bit", "stats", "descr", "cutlist", "chaps", "psc", "waveform"}

// notOffered says why a format is not in Offered.
func notOffered(f production.OutputFormat) string {
	switch {
	case f.NeedsSpeech:
		return f.DisplayName + " needs a speech recognizer, which runs on a server only"
	case f.MultitrackOnly:
		return f.DisplayName + " needs a multitrack production"
	case f.Name == "input":
		return "the unprocessed input is the file you already have"
	case f.Name == "image":
		return "a cover image comes from a server"
	}
	return f.DisplayName + " needs ffmpeg, which a browser does not have: choose FLAC or WAV, or process on the server"
}

// NewProduction builds the production that settings describe for a
// recording called name, by the rules of the API: settings are the
// fields of a production creation request (algorithms, output_files,
// metadata, chapters, cut_start, cut_end, ...), and preset, when it is an
// object rather than a UUID, is a preset as GET /api/presets.json returns
// it (or as a request creates one), merged as the API merges the presets
// it stores. Errors are production.FieldErrors naming each field, also
// for what a production without a server cannot do (lossy formats,
// multitrack). Settings the engine stores but cannot apply here
// (outgoing services, webhook, a cover image by URL) are named in the
// production's warning.
func NewProduction(ctx context.Context, settings []byte, name string) (*production.Production, error) {
	if len(strings.TrimSpace(string(settings))) == 0 {
		settings = []byte("{}")
	}
	top, err := production.SplitObject(settings)
	if err != nil {
		return nil, err
	}
	var presets production.Presets
	if raw, ok := top["preset"]; ok && len(raw) > 0 && raw[0] == '{' {
		pin, err := preset.DecodeInput(raw)
		if err != nil {
			return nil, prefixed("preset", err)
		}
		if pin.PresetName == nil {
			unnamed := "preset"
			pin.PresetName = &unnamed
		}
		pr, err := preset.New(pin, production.ApplyOptions{})
		if err != nil {
			return nil, prefixed("preset", err)
		}
		pr.UUID = "inline"
		presets = production.Presets{pr.UUID: pr.Template()}
		top["preset"] = json.RawMessage(`"inline"`)
	}
	body, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	pin, err := production.DecodeInput(body)
	if err != nil {
		return nil, err
	}
	p, err := production.New(pin, production.ApplyOptions{Presets: presets})
	if err != nil {
		return nil, err
	}
	p.InputFile = inputName(name)
	errs := production.Validate(p, production.ValidateOptions{})
	if errs == nil {
		errs = production.FieldErrors{}
	}
	if p.IsMultitrack {
		errs.Add("is_multitrack", "a multitrack production needs several recordings and a server")
	}
	if len(p.OutputFiles) == 0 {
		errs.Add("output_files", "choose an output file: FLAC or WAV")
	}
	for i, o := range p.OutputFiles {
		f, ok := production.LookupFormat(o.Format)
		if ok && !slices.Contains(Offered, o.Format) {
			errs.Add(fmt.Sprintf("output_files.%d.format", i), notOffered(f))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	warnIgnored(p)
	return p, nil
}

// warnIgnored names in p's warning the settings a production without a
// server stores but does not apply. The Engine starts a run with a fresh
// warning, so Process calls it again after the run.
func warnIgnored(p *production.Production) {
	var ignored []string
	if len(p.OutgoingServices) > 0 || slices.ContainsFunc(p.OutputFiles, func(o production.OutputFile) bool { return len(o.OutgoingServices) > 0 }) {
		ignored = append(ignored, "outgoing_services (nothing is sent anywhere from here)")
	}
	if p.Webhook != nil && *p.Webhook != "" {
		ignored = append(ignored, "webhook (no server is called)")
	}
	if p.Image != nil && *p.Image != "" {
		ignored = append(ignored, "image (a cover image is fetched by a server)")
	}
	if len(ignored) > 0 {
		p.AddWarning(production.StatusAudioProcessing, "not applied without a server: "+strings.Join(ignored, ", "))
	}
}

// inputName is the recording's file name as a production's input_file:
// its last path element, "recording" when it has none.
func inputName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" || name == "" {
		return "recording"
	}
	return name
}

// prefixed moves the field errors of a nested object under path.
func prefixed(path string, err error) error {
	if fe, ok := err.(production.FieldErrors); ok {
		out := production.FieldErrors{}
		out.Merge(path, fe)
		return out
	}
	return fmt.Errorf("%s: %w", path, err)
}
