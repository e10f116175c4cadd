package audio

import "time"

// Info is what a probe learns about an encoded stream. The JSON names are
// the ones the HTTP API uses for a production's input.
type Info struct {
	// Format is the API's name of the input format: wav, flac, mp3, aac,
	// vorbis, opus, alac, ... (the codec, not the container).
	Format string `json:"format"`
	// Container is the file type the stream came in: wav, flac, mp3, mp4,
	// ogg, matroska, ...
	Container  string `json:"container,omitempty"`
	Channels   int    `json:"channels"`
	SampleRate int    `json:"samplerate"`
	// Bitrate is the average bitrate in kbps.
	Bitrate float64 `json:"bitrate"`
	// Length is the duration in seconds.
	Length float64 `json:"length"`
	// Frames is the exact length in frames when the container states it,
	// or -1 when only an estimate (Length) is known.
	Frames int64 `json:"-"`
	// BitDepth is the stored sample precision of lossless PCM codecs, 0 when
	// not meaningful (lossy codecs).
	BitDepth int  `json:"bit_depth,omitempty"`
	HasVideo bool `json:"has_video"`
	Tags     Tags `json:"tags"`
}

// Duration returns Length as a time.Duration.
func (i Info) Duration() time.Duration {
	return time.Duration(i.Length * float64(time.Second))
}

// StreamFormat returns the Format a decoder of this stream produces.
func (i Info) StreamFormat() Format { return Format{SampleRate: i.SampleRate, Channels: i.Channels} }

// Tags are the descriptive metadata embedded in a file. Empty strings are
// absent tags.
type Tags struct {
	Title     string `json:"title,omitempty"`
	Artist    string `json:"artist,omitempty"`
	Album     string `json:"album,omitempty"`
	Subtitle  string `json:"subtitle,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Genre     string `json:"genre,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	URL       string `json:"url,omitempty"`
	License   string `json:"license,omitempty"`
	// LicenseURL is where the license is stated in full.
	LicenseURL string `json:"license_url,omitempty"`
	Track      string `json:"track,omitempty"`
	Year       string `json:"year,omitempty"`
	Comment    string `json:"comment,omitempty"`
	// Keywords is a comma-separated list ("news, science"): a production's
	// tags.
	Keywords string `json:"keywords,omitempty"`
	// Location is where the recording was made, as an ISO 6709 point
	// ("+48.2082+016.3738/"; see ISO6709).
	Location string   `json:"location,omitempty"`
	Cover    *Picture `json:"cover,omitempty"`
}

// IsZero reports whether no tag is set.
func (t Tags) IsZero() bool { return t == Tags{} }

// Picture is an embedded image such as cover art.
type Picture struct {
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"-"`
	// Size is len(Data), kept for JSON output where the bytes are omitted.
	Size int `json:"size"`
}

// Chapter is a chapter mark for encoders that embed chapters.
type Chapter struct {
	Start time.Duration
	Title string
	URL   string
	Image *Picture
}

// EncodeOptions configure an encoder. Zero values mean the format's defaults.
type EncodeOptions struct {
	// Bitrate in kbps for lossy formats; 0 selects the format's default.
	Bitrate int
	// BitDepth for PCM and FLAC output: 16 (default), 24, or 32 (WAV float).
	BitDepth int
	Tags     Tags
	Chapters []Chapter
	// Length, when known, lets encoders that must state the total duration
	// up front (chapter end times) do so.
	Length time.Duration
	// Monitor, when not nil, is given the encoded audio decoded again, as
	// a player will hear it, in the encoder's input format, while the
	// encoder works: so that what a lossy codec does to the level and the
	// true peak is known when the file is, without decoding it afterwards.
	// Encoders that can (the ffmpeg adapter's lossy ones) write all of it
	// from a goroutine of their own before Close returns, and Close fails
	// if they could not; others leave Monitor unused.
	Monitor Sink
	// TempDir is where an encoder that needs temporary files (ffmpeg's
	// cover and chapter files, an output it must seek in before it can
	// be streamed) makes them; "" means the system's (os.TempDir).
	TempDir string
	// TempLimit, when positive, bounds in bytes the temporary files the
	// encoder's program writes, together (its output before Close copies
	// it into the writer, and the copy with tags and chapters made beside
	// it): an encoder whose files reach it fails with ErrTempLimit, and
	// Close removes them.
	TempLimit int64
}
