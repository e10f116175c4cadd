package production

import (
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidateOptions say what kind of resource is validated.
type ValidateOptions struct {
	// Preset validates a preset's view of the production: no chapters, no
	// input file, intros and outros from external services or URLs, and
	// file names that cannot be checked without an input.
	Preset bool
}

// Validate checks a complete production (or preset view) against the
// allowed values of every field and the cross-field rules, and returns the
// problems keyed by field path (see FieldErrors). A nil result means valid.
func Validate(p *Production, opts ValidateOptions) FieldErrors {
	errs := FieldErrors{}
	if !p.Status.Valid() {
		errs.Addf("status", "%d is not a status code (0-14)", p.Status)
	}
	validateMetadata(&p.Metadata, errs)
	if opts.Preset {
		if len(p.Chapters) > 0 {
			errs.Add("chapters", "presets have no chapters")
		}
		if p.InputFile != "" {
			errs.Add("input_file", "presets have no input file")
		}
	}
	for _, l := range []struct {
		name     string
		n, limit int
	}{
		{"chapters", len(p.Chapters), MaxChapters},
		{"output_files", len(p.OutputFiles), MaxOutputFiles},
		{"multi_input_files", len(p.MultiInputFiles), MaxMultiInputFiles},
	} {
		if l.n > l.limit {
			errs.Addf(l.name, "has %d entries; at most %d are allowed", l.n, l.limit)
		}
	}
	validateChapters(p.Chapters, errs)
	if msg := nameProblem(p.OutputBasename); msg != "" {
		errs.Add("output_basename", msg)
	}
	validateOutputFiles(p, opts, errs)
	validateOutgoing(p.OutgoingServices, errs)
	validateAlgorithms(p.Algorithms, p.Scope(), "algorithms", errs)
	validateMultiInputs(p, opts, errs)
	if sr := p.SpeechRecognition; sr != nil {
		validateSpeech(sr, errs)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"webhook", p.Webhook}, {"image", p.Image}} {
		if f.v != nil {
			if msg := checkURL(*f.v); msg != "" {
				errs.Add(f.name, msg)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// checkURL says what is wrong with an http(s) URL a client gave, or "".
func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http or https URL"
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return "must not contain whitespace"
	}
	return ""
}

func isURL(s string) bool { return checkURL(s) == "" }

// validText reports whether s is UTF-8 without control characters other
// than tab and line breaks.
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}

const maxTextLen = 64 << 10

func validateMetadata(m *Metadata, errs FieldErrors) {
	for _, f := range []struct{ name, v string }{
		{"title", m.Title}, {"artist", m.Artist}, {"album", m.Album}, {"subtitle", m.Subtitle},
		{"summary", m.Summary}, {"genre", m.Genre}, {"publisher", m.Publisher}, {"url", m.URL},
		{"license", m.License}, {"license_url", m.LicenseURL},
	} {
		switch {
		case !validText(f.v):
			errs.Add("metadata."+f.name, "must be UTF-8 text without control characters")
		case len(f.v) > maxTextLen:
			errs.Addf("metadata."+f.name, "is longer than %d bytes", maxTextLen)
		}
	}
	for _, f := range []struct{ name, v string }{{"url", m.URL}, {"license_url", m.LicenseURL}} {
		if f.v != "" {
			if msg := checkURL(f.v); msg != "" {
				errs.Add("metadata."+f.name, msg)
			}
		}
	}
	if m.Track != "" && (!digits(m.Track) || len(m.Track) > 6) {
		errs.Add("metadata.track", "must be a whole number below 1000000")
	}
	if m.Year != "" {
		if y, err := strconv.Atoi(m.Year); err != nil || y < 1 || y > 9999 {
			errs.Add("metadata.year", "must be a year between 1 and 9999")
		}
	}
	for i, t := range m.Tags {
		if t == "" || !validText(t) || len(t) > 255 {
			errs.Add(indexPath("metadata.tags", i), "must be a non-empty text of at most 255 bytes")
		}
	}
	if l := m.Location; l != nil {
		checkCoord := func(name, v string, limit float64) {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.Abs(f) > limit {
				errs.Addf("metadata.location."+name, "must be a decimal number between -%g and %g", limit, limit)
			}
		}
		checkCoord("latitude", l.Latitude, 90)
		checkCoord("longitude", l.Longitude, 180)
	}
}

func validateChapters(chs []Chapter, errs FieldErrors) {
	seen := map[int64]int{}
	for i, c := range chs {
		p := indexPath("chapters", i)
		switch {
		case strings.TrimSpace(c.Title) == "":
			errs.Add(p+".title", "is required")
		case !validText(c.Title) || len(c.Title) > 1000:
			errs.Add(p+".title", "must be UTF-8 text of at most 1000 bytes without control characters")
		}
		if c.URL != "" {
			if msg := checkURL(c.URL); msg != "" {
				errs.Add(p+".url", msg)
			}
		}
		if c.Image != nil {
			if msg := checkURL(*c.Image); msg != "" {
				errs.Add(p+".image", msg)
			}
		}
		if c.Start < 0 {
			errs.Add(p+".start", "must not be negative")
		}
		ms := c.Start.Milliseconds()
		if j, dup := seen[ms]; dup {
			errs.Addf(p+".start", "same start as chapters.%d", j)
		} else {
			seen[ms] = i
		}
	}
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func validateOutputFiles(p *Production, opts ValidateOptions, errs FieldErrors) {
	hasIntroOutro := slices.ContainsFunc(p.MultiInputFiles, func(m MultiInputFile) bool {
		return m.Type == InputIntro || m.Type == InputOutro
	})
	names := map[string]int{}
	// Without an input or basename a preset's names are not final, so
	// collisions are checked on productions only.
	checkNames := !opts.Preset && (p.OutputBasename != "" || p.InputFile != "")
	for i, o := range p.OutputFiles {
		path := indexPath("output_files", i)
		f, ok := LookupFormat(o.Format)
		if !ok {
			if o.Format == "" {
				errs.Add(path+".format", "is required")
			} else {
				errs.Addf(path+".format", "unknown format %q; choose one of %s", o.Format, formatNames())
			}
			continue
		}
		switch {
		case f.MultitrackOnly && !p.IsMultitrack:
			errs.Add(path+".format", "needs a multitrack production")
		case f.NeedsSpeech && p.SpeechRecognition == nil:
			errs.Add(path+".format", "needs speech_recognition")
		case f.Type == TypeVideo && hasIntroOutro:
			errs.Add(path+".format", "video outputs do not work with intro or outro files")
		}
		// Lossless and other formats have no bitrate: 0 (absent) is
		// ignored, any other value is an error rather than silently dropped.
		switch {
		case f.Lossy() && !f.AllowsBitrate(o.Bitrate):
			errs.Addf(path+".bitrate", "%d kbps is not allowed for %s; choose one of %s", o.Bitrate, f.Name, joinInts(f.Bitrates))
		case !f.Lossy() && o.Bitrate != 0:
			errs.Addf(path+".bitrate", "%s has no bitrate; bitrates apply to lossy formats only", f.Name)
		}
		if o.Ending != "" {
			switch {
			case len(f.Endings) > 0:
				if !f.HasEnding(o.Ending) {
					errs.Addf(path+".ending", "%q is not an ending of %s; choose one of %s", o.Ending, f.Name, strings.Join(f.Endings, ", "))
				}
			case nameProblem(o.Ending) != "" || strings.ContainsAny(o.Ending, " ."):
				errs.Add(path+".ending", "must be a plain file extension")
			}
		}
		if msg := nameProblem(o.Suffix); msg != "" {
			errs.Add(path+".suffix", msg)
		}
		if o.Filename != "" {
			switch {
			case nameProblem(o.Filename) != "":
				errs.Add(path+".filename", nameProblem(o.Filename))
			case SanitizeName(o.Filename) != o.Filename:
				errs.Add(path+".filename", "contains characters not allowed in file names")
			case len(f.Endings) > 0 && FilenameEnding(o.Filename, f) == "":
				errs.Addf(path+".filename", "must end in .%s for %s", strings.Join(f.Endings, " or ."), f.Name)
			}
		}
		if f.Type == TypeDescription && (o.SplitOnChapters || o.MonoMixdown) {
			errs.Add(path+".split_on_chapters", "split_on_chapters and mono_mixdown apply to audio and video outputs only")
		}
		for j, s := range o.OutgoingServices {
			if strings.TrimSpace(s) == "" {
				errs.Add(indexPath(path+".outgoing_services", j), "must be a service uuid")
			}
		}
		if o.Subtitles != nil {
			validateSubtitles(o.Subtitles, f, p.SpeechRecognition != nil, path, errs)
		}
		if checkNames {
			name := p.OutputFilename(i)
			if j, dup := names[name]; dup {
				errs.Addf(path+".filename", "%q is also the file name of output_files.%d; set a suffix or filename", name, j)
			} else {
				names[name] = i
			}
		}
	}
}

func validateSubtitles(s *Subtitles, f OutputFormat, haveSpeech bool, path string, errs FieldErrors) {
	if f.Type != TypeVideo {
		errs.Add(path+".subtitles", "subtitle settings apply to video outputs only")
		return
	}
	if s.Enabled && !haveSpeech {
		errs.Add(path+".subtitles", "burn-in subtitles need speech_recognition")
	}
	oneOf := func(key, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			errs.Addf(path+"."+key, "%q is not allowed; choose one of %s", v, strings.Join(allowed, ", "))
		}
	}
	oneOf("subtitle_font", s.Font, SubtitleFonts)
	if s.FontSize < 8 || s.FontSize > 200 {
		errs.Add(path+".subtitle_font_size", "must be between 8 and 200")
	}
	if !colorRE.MatchString(s.Color) {
		errs.Add(path+".subtitle_color", "must be a color #rrggbb")
	}
	if !colorRE.MatchString(s.HighlightColor) {
		errs.Add(path+".subtitle_highlight_color", "must be a color #rrggbb")
	}
	oneOf("subtitle_style_mode", s.StyleMode, SubtitleStyleModes)
	oneOf("subtitle_h_align", s.HAlign, SubtitleHAligns)
	oneOf("subtitle_v_align", s.VAlign, SubtitleVAligns)
	oneOf("subtitle_word_highlight", s.WordHighlight, SubtitleWordHighlights)
	switch s.WordHighlight {
	case "border", "glow", "reveal":
		if s.StyleMode == "color_bg" || s.StyleMode == "white_bg" {
			errs.Addf(path+".subtitle_word_highlight", "%s cannot be combined with subtitle_style_mode %s (the default); choose plain, color_outline or white_outline", s.WordHighlight, s.StyleMode)
		}
	}
}

func validateOutgoing(svcs []OutgoingService, errs FieldErrors) {
	seen := map[string]int{}
	for i, s := range svcs {
		p := indexPath("outgoing_services", i)
		if strings.TrimSpace(s.UUID) == "" {
			errs.Add(p+".uuid", "is required")
		} else if j, dup := seen[s.UUID]; dup {
			errs.Addf(p+".uuid", "same service as outgoing_services.%d", j)
		} else {
			seen[s.UUID] = i
		}
		for _, f := range []struct{ name, v string }{{"sharing", s.Sharing}, {"privacy", s.Privacy}} {
			if f.v != "" && f.v != "public" && f.v != "private" {
				errs.Add(p+"."+f.name, "must be public or private")
			}
		}
	}
}

// reservedUploadFields are upload form fields a multi input id must not
// shadow, because the id is the form field name of its file.
var reservedUploadFields = []string{"image", "input_file", "intro_file", "outro_file"}

func validateMultiInputs(p *Production, opts ValidateOptions, errs FieldErrors) {
	ids := map[string]int{}
	for i, m := range p.MultiInputFiles {
		path := indexPath("multi_input_files", i)
		switch m.Type {
		case InputMultitrack:
			if !p.IsMultitrack {
				errs.Add(path+".type", "multitrack inputs need is_multitrack true")
			}
			if m.ID == "" {
				errs.Add(path+".id", "is required for multitrack inputs")
			}
		case InputIntro, InputOutro:
			if opts.Preset && m.Service == "" && !isURL(m.InputFile) {
				errs.Add(path+".input_file", "preset intros and outros must come from an external service or an http(s) URL")
			}
		case "":
			errs.Add(path+".type", "is required (multitrack, intro or outro)")
		default:
			errs.Addf(path+".type", "%q is not allowed; choose one of multitrack, intro, outro", m.Type)
		}
		if m.ID != "" {
			switch {
			case nameProblem(m.ID) != "" || strings.TrimSpace(m.ID) != m.ID:
				errs.Add(path+".id", "must be a plain name without separators or surrounding spaces")
			case slices.Contains(reservedUploadFields, m.ID):
				errs.Addf(path+".id", "%q is reserved as an upload field name", m.ID)
			}
			if j, dup := ids[m.ID]; dup {
				errs.Addf(path+".id", "same id as multi_input_files.%d", j)
			} else {
				ids[m.ID] = i
			}
		}
		if !(m.Offset >= 0 && m.Offset <= MaxOffset) {
			errs.Addf(path+".offset", "must be a number of seconds from 0 to %d", MaxOffset)
		}
		if len(m.Algorithms) > 0 {
			if m.Type != InputMultitrack {
				errs.Add(path+".algorithms", "only multitrack inputs have algorithms")
			} else {
				validateAlgorithms(m.Algorithms, ScopeTrack, path+".algorithms", errs)
			}
		}
	}
}

var languageRE = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$`)

func validateSpeech(sr *SpeechRecognition, errs FieldErrors) {
	if strings.TrimSpace(sr.UUID) == "" {
		errs.Add("speech_recognition.uuid", "is required")
	}
	if sr.Language != "" && !languageRE.MatchString(sr.Language) {
		errs.Add("speech_recognition.language", "must be a language code like en or en-US")
	}
	for i, k := range sr.Keywords {
		if strings.TrimSpace(k) == "" || !validText(k) || len(k) > 200 {
			errs.Add(indexPath("speech_recognition.keywords", i), "must be a non-empty text of at most 200 bytes")
		}
	}
}

func formatNames() string {
	n := make([]string, len(outputFormats))
	for i, f := range outputFormats {
		n[i] = f.Name
	}
	return strings.Join(n, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
