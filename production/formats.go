package production

import (
	"slices"
	"strconv"
	"strings"
)

// FormatType classifies an output format in the format info.
type FormatType string

// Format types of the API.
const (
	TypeLossy       FormatType = "lossy"
	TypeLossless    FormatType = "lossless"
	TypeVideo       FormatType = "video"
	TypeDescription FormatType = "description"
)

// OutputFormat is one row of the output format table: what the format info
// endpoint shows and what validation and file naming use.
type OutputFormat struct {
	Name        string
	Type        FormatType
	DisplayName string
	// Bitrates are the allowed bitrates in kbps, ascending; empty for
	// formats without a bitrate choice.
	Bitrates       []int
	DefaultBitrate int
	// Endings are the allowed file extensions without the dot; the first is
	// the default. Empty means the ending follows the input (video, input)
	// or the format has a fixed name the engine chooses.
	Endings []string
	// MultitrackOnly formats need a multitrack production (tracks).
	MultitrackOnly bool
	// NeedsSpeech formats need speech recognition.
	NeedsSpeech bool
	// MIME is the media type a browser's audio element plays the format
	// as; empty for formats it does not play.
	MIME string
}

// Lossy reports whether the format has a bitrate.
func (f OutputFormat) Lossy() bool { return f.Type == TypeLossy }

// DefaultEnding is the ending used when an output file does not name one.
func (f OutputFormat) DefaultEnding() string {
	if len(f.Endings) == 0 {
		return ""
	}
	return f.Endings[0]
}

// HasEnding reports whether e (without a dot, any case) is allowed.
func (f OutputFormat) HasEnding(e string) bool {
	return slices.Contains(f.Endings, strings.ToLower(e))
}

// AllowsBitrate reports whether kbps may be requested for this format.
func (f OutputFormat) AllowsBitrate(kbps int) bool { return slices.Contains(f.Bitrates, kbps) }

var (
	mp3Bitrates    = []int{32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	aacBitrates    = []int{24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	vorbisBitrates = []int{48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
	opusBitrates   = []int{6, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256}
)

// outputFormats is the single table of output formats. Endings for video
// are the containers ffmpeg can remux an input video into; image and
// waveform are the encoded picture types.
var outputFormats = []OutputFormat{
	{Name: "mp3", Type: TypeLossy, DisplayName: "MP3", Bitrates: mp3Bitrates, DefaultBitrate: 96, Endings: []string{"mp3"}, MIME: "audio/mpeg"},
	{Name: "mp3-vbr", Type: TypeLossy, DisplayName: "MP3 Variable Bitrate", Bitrates: mp3Bitrates, DefaultBitrate: 96, Endings: []string{"mp3"}, MIME: "audio/mpeg"},
	{Name: "vorbis", Type: TypeLossy, DisplayName: "Ogg Vorbis", Bitrates: vorbisBitrates, DefaultBitrate: 80, Endings: []string{"ogg", "oga"}, MIME: "audio/ogg"},
	{Name: "opus", Type: TypeLossy, DisplayName: "Opus", Bitrates: opusBitrates, DefaultBitrate: 48, Endings: []string{"opus"}, MIME: "audio/ogg"},
	{Name: "aac", Type: TypeLossy, DisplayName: "AAC (M4A, MP4, M4B)", Bitrates: aacBitrates, DefaultBitrate: 64, Endings: []string{"m4a", "mp4", "m4b"}, MIME: "audio/mp4"},
	{Name: "flac", Type: TypeLossless, DisplayName: "FLAC", Endings: []string{"flac"}, MIME: "audio/flac"},
	{Name: "alac", Type: TypeLossless, DisplayName: "ALAC (M4A, MP4)", Endings: []string{"m4a", "mp4"}},
	{Name: "wav", Type: TypeLossless, DisplayName: "WAV 16-bit PCM", Endings: []string{"wav"}, MIME: "audio/wav"},
	{Name: "wav-24bit", Type: TypeLossless, DisplayName: "WAV 24-bit PCM", Endings: []string{"wav"}, MIME: "audio/wav"},
	{Name: "video", Type: TypeVideo, DisplayName: "Video Output (same format as input)", Endings: []string{"mp4", "m4v", "mov", "mkv", "webm"}},
	{Name: "audiogram", Type: TypeVideo, DisplayName: "Audiogram (Waveform Video)", Endings: []string{"mp4"}},
	{Name: "input", Type: TypeLossless, DisplayName: "Unprocessed Input File"},
	{Name: "descr", Type: TypeDescription, DisplayName: "Production Description", Endings: []string{"json", "xml", "yaml"}},
	{Name: "stats", Type: TypeDescription, DisplayName: "Processing Statistics", Endings: []string{"txt", "json", "yaml"}},
	{Name: "chaps", Type: TypeDescription, DisplayName: "Chapter Marks Text File", Endings: []string{"chapters.txt"}},
	{Name: "psc", Type: TypeDescription, DisplayName: "Podlove Simple Chapters", Endings: []string{"psc", "xml"}},
	{Name: "image", Type: TypeDescription, DisplayName: "Cover Image", Endings: []string{"jpg", "jpeg", "png"}},
	{Name: "waveform", Type: TypeDescription, DisplayName: "Waveform Image", Endings: []string{"png"}},
	{Name: "cutlist", Type: TypeDescription, DisplayName: "Cut List (Audacity labels, JSON edit list)", Endings: []string{"txt", "json"}},
	{Name: "tracks", Type: TypeLossless, DisplayName: "Individual Processed Tracks (zipped)", Endings: []string{"flac.zip", "wav.zip"}, MultitrackOnly: true},
	{Name: "speech", Type: TypeDescription, DisplayName: "Speech Recognition Data", Endings: []string{"json", "xml"}, NeedsSpeech: true},
	{Name: "subtitle", Type: TypeDescription, DisplayName: "Subtitles", Endings: []string{"srt", "webvtt"}, NeedsSpeech: true},
	{Name: "transcript", Type: TypeDescription, DisplayName: "Transcript", Endings: []string{"html", "txt"}, NeedsSpeech: true},
}

// OutputFormats returns the output format table in display order.
func OutputFormats() []OutputFormat { return slices.Clone(outputFormats) }

// LookupFormat returns the format called name.
func LookupFormat(name string) (OutputFormat, bool) {
	for _, f := range outputFormats {
		if f.Name == name {
			return f, true
		}
	}
	return OutputFormat{}, false
}

// FormatInfo is one value of GET info/output_files.
type FormatInfo struct {
	Type           FormatType `json:"type"`
	DisplayName    string     `json:"display_name"`
	Bitrates       []string   `json:"bitrates,omitempty"`
	BitrateStrings []string   `json:"bitrate_strings"`
	DefaultBitrate string     `json:"default_bitrate,omitempty"`
	Endings        []string   `json:"endings"`
}

// OutputFormatInfo returns the data of GET info/output_files, keyed by format
// name. bitrates and default_bitrate appear for lossy formats only;
// bitrate_strings is an empty array for the others.
func OutputFormatInfo() map[string]FormatInfo {
	m := make(map[string]FormatInfo, len(outputFormats))
	for _, f := range outputFormats {
		fi := FormatInfo{
			Type:           f.Type,
			DisplayName:    f.DisplayName,
			BitrateStrings: []string{},
			Endings:        slices.Clone(f.Endings),
		}
		if fi.Endings == nil {
			fi.Endings = []string{}
		}
		if f.Lossy() {
			for _, b := range f.Bitrates {
				fi.Bitrates = append(fi.Bitrates, strconv.Itoa(b))
				fi.BitrateStrings = append(fi.BitrateStrings, strconv.Itoa(b)+" kbps")
			}
			fi.DefaultBitrate = strconv.Itoa(f.DefaultBitrate)
		}
		m[f.Name] = fi
	}
	return m
}
