package production

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/audio"
)

// ErrProcessing means the production is being processed (change_allowed is
// false) and cannot be changed or started now (HTTP 409 is a fitting answer).
var ErrProcessing = errors.New("production: being processed, changes are not allowed")

// ApplyOptions configure New and Apply.
type ApplyOptions struct {
	// Preset applies the preset rules of ValidateOptions.
	Preset bool
	// Now is the change time; zero means the current time.
	Now Time
	// Presets are the presets the request may name (preset,
	// preset_cover_image), looked up by the caller before applying it.
	Presets Presets
}

// New creates a production from a creation request: the preset the
// request names (if any) is applied to it first (ApplyPreset), then the
// request's fields. The new production is Incomplete without an input
// and Not Started with one.
//
// Production values override preset values: metadata and algorithms
// merge key by key with the request winning; output_files and
// outgoing_services sent in the request replace the preset's lists;
// multi_input_files sent with the id of a preset entry complete that
// entry (the request's fields and algorithm keys win), others are
// appended. Metadata fields still empty may then be filled from the
// input's tags (Metadata.ImportTags).
func New(in *Input, opts ApplyOptions) (*Production, error) {
	if opts.Now.IsZero() {
		opts.Now = Now()
	}
	p := &Production{Status: StatusIncomplete, CreationTime: opts.Now}
	if err := p.apply(in, opts, true); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply merges an update request into p and validates the result. On any
// problem p is left unchanged and the error is FieldErrors or
// ErrProcessing.
//
// Semantics, as in the API spec:
//   - scalars and objects sent replace the current value; metadata and
//     algorithms merge key by key (an algorithm sent as null returns to its
//     default);
//   - output_files, chapters and multi_input_files sent are appended (use
//     ClearList for the DELETE endpoints);
//   - outgoing_services sent replace the list;
//   - webhook, service and image sent as "" or null are removed;
//   - reset_data first clears everything except the input file and its
//     service, so the fields of the same request give a fresh production;
//   - reset_cover_image removes the image and thumbnail;
//   - preset lays the preset's values over p first, then the request's
//     fields apply as in New; together with reset_data it is an error;
//   - preset_cover_image takes the cover of that preset.
//
// The presets named are taken from opts.Presets.
func (p *Production) Apply(in *Input, opts ApplyOptions) error {
	return p.apply(in, opts, false)
}

// apply is Apply, or New's part of it when creating: a new production
// takes a preset's cover before the request's fields (so an image sent
// beside preset_cover_image wins), a stored one after them.
func (p *Production) apply(in *Input, opts ApplyOptions, creating bool) error {
	if !p.CanChange() {
		return ErrProcessing
	}
	if in.Preset == "" && in.PresetCoverImage == "" {
		return p.applyFields(in, opts)
	}
	errs := FieldErrors{}
	if in.Preset != "" && in.ResetData && !creating && !opts.Preset {
		errs.Add("preset", "cannot be combined with reset_data")
		return errs
	}
	q := p.Clone()
	req := *in
	req.Preset, req.PresetCoverImage = "", ""
	// A preset's own preset field is refused by package preset.
	if in.Preset != "" && !opts.Preset {
		if pr := opts.Presets.find(in.Preset, "preset", errs); pr != nil {
			q.ApplyPreset(pr)
			req = q.mergeRequestLists(&req)
		}
	}
	if creating && len(errs) == 0 && in.PresetCoverImage != "" {
		q.coverFrom(opts.Presets, in.PresetCoverImage, errs)
	}
	if len(errs) > 0 {
		return errs
	}
	if err := q.applyFields(&req, opts); err != nil {
		return err
	}
	if !creating && in.PresetCoverImage != "" {
		if q.coverFrom(opts.Presets, in.PresetCoverImage, errs); len(errs) > 0 {
			return errs
		}
	}
	*p = *q
	return nil
}

// applyFields is Apply for a request that names no preset.
func (p *Production) applyFields(in *Input, opts ApplyOptions) error {
	errs := FieldErrors{}
	if in.Preset != "" && in.ResetData {
		errs.Add("preset", "cannot be combined with reset_data")
	}
	if opts.Preset {
		if in.Chapters != nil {
			errs.Add("chapters", "presets have no chapters")
		}
		if in.InputFile != nil {
			errs.Add("input_file", "presets have no input file")
		}
	}
	q := p.Clone()
	if in.ResetData {
		q.resetData()
	}
	if in.ResetCoverImage {
		q.Image, q.Thumbnail = nil, nil
	}
	q.setFields(in, opts, errs)
	// Validation runs even after a field failed to apply, so every bad
	// field of the request (every bad track, say) is reported at once;
	// a path keeps its first message.
	errs.Merge("", Validate(q, ValidateOptions{Preset: opts.Preset}))
	if len(errs) > 0 {
		return errs
	}
	now := opts.Now
	if now.IsZero() {
		now = Now()
	}
	q.ChangeTime = now
	q.refreshIdleStatus()
	q.refreshErrorKind()
	q.RefreshPendingWarning(q.Status)
	*p = *q
	return nil
}

// refreshIdleStatus moves an idle production between Incomplete and Not
// Started as its input comes and goes, and marks a Done production Outdated
// after a change.
func (p *Production) refreshIdleStatus() {
	switch p.Status {
	case StatusIncomplete, StatusNotStarted:
		if p.HasInput() {
			p.Status = StatusNotStarted
		} else {
			p.Status = StatusIncomplete
		}
	case StatusDone:
		p.Status = StatusOutdated
	}
}

// resetData clears everything a client can set except the input file and
// the service it comes from.
func (p *Production) resetData() {
	keep := Production{
		UUID: p.UUID, Status: p.Status, CreationTime: p.CreationTime, ChangeTime: p.ChangeTime,
		InputFile: p.InputFile, Service: p.Service,
		Length: p.Length, InputLength: p.InputLength, InputSize: p.InputSize, InputDecoder: p.InputDecoder, Channels: p.Channels, SampleRate: p.SampleRate, Bitrate: p.Bitrate,
		Format: p.Format, HasVideo: p.HasVideo, StatusPage: p.StatusPage, EditPage: p.EditPage,
		UsedCredits: p.UsedCredits,
	}
	*p = keep
}

// List names the lists that DELETE endpoints clear.
type List string

// Lists ClearList accepts.
const (
	ListOutputFiles       List = "output_files"
	ListChapters          List = "chapters"
	ListMultiInputFiles   List = "multi_input_files"
	ListSpeechRecognition List = "speech_recognition"
)

// ClearList implements DELETE production/{uuid}/{list}.json: it removes all
// entries of the list (speech_recognition: removes it).
func (p *Production) ClearList(l List) error {
	if !p.CanChange() {
		return ErrProcessing
	}
	switch l {
	case ListOutputFiles:
		p.OutputFiles = nil
	case ListChapters:
		p.Chapters = nil
	case ListMultiInputFiles:
		p.MultiInputFiles = nil
	case ListSpeechRecognition:
		p.SpeechRecognition = nil
	default:
		return FieldErrors{"": "unknown list " + string(l)}
	}
	p.ChangeTime = Now()
	p.refreshIdleStatus()
	return nil
}

// Clone returns a deep copy of p's client-settable parts (lists, maps and
// pointers are copied so changing the clone leaves p alone).
func (p *Production) Clone() *Production {
	q := *p
	q.Metadata.Tags = slices.Clone(p.Metadata.Tags)
	if p.Metadata.Location != nil {
		l := *p.Metadata.Location
		q.Metadata.Location = &l
	}
	q.Chapters = slices.Clone(p.Chapters)
	q.OutputFiles = slices.Clone(p.OutputFiles)
	for i := range q.OutputFiles {
		o := &q.OutputFiles[i]
		o.OutgoingServices = slices.Clone(o.OutgoingServices)
		o.OutgoingServiceURLs = slices.Clone(o.OutgoingServiceURLs)
		o.Parts = slices.Clone(o.Parts)
		if o.Subtitles != nil {
			s := *o.Subtitles
			o.Subtitles = &s
		}
	}
	q.OutgoingServices = slices.Clone(p.OutgoingServices)
	q.Algorithms = p.Algorithms.Clone()
	q.MultiInputFiles = slices.Clone(p.MultiInputFiles)
	for i := range q.MultiInputFiles {
		q.MultiInputFiles[i].Algorithms = q.MultiInputFiles[i].Algorithms.Clone()
	}
	if p.SpeechRecognition != nil {
		s := *p.SpeechRecognition
		s.Keywords = slices.Clone(s.Keywords)
		q.SpeechRecognition = &s
	}
	q.Cuts = slices.Clone(p.Cuts)
	return &q
}

func optionalString(o Optional[string]) *string {
	v := strings.TrimSpace(o.Value)
	if o.Null || v == "" {
		return nil
	}
	return &v
}

func (p *Production) setFields(in *Input, opts ApplyOptions, errs FieldErrors) {
	if in.Metadata != nil {
		p.Metadata.apply(in.Metadata)
	}
	base := len(p.Chapters)
	for i, c := range in.Chapters {
		start, err := ParseTimestamp(string(c.Start))
		if err != nil {
			errs.Addf(indexPath("chapters", base+i)+".start", "must be a time HH:MM:SS[.mmm] or a number of seconds, at most %d hours", MaxTimestampSeconds/3600)
			continue
		}
		p.Chapters = append(p.Chapters, Chapter{Start: start, Title: strings.TrimSpace(c.Title), URL: strings.TrimSpace(c.URL), Image: c.Image})
	}
	if in.OutputBasename != nil {
		p.OutputBasename = strings.TrimSpace(*in.OutputBasename)
	}
	if in.IsMultitrack != nil {
		p.IsMultitrack = *in.IsMultitrack
	}
	if in.SpeechRecognition.Set {
		if in.SpeechRecognition.Null {
			p.SpeechRecognition = nil
		} else {
			sr := in.SpeechRecognition.Value
			sr.Type = ""
			if p.SpeechRecognition != nil && p.SpeechRecognition.UUID == sr.UUID {
				sr.Type = p.SpeechRecognition.Type
			}
			p.SpeechRecognition = &sr
		}
	}
	for _, o := range in.OutputFiles {
		p.OutputFiles = append(p.OutputFiles, o.outputFile())
	}
	if in.SpeechRecognition.Set && p.SpeechRecognition != nil {
		p.addSpeechOutputs()
	}
	if in.OutgoingServices != nil {
		p.OutgoingServices = make([]OutgoingService, len(in.OutgoingServices))
		for i, s := range in.OutgoingServices {
			p.OutgoingServices[i] = OutgoingService{UUID: strings.TrimSpace(s.UUID), Downloadable: s.Downloadable,
				Sharing: s.Sharing, TrackType: s.TrackType, Category: s.Category, Privacy: s.Privacy, Show: s.Show}
		}
	}
	if in.Algorithms != nil {
		p.Algorithms = p.Algorithms.Merge(ParseAlgorithms(in.Algorithms, "algorithms", errs))
	}
	if in.Service.Set {
		p.Service = optionalString(in.Service)
	}
	if in.InputFile != nil {
		p.InputFile = strings.TrimSpace(*in.InputFile)
		if p.InputFile != "" && p.Service == nil && !isURL(p.InputFile) {
			errs.Add("input_file", "must be an http(s) URL unless a service is given")
		}
	}
	base = len(p.MultiInputFiles)
	for i, m := range in.MultiInputFiles {
		path := indexPath("multi_input_files", base+i)
		mf := MultiInputFile{Type: strings.TrimSpace(m.Type), ID: m.ID, Service: strings.TrimSpace(m.Service), InputFile: strings.TrimSpace(m.InputFile)}
		if m.Offset != nil {
			mf.Offset = *m.Offset
		}
		if mf.InputFile != "" && mf.Service == "" && !isURL(mf.InputFile) {
			errs.Add(path+".input_file", "must be an http(s) URL unless a service is given")
		}
		if m.Algorithms != nil {
			mf.Algorithms = ParseAlgorithms(m.Algorithms, path+".algorithms", errs).Merge(nil)
		}
		p.MultiInputFiles = append(p.MultiInputFiles, mf)
	}
	if in.Image.Set {
		p.Image = optionalString(in.Image)
		// The thumbnail is derived from the image; the server makes a new one.
		p.Thumbnail = nil
	}
	if in.Webhook.Set {
		p.Webhook = optionalString(in.Webhook)
	}
}

// addSpeechOutputs adds the outputs speech recognition produces (subtitle,
// speech, transcript) that the production does not have yet, each with
// its format's default ending.
func (p *Production) addSpeechOutputs() {
	for _, f := range outputFormats {
		if !f.NeedsSpeech || slices.ContainsFunc(p.OutputFiles, func(o OutputFile) bool { return o.Format == f.Name }) {
			continue
		}
		p.OutputFiles = append(p.OutputFiles, OutputFile{Format: f.Name})
	}
}

func (m *Metadata) apply(in *MetadataInput) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&m.Title, in.Title)
	set(&m.Artist, in.Artist)
	set(&m.Album, in.Album)
	set(&m.Subtitle, in.Subtitle)
	set(&m.Summary, in.Summary)
	set(&m.Genre, in.Genre)
	set(&m.Publisher, in.Publisher)
	set(&m.URL, in.URL)
	set(&m.License, in.License)
	set(&m.LicenseURL, in.LicenseURL)
	if in.Track != nil {
		m.Track = string(*in.Track)
	}
	if in.Year != nil {
		m.Year = string(*in.Year)
	}
	if in.AppendChapters != nil {
		m.AppendChapters = *in.AppendChapters
	}
	if in.Tags != nil {
		m.Tags = slices.Clone([]string(*in.Tags))
	}
	if in.Location != nil {
		if in.Location.Latitude == "" && in.Location.Longitude == "" {
			m.Location = nil
		} else {
			m.Location = &Location{Latitude: string(in.Location.Latitude), Longitude: string(in.Location.Longitude)}
		}
	}
}

// ImportTags fills the metadata fields that are empty from the tags of the
// input file: production and preset values always win over file tags.
func (m *Metadata) ImportTags(t audio.Tags) {
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = strings.TrimSpace(v)
		}
	}
	fill(&m.Title, t.Title)
	fill(&m.Artist, t.Artist)
	fill(&m.Album, t.Album)
	fill(&m.Subtitle, t.Subtitle)
	fill(&m.Summary, t.Summary)
	if m.Summary == "" {
		m.Summary = strings.TrimSpace(t.Comment)
	}
	fill(&m.Genre, t.Genre)
	fill(&m.Publisher, t.Publisher)
	fill(&m.URL, t.URL)
	fill(&m.License, t.License)
	// File tags often say "3/12" or "2024-05-01"; keep the leading number.
	if m.Track == "" {
		m.Track = leadingDigits(t.Track)
	}
	if m.Year == "" {
		if y := leadingDigits(t.Year); len(y) == 4 {
			m.Year = y
		}
	}
	fill(&m.LicenseURL, t.LicenseURL)
	if len(m.Tags) == 0 {
		for _, k := range SplitTags(t.Keywords) {
			if validText(k) && len(k) <= 255 {
				m.Tags = append(m.Tags, k)
			}
		}
	}
	if m.Location == nil {
		m.Location = parseISO6709(t.Location)
	}
}

// iso6709 matches an ISO 6709 point in decimal degrees ("+48.2082+016.3738/",
// with an optional altitude): two digits of latitude, three of longitude
// before the point. The forms in minutes and seconds are not imported.
var iso6709 = regexp.MustCompile(`^([+-]\d{2}(?:\.\d+)?)([+-]\d{3}(?:\.\d+)?)(?:[+-][\d.]+)?(?:CRS[^/]*)?/?$`)

// parseISO6709 returns the location of an ISO 6709 point, or nil.
func parseISO6709(s string) *Location {
	m := iso6709.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return nil
	}
	lat, err1 := strconv.ParseFloat(m[1], 64)
	lon, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil || math.Abs(lat) > 90 || math.Abs(lon) > 180 {
		return nil
	}
	return &Location{Latitude: strconv.FormatFloat(lat, 'f', -1, 64), Longitude: strconv.FormatFloat(lon, 'f', -1, 64)}
}

func leadingDigits(s string) string {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return strings.TrimLeft(s[:i], "0")
}

// outputFile converts a sent output file: format and ending are
// normalized, a lossy format without bitrate gets its default, and any
// subtitle key creates the burn-in settings (defaults for keys not sent;
// subtitles=false keeps the style but disables burn-in).
func (o OutputFileInput) outputFile() OutputFile {
	out := OutputFile{
		Format:              strings.ToLower(strings.TrimSpace(o.Format)),
		Bitrate:             int(o.Bitrate),
		Ending:              strings.ToLower(strings.TrimPrefix(strings.TrimSpace(o.Ending), ".")),
		Suffix:              o.Suffix,
		Filename:            strings.TrimSpace(o.Filename),
		SplitOnChapters:     o.SplitOnChapters,
		MonoMixdown:         o.MonoMixdown,
		OutgoingServices:    slices.Clone(o.OutgoingServices),
		OutgoingServiceURLs: slices.Clone(o.OutgoingServiceURLs),
	}
	if f, ok := LookupFormat(out.Format); ok && f.Lossy() && out.Bitrate == 0 {
		out.Bitrate = f.DefaultBitrate
	}
	if o.hasStyling() || (o.Subtitles != nil && *o.Subtitles) {
		s := DefaultSubtitles()
		if o.Subtitles != nil {
			s.Enabled = *o.Subtitles
		}
		setS := func(dst *string, v *string) {
			if v != nil {
				*dst = strings.TrimSpace(*v)
			}
		}
		setB := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		setS(&s.Font, o.SubtitleFont)
		if o.SubtitleFontSize != nil {
			s.FontSize = *o.SubtitleFontSize
		}
		setB(&s.Bold, o.SubtitleBold)
		setB(&s.Italic, o.SubtitleItalic)
		setB(&s.Underline, o.SubtitleUnderline)
		setB(&s.Uppercase, o.SubtitleUppercase)
		setS(&s.Color, o.SubtitleColor)
		setS(&s.HighlightColor, o.SubtitleHighlightColor)
		setS(&s.StyleMode, o.SubtitleStyleMode)
		setS(&s.HAlign, o.SubtitleHAlign)
		setS(&s.VAlign, o.SubtitleVAlign)
		setS(&s.WordHighlight, o.SubtitleWordHighlight)
		out.Subtitles = &s
	}
	return out
}
