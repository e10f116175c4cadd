package production

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Production is one processing job as the server keeps and returns it.
// Fields computed from others (status_string, start_allowed,
// change_allowed, length_timestring, chapter positions, size_string) are
// filled in by MarshalJSON, so they can never be stale.
type Production struct {
	UUID              string             `json:"uuid"`
	Status            Status             `json:"status"`
	StatusString      string             `json:"status_string"`
	Metadata          Metadata           `json:"metadata"`
	Chapters          []Chapter          `json:"chapters"`
	OutputBasename    string             `json:"output_basename"`
	OutputFiles       []OutputFile       `json:"output_files"`
	OutgoingServices  []OutgoingService  `json:"outgoing_services"`
	Algorithms        AlgorithmValues    `json:"algorithms"`
	MultiInputFiles   []MultiInputFile   `json:"multi_input_files"`
	SpeechRecognition *SpeechRecognition `json:"speech_recognition"`
	InputFile         string             `json:"input_file"`
	Service           *string            `json:"service"`
	Image             *string            `json:"image"`
	Thumbnail         *string            `json:"thumbnail"`
	WaveformImage     string             `json:"waveform_image"`
	// LoudnessImage is a chart of the input's and the output's loudness
	// over time (not in the original interface; empty until processed).
	LoudnessImage string  `json:"loudness_image,omitempty"`
	Webhook       *string `json:"webhook"`
	IsMultitrack  bool    `json:"is_multitrack"`
	CreationTime  Time    `json:"creation_time"`
	ChangeTime    Time    `json:"change_time"`
	// Length is the output length in seconds, intros and outros included.
	Length           float64 `json:"length"`
	LengthTimestring string  `json:"length_timestring"`
	Channels         int     `json:"channels"`
	SampleRate       int     `json:"samplerate"`
	Bitrate          float64 `json:"bitrate"`
	Format           string  `json:"format"`
	HasVideo         bool    `json:"has_video"`
	CutStart         float64 `json:"cut_start"`
	CutEnd           float64 `json:"cut_end"`
	// Cuts are the ranges of the main input the cutters removed, in input
	// seconds; the engine sets them and chapter output positions follow.
	Cuts           []Cut       `json:"cuts,omitempty"`
	StartAllowed   bool        `json:"start_allowed"`
	ChangeAllowed  bool        `json:"change_allowed"`
	StatusPage     string      `json:"status_page"`
	EditPage       string      `json:"edit_page"`
	ErrorMessage   string      `json:"error_message"`
	ErrorStatus    *Status     `json:"error_status"`
	WarningMessage string      `json:"warning_message"`
	WarningStatus  *Status     `json:"warning_status"`
	UsedCredits    UsedCredits `json:"used_credits"`
	Statistics     Statistics  `json:"statistics"`
	// ErrorKind classifies the error of a production in Error, which
	// decides what can fix it (see RestartBlocked; not in the original
	// interface).
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
	// FailedInputs identifies the input files an input error was about
	// (stored, never in responses).
	FailedInputs string `json:"failed_inputs,omitempty"`
	// InputLength is the probed length of the main input in seconds, which
	// chapters and the work budget are measured against (stored, never in
	// responses: length is the output's once processed).
	InputLength float64 `json:"input_length,omitempty"`
	// InputSize is the main input file's size in bytes, 0 when not known
	// (stored before sizes were kept), learned where the input is probed:
	// it bounds the video stream a "video" output copies from it (see
	// Work.OutputDisk; stored, never in responses).
	InputSize int64 `json:"input_size,omitempty"`
	// InputDecoder is the codec that decodes the main input, as package
	// audio registers it ("ffmpeg", or a pure-Go one: "wav", "flac",
	// "mp3"), learned where the input is probed; "" when not known
	// (stored before it was kept). The work plan counts what ffmpeg
	// decodes by it, whatever the format's name: PCM in Matroska or MOV
	// and a WAV in A-law are format "wav" (stored, never in responses).
	InputDecoder string `json:"input_decoder,omitempty"`
	// Progress is the percentage of processing done (not in the original
	// interface): see ShownProgress. It comes from the resource row
	// (storage.Resource.Progress), as the status does, not the document.
	Progress int `json:"progress"`
	// WebhookDeliveries are the calls of the production's webhook, newest
	// first, as the API lists them from its outbox (not stored in the
	// document; not in the original interface).
	WebhookDeliveries []WebhookDelivery `json:"webhook_deliveries,omitzero"`
}

// WebhookDelivery is one webhook call of a production: the status it
// reports and how sending it went.
type WebhookDelivery struct {
	// Status is the production status the call reports.
	Status Status `json:"status"`
	// State is pending (to be sent, or sent again after a failed
	// attempt), delivered or failed (given up).
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Created  Time   `json:"created"`
	// LastAttempt is when the last attempt ended (nil before the first).
	LastAttempt *Time `json:"last_attempt"`
	// NextAttempt is when a pending delivery is sent (again).
	NextAttempt *Time `json:"next_attempt"`
	// HTTPStatus is the receiver's last answer (0: none, as after a
	// network error or a refused address).
	HTTPStatus int `json:"http_status"`
	// Error says why the last attempt failed ("" after success).
	Error string `json:"error"`
}

// ShownProgress is the progress percentage of a production in status s
// whose runner last stored the estimate stored: 100 when Done, the
// estimate (at most 99, as 100 means Done) while a worker processes it,
// 0 otherwise.
func ShownProgress(s Status, stored int) int {
	switch {
	case s == StatusDone:
		return 100
	case s.Processing():
		return min(max(stored, 0), 99)
	}
	return 0
}

// Cut is a removed range of the main input, in seconds.
type Cut struct {
	Start float64 `json:"start"`
	Stop  float64 `json:"stop"`
}

// UsedCredits are the processing hours a production consumed.
type UsedCredits struct {
	Onetime   float64 `json:"onetime"`
	Recurring float64 `json:"recurring"`
	Combined  float64 `json:"combined"`
}

// Scope is the scope of p's own algorithms: the multitrack master's for a
// multitrack production, a single track's otherwise (its tracks' are
// ScopeTrack).
func (p *Production) Scope() Scope {
	if p.IsMultitrack {
		return ScopeMaster
	}
	return ScopeSingletrack
}

// Settings are p's own algorithms in their scope (Scope), defaults
// filled in.
func (p *Production) Settings() AlgorithmView { return p.Algorithms.In(p.Scope()) }

// Normalizes reports whether p's output is brought to its loudness
// target: normloudness, and always for a multitrack production's mix.
func (p *Production) Normalizes() bool {
	return p.IsMultitrack || p.Algorithms.In(ScopeSingletrack).Bool("normloudness")
}

// HasInput reports whether the production has the audio it needs to be
// started: its input file, or for multitrack at least one track with one.
func (p *Production) HasInput() bool {
	if !p.IsMultitrack {
		return p.InputFile != ""
	}
	for _, m := range p.MultiInputFiles {
		if m.Type == InputMultitrack && m.InputFile != "" {
			return true
		}
	}
	return false
}

// CanStart is start_allowed: the input is present and no worker owns the
// production.
func (p *Production) CanStart() bool { return p.HasInput() && !p.Status.Processing() }

// CanChange is change_allowed.
func (p *Production) CanChange() bool { return p.Status.ChangeAllowed() }

// SetError records a failure at status at (Error, error_status, message).
// The error is not classified: ErrorKind is cleared (see Fail).
func (p *Production) SetError(at Status, msg string) {
	p.ErrorStatus = &at
	p.ErrorMessage = msg
	p.Status = StatusError
	p.ErrorKind, p.FailedInputs = "", ""
}

// SetWarning records a warning raised at status at; processing goes on.
func (p *Production) SetWarning(at Status, msg string) {
	p.WarningStatus = &at
	p.WarningMessage = msg
}

// IntroLength is how far intros push the main input back: the sum of their
// lengths minus their overlaps (offsets), never negative. Unknown lengths
// (not yet probed) count as 0.
func (p *Production) IntroLength() float64 {
	var t float64
	for _, m := range p.MultiInputFiles {
		if m.Type == InputIntro {
			t += math.Max(0, m.InputLength-m.Offset)
		}
	}
	return t
}

// MarshalJSON fills the computed fields and writes lists as arrays, never
// null.
func (p Production) MarshalJSON() ([]byte, error) {
	type plain Production
	q := plain(p)
	q.StatusString = p.Status.String()
	q.Progress = ShownProgress(p.Status, p.Progress)
	q.FailedInputs, q.InputLength, q.InputSize, q.InputDecoder = "", 0, 0, ""
	if p.Status != StatusError {
		q.ErrorKind = ""
	}
	q.StartAllowed = p.CanStart()
	q.ChangeAllowed = p.CanChange()
	q.LengthTimestring = FormatTimestamp(seconds(p.Length))
	q.Metadata = p.Metadata.normalized()
	q.Chapters = p.ChapterPositions()
	q.OutputFiles = p.ListedOutputFiles()
	q.OutgoingServices = nonNil(p.OutgoingServices)
	q.MultiInputFiles = nonNil(p.MultiInputFiles)
	if slices.ContainsFunc(q.MultiInputFiles, func(m MultiInputFile) bool { return m.InputDecoder != "" }) {
		q.MultiInputFiles = slices.Clone(q.MultiInputFiles)
		for i := range q.MultiInputFiles {
			q.MultiInputFiles[i].InputDecoder = ""
		}
	}
	if q.Algorithms == nil {
		q.Algorithms = AlgorithmValues{}
	}
	return json.Marshal(q)
}

// ChapterPositions returns the chapters sorted by start with their output
// positions computed from the intro length, cut_start and the cuts.
func (p *Production) ChapterPositions() []Chapter {
	cs := slices.Clone(p.Chapters)
	slices.SortStableFunc(cs, func(a, b Chapter) int { return int(a.Start - b.Start) })
	intro := seconds(p.IntroLength())
	cutStart := seconds(p.CutStart)
	cuts := make([]Cut, len(p.Cuts))
	copy(cuts, p.Cuts)
	for i := range cs {
		cs[i].OutputStart = OutputPosition(cs[i].Start, intro, cutStart, cuts)
	}
	if cs == nil {
		cs = []Chapter{}
	}
	return cs
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func seconds(s float64) time.Duration {
	if math.IsNaN(s) || s <= 0 {
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// Metadata is the descriptive metadata of a production or preset. Track and
// year are strings in responses though clients may send integers.
type Metadata struct {
	Title          string    `json:"title"`
	Artist         string    `json:"artist"`
	Album          string    `json:"album"`
	Subtitle       string    `json:"subtitle"`
	Summary        string    `json:"summary"`
	Genre          string    `json:"genre"`
	Publisher      string    `json:"publisher"`
	URL            string    `json:"url"`
	License        string    `json:"license"`
	LicenseURL     string    `json:"license_url"`
	Track          string    `json:"track"`
	Year           string    `json:"year"`
	AppendChapters bool      `json:"append_chapters"`
	Tags           []string  `json:"tags"`
	Location       *Location `json:"location"`
}

// Location is a geographic position; the API keeps the coordinates as
// decimal strings.
type Location struct {
	Latitude  string `json:"latitude"`
	Longitude string `json:"longitude"`
}

func (m Metadata) normalized() Metadata {
	m.Tags = nonNil(m.Tags)
	return m
}

// SplitTags splits the simple API's comma-separated tag string, trimming
// spaces and dropping empty and duplicate tags.
func SplitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// JoinTags is the inverse of SplitTags.
func JoinTags(tags []string) string { return strings.Join(tags, ", ") }

// OutputFile is one requested output. Filename holds the name the client
// chose, if any; responses carry the resolved name (see
// Production.OutputFilename). Size, DownloadURL and Checksum are set after
// encoding; an output split on chapters has no file of its own, its files
// are its Parts.
type OutputFile struct {
	Format           string   `json:"format"`
	Bitrate          int      `json:"bitrate"`
	Ending           string   `json:"ending"`
	Suffix           string   `json:"suffix"`
	Filename         string   `json:"filename"`
	SplitOnChapters  bool     `json:"split_on_chapters"`
	MonoMixdown      bool     `json:"mono_mixdown"`
	OutgoingServices []string `json:"outgoing_services"`
	// OutgoingServiceURLs appear on preset output files only.
	OutgoingServiceURLs []string `json:"outgoing_service_urls,omitempty"`
	Size                *int64   `json:"size"`
	SizeString          string   `json:"size_string"`
	DownloadURL         string   `json:"download_url"`
	Checksum            string   `json:"checksum"`
	// Parts are the files of an output split on chapters, in chapter
	// order, as the engine wrote them. They are stored with the output;
	// responses list each part as an output file of its own instead (see
	// ListedOutputFiles), so the field never appears in them.
	Parts []OutputPart `json:"parts,omitempty"`
	// Subtitles is set on video outputs with burn-in subtitles; its keys
	// appear flat in the output file object.
	*Subtitles
}

// OutputPart is one file of an output split on chapters.
type OutputPart struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	Checksum string `json:"checksum"`
}

// ListedOutputFiles returns the output files as responses list them, each
// with its resolved file name in Filename. An output split on chapters
// whose parts were written is listed as its parts: one entry per part, in
// chapter order, each a copy of the output (format, bitrate,
// split_on_chapters, ...) with the part's filename, size and checksum.
// So every entry with a size is one file, with its own download URL and
// checksum. The list is longer than OutputFiles then; the stored output
// files are not changed.
func (p *Production) ListedOutputFiles() []OutputFile {
	out := make([]OutputFile, 0, len(p.OutputFiles))
	for i, o := range p.OutputFiles {
		if len(o.Parts) == 0 {
			o.Filename = p.OutputFilename(i)
			out = append(out, o)
			continue
		}
		for _, part := range o.Parts {
			e := o
			e.Parts = nil
			size := part.Size
			e.Filename, e.Size, e.Checksum, e.DownloadURL = part.Filename, &size, part.Checksum, ""
			out = append(out, e)
		}
	}
	return out
}

// MarshalJSON writes size_string from size and lists as arrays.
func (o OutputFile) MarshalJSON() ([]byte, error) {
	type plain OutputFile
	q := plain(o)
	q.OutgoingServices = nonNil(o.OutgoingServices)
	if o.Size != nil {
		q.SizeString = FormatSize(*o.Size)
	}
	return json.Marshal(q)
}

// FormatSize formats a byte count for humans in decimal units ("12.3 MB").
func FormatSize(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 999.95 || u == "TB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}

// Subtitles are the burn-in subtitle settings of a video output, with
// defaults applied. Enabled is false when the client sent subtitles=false
// together with styling keys.
type Subtitles struct {
	Enabled        bool   `json:"subtitles"`
	Font           string `json:"subtitle_font"`
	FontSize       int    `json:"subtitle_font_size"`
	Bold           bool   `json:"subtitle_bold"`
	Italic         bool   `json:"subtitle_italic"`
	Underline      bool   `json:"subtitle_underline"`
	Uppercase      bool   `json:"subtitle_uppercase"`
	Color          string `json:"subtitle_color"`
	HighlightColor string `json:"subtitle_highlight_color"`
	StyleMode      string `json:"subtitle_style_mode"`
	HAlign         string `json:"subtitle_h_align"`
	VAlign         string `json:"subtitle_v_align"`
	WordHighlight  string `json:"subtitle_word_highlight"`
}

// Allowed subtitle values.
var (
	SubtitleFonts          = []string{"default", "mono", "serif", "bebas", "anton", "bangers", "montserrat", "poppins", "inter", "oswald", "archivo", "lobster", "sigmar", "titan", "caveat", "fjalla", "bungee", "space", "playfair", "alfa", "monoton", "quicksand"}
	SubtitleStyleModes     = []string{"plain", "color_outline", "white_outline", "color_bg", "white_bg"}
	SubtitleHAligns        = []string{"left", "center", "right"}
	SubtitleVAligns        = []string{"top", "middle", "bottom"}
	SubtitleWordHighlights = []string{"none", "karaoke", "reveal", "highlight", "highlight_bold", "border", "glow"}
)

// DefaultSubtitles returns the default burn-in style.
func DefaultSubtitles() Subtitles {
	return Subtitles{Enabled: true, Font: "default", FontSize: 22, Color: "#000000", HighlightColor: "#dc2626",
		StyleMode: "color_bg", HAlign: "center", VAlign: "bottom", WordHighlight: "highlight"}
}

// OutgoingService references an external service an output goes to. UUID
// and the type-specific parameters are what clients send; the rest is the
// server's report.
type OutgoingService struct {
	UUID string `json:"uuid"`
	// Type-specific parameters (audio hosting A/B, video hosting).
	Downloadable *bool  `json:"downloadable,omitempty"`
	Sharing      string `json:"sharing,omitempty"`
	TrackType    string `json:"track_type,omitempty"`
	Category     string `json:"category,omitempty"`
	Privacy      string `json:"privacy,omitempty"`
	Show         string `json:"show,omitempty"`
	// Response fields.
	DisplayName     string   `json:"display_name"`
	Type            string   `json:"type"`
	TransferSuccess *bool    `json:"transfer_success"`
	ErrorMessage    string   `json:"error_message"`
	Incoming        bool     `json:"incoming"`
	Outgoing        bool     `json:"outgoing"`
	ResultPage      *string  `json:"result_page"`
	ResultURLs      []string `json:"result_urls"`
}

// MarshalJSON writes result_urls as an array.
func (s OutgoingService) MarshalJSON() ([]byte, error) {
	type plain OutgoingService
	q := plain(s)
	q.ResultURLs = nonNil(s.ResultURLs)
	return json.Marshal(q)
}

// Multi input file types.
const (
	InputMultitrack = "multitrack"
	InputIntro      = "intro"
	InputOutro      = "outro"
)

// MultiInputFile is an intro, outro or multitrack track.
type MultiInputFile struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	Service    string          `json:"service,omitempty"`
	InputFile  string          `json:"input_file"`
	Offset     float64         `json:"offset"`
	Algorithms AlgorithmValues `json:"algorithms,omitempty"`
	// Response only, from probing the file.
	InputChannels   int     `json:"input_channels"`
	InputSampleRate int     `json:"input_samplerate"`
	InputBitrate    float64 `json:"input_bitrate"`
	InputFiletype   string  `json:"input_filetype"`
	InputLength     float64 `json:"input_length"`
	// InputDecoder is the codec that decodes the file, as
	// Production.InputDecoder (stored, never in responses).
	InputDecoder string `json:"input_decoder,omitempty"`
}

// SpeechRecognition selects a registered speech recognition service.
type SpeechRecognition struct {
	UUID     string   `json:"uuid"`
	Keywords []string `json:"keywords"`
	Language string   `json:"language"`
	// Type is the service type (response only).
	Type string `json:"type"`
}

// MarshalJSON writes keywords as an array.
func (s SpeechRecognition) MarshalJSON() ([]byte, error) {
	type plain SpeechRecognition
	q := plain(s)
	q.Keywords = nonNil(s.Keywords)
	return json.Marshal(q)
}
