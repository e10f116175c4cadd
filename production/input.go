package production

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Input is what a client may send to create or update a production (and,
// through package preset, a preset). Every field is optional; nil slices
// and pointers, and Optionals with Set false, mean "not sent". Read-only
// fields of Production have no counterpart here, so a client sending them
// changes nothing.
type Input struct {
	Preset            string                      `json:"preset,omitempty"`
	Metadata          *MetadataInput              `json:"metadata,omitempty"`
	Chapters          []ChapterInput              `json:"chapters,omitempty"`
	OutputBasename    *string                     `json:"output_basename,omitempty"`
	OutputFiles       []OutputFileInput           `json:"output_files,omitempty"`
	OutgoingServices  []OutgoingServiceInput      `json:"outgoing_services,omitempty"`
	Algorithms        RawAlgorithms               `json:"algorithms,omitempty"`
	MultiInputFiles   []MultiInputFileInput       `json:"multi_input_files,omitempty"`
	SpeechRecognition Optional[SpeechRecognition] `json:"speech_recognition,omitzero"`
	InputFile         *string                     `json:"input_file,omitempty"`
	Service           Optional[string]            `json:"service,omitzero"`
	Image             Optional[string]            `json:"image,omitzero"`
	Webhook           Optional[string]            `json:"webhook,omitzero"`
	IsMultitrack      *bool                       `json:"is_multitrack,omitempty"`
	// Request-only flags of an update.
	ResetData        bool   `json:"reset_data,omitempty"`
	ResetCoverImage  bool   `json:"reset_cover_image,omitempty"`
	PresetCoverImage string `json:"preset_cover_image,omitempty"`
}

// MetadataInput is the metadata a client sends; unset fields are kept.
type MetadataInput struct {
	Title          *string        `json:"title,omitempty"`
	Artist         *string        `json:"artist,omitempty"`
	Album          *string        `json:"album,omitempty"`
	Subtitle       *string        `json:"subtitle,omitempty"`
	Summary        *string        `json:"summary,omitempty"`
	Genre          *string        `json:"genre,omitempty"`
	Publisher      *string        `json:"publisher,omitempty"`
	URL            *string        `json:"url,omitempty"`
	License        *string        `json:"license,omitempty"`
	LicenseURL     *string        `json:"license_url,omitempty"`
	Track          *IntString     `json:"track,omitempty"`
	Year           *IntString     `json:"year,omitempty"`
	AppendChapters *bool          `json:"append_chapters,omitempty"`
	Tags           *Tags          `json:"tags,omitempty"`
	Location       *LocationInput `json:"location,omitempty"`
}

// Tags is a tag list a client may send as an array of strings or, like the
// simple API, as one comma-separated string.
type Tags []string

var tagsType = jsonType[Tags]()

// UnmarshalJSON implements json.Unmarshaler.
func (t *Tags) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = SplitTags(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: tagsType}
	}
	out := Tags{}
	for _, x := range list {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	*t = out
	return nil
}

// LocationInput is a location as sent; coordinates may be numbers or
// strings.
type LocationInput struct {
	Latitude  Coordinate `json:"latitude"`
	Longitude Coordinate `json:"longitude"`
}

// Coordinate is a decimal degree sent as a number or a string, kept as the
// string the client wrote.
type Coordinate string

var coordinateType = jsonType[Coordinate]()

// UnmarshalJSON implements json.Unmarshaler.
func (c *Coordinate) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = Coordinate(strings.TrimSpace(s))
		return nil
	}
	var f json.Number
	if err := json.Unmarshal(b, &f); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: coordinateType}
	}
	*c = Coordinate(f.String())
	return nil
}

// ChapterInput is a chapter as sent: start as HH:MM:SS[.mmm] or seconds.
type ChapterInput struct {
	Start ChapterStart `json:"start"`
	Title string       `json:"title"`
	URL   string       `json:"url,omitempty"`
	Image *string      `json:"image,omitempty"`
}

// ChapterStart is a chapter start as sent: a time string or a number of
// seconds, kept as text until validation parses it.
type ChapterStart string

var chapterStartType = jsonType[ChapterStart]()

// UnmarshalJSON implements json.Unmarshaler.
func (c *ChapterStart) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = ChapterStart(s)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f < 0 {
		return &json.UnmarshalTypeError{Value: string(b), Type: chapterStartType}
	}
	*c = ChapterStart(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}

// OutputFileInput is an output file as sent. Subtitle keys are pointers so
// validation can tell which were sent (any styling key enables burn-in).
type OutputFileInput struct {
	Format           string   `json:"format"`
	Bitrate          FlexInt  `json:"bitrate,omitempty"`
	Ending           string   `json:"ending,omitempty"`
	Suffix           string   `json:"suffix,omitempty"`
	Filename         string   `json:"filename,omitempty"`
	SplitOnChapters  bool     `json:"split_on_chapters,omitempty"`
	MonoMixdown      bool     `json:"mono_mixdown,omitempty"`
	OutgoingServices []string `json:"outgoing_services,omitempty"`
	// OutgoingServiceURLs is accepted on presets.
	OutgoingServiceURLs []string `json:"outgoing_service_urls,omitempty"`

	Subtitles              *bool   `json:"subtitles,omitempty"`
	SubtitleFont           *string `json:"subtitle_font,omitempty"`
	SubtitleFontSize       *int    `json:"subtitle_font_size,omitempty"`
	SubtitleBold           *bool   `json:"subtitle_bold,omitempty"`
	SubtitleItalic         *bool   `json:"subtitle_italic,omitempty"`
	SubtitleUnderline      *bool   `json:"subtitle_underline,omitempty"`
	SubtitleUppercase      *bool   `json:"subtitle_uppercase,omitempty"`
	SubtitleColor          *string `json:"subtitle_color,omitempty"`
	SubtitleHighlightColor *string `json:"subtitle_highlight_color,omitempty"`
	SubtitleStyleMode      *string `json:"subtitle_style_mode,omitempty"`
	SubtitleHAlign         *string `json:"subtitle_h_align,omitempty"`
	SubtitleVAlign         *string `json:"subtitle_v_align,omitempty"`
	SubtitleWordHighlight  *string `json:"subtitle_word_highlight,omitempty"`
}

// hasStyling reports whether any subtitle styling key was sent.
func (o *OutputFileInput) hasStyling() bool {
	return o.SubtitleFont != nil || o.SubtitleFontSize != nil || o.SubtitleBold != nil ||
		o.SubtitleItalic != nil || o.SubtitleUnderline != nil || o.SubtitleUppercase != nil ||
		o.SubtitleColor != nil || o.SubtitleHighlightColor != nil || o.SubtitleStyleMode != nil ||
		o.SubtitleHAlign != nil || o.SubtitleVAlign != nil || o.SubtitleWordHighlight != nil
}

// OutgoingServiceInput is an outgoing service reference as sent.
type OutgoingServiceInput struct {
	UUID         string `json:"uuid"`
	Downloadable *bool  `json:"downloadable,omitempty"`
	Sharing      string `json:"sharing,omitempty"`
	TrackType    string `json:"track_type,omitempty"`
	Category     string `json:"category,omitempty"`
	Privacy      string `json:"privacy,omitempty"`
	Show         string `json:"show,omitempty"`
}

// MultiInputFileInput is an intro, outro or track as sent.
type MultiInputFileInput struct {
	Type       string        `json:"type"`
	ID         string        `json:"id"`
	Service    string        `json:"service,omitempty"`
	InputFile  string        `json:"input_file,omitempty"`
	Offset     *float64      `json:"offset,omitempty"`
	Algorithms RawAlgorithms `json:"algorithms,omitempty"`
}

// MaxRequestBytes bounds the JSON body DecodeInput accepts.
const MaxRequestBytes = 4 << 20

// DecodeInput decodes a create or update request. The body must be a JSON
// object; unknown top-level fields are ignored (real clients send extras,
// including read-only fields they read back). It returns an error wrapping
// ErrInvalid for a body that is not a JSON object, and FieldErrors (also
// wrapping ErrInvalid) naming every field whose JSON type is wrong; the
// well-typed fields are decoded either way.
func DecodeInput(data []byte) (*Input, error) {
	var top map[string]json.RawMessage
	in, errs := &Input{}, FieldErrors{}
	if err := decodeObject(data, &top); err != nil {
		return nil, err
	}
	decodeInputFields(top, in, errs)
	return in, errs.Err()
}

// decodeObject unmarshals a JSON object body into top.
func decodeObject(data []byte, top *map[string]json.RawMessage) error {
	if len(data) > MaxRequestBytes {
		return fmt.Errorf("%w: request body larger than %d bytes", ErrInvalid, MaxRequestBytes)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: request body must be a JSON object", ErrInvalid)
	}
	if err := json.Unmarshal(trimmed, top); err != nil {
		return fmt.Errorf("%w: request body is not valid JSON: %v", ErrInvalid, err)
	}
	return nil
}

// DecodeInputFields decodes the production fields of an already split
// request object into in, recording type errors in errs. Package preset
// uses it to share the decoding of the common fields.
func DecodeInputFields(top map[string]json.RawMessage, in *Input, errs FieldErrors) {
	decodeInputFields(top, in, errs)
}

// SplitObject checks and splits a request body into its top-level fields.
func SplitObject(data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := decodeObject(data, &top); err != nil {
		return nil, err
	}
	return top, nil
}

func decodeInputFields(top map[string]json.RawMessage, in *Input, errs FieldErrors) {
	field := func(name string, dst any) {
		if raw, ok := top[name]; ok {
			_ = decodeStrict(raw, dst, name, errs)
		}
	}
	field("preset", &in.Preset)
	field("metadata", &in.Metadata)
	decodeList(top, "chapters", &in.Chapters, errs)
	field("output_basename", &in.OutputBasename)
	decodeList(top, "output_files", &in.OutputFiles, errs)
	decodeList(top, "outgoing_services", &in.OutgoingServices, errs)
	if raw, ok := top["algorithms"]; ok && !isNull(raw) {
		_ = decodeStrict(raw, &in.Algorithms, "algorithms", errs)
	}
	decodeList(top, "multi_input_files", &in.MultiInputFiles, errs)
	field("speech_recognition", &in.SpeechRecognition)
	field("input_file", &in.InputFile)
	field("service", &in.Service)
	field("image", &in.Image)
	field("webhook", &in.Webhook)
	field("is_multitrack", &in.IsMultitrack)
	field("reset_data", &in.ResetData)
	field("reset_cover_image", &in.ResetCoverImage)
	field("preset_cover_image", &in.PresetCoverImage)
}

// decodeList decodes a JSON array element by element so a type error names
// its index. A null list counts as not sent; an empty array as sent.
func decodeList[T any](top map[string]json.RawMessage, name string, dst *[]T, errs FieldErrors) {
	raw, ok := top[name]
	if !ok || isNull(raw) {
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		errs.Add(name, "must be an array")
		return
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		var v T
		if decodeStrict(it, &v, indexPath(name, i), errs) == nil {
			out = append(out, v)
		}
	}
	*dst = out
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// decodeStrict unmarshals raw into dst; a type error is recorded in errs
// under path joined with the JSON path inside raw.
func decodeStrict(raw json.RawMessage, dst any, path string, errs FieldErrors) error {
	err := json.Unmarshal(raw, dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var fe FieldErrors
	switch {
	case errors.As(err, &te):
		errs.Add(joinPath(path, te.Field), typeMessage(te.Type))
	case errors.As(err, &fe):
		errs.Merge(path, fe)
	default:
		errs.Add(path, "is malformed: "+err.Error())
	}
	return err
}
