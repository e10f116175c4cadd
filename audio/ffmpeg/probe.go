package ffmpeg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
)

// Details is everything a probe learns: the Info the registry returns plus
// the chapters and where the cover picture lives.
type Details struct {
	audio.Info
	// Chapters are the chapter marks of the input, in order.
	Chapters []audio.Chapter
	// CoverStream is the ffmpeg stream index of the embedded cover picture,
	// or -1 when there is none. Info.Tags.Cover describes it without its
	// bytes; ExtractCover reads them.
	CoverStream int
	// VideoCodec is the codec of the first real video stream, "" without.
	VideoCodec string
}

// Probe describes the stream in r with ffprobe. It reads r by path when r is
// a regular *os.File at offset 0, else through ffprobe's stdin; an
// io.ReadSeeker is rewound afterwards.
func Probe(ctx context.Context, r io.Reader) (audio.Info, error) {
	d, err := ProbeDetails(ctx, r)
	return d.Info, err
}

// ProbeDetails is Probe with chapters and the cover's location. Under
// WithProbes, a file is probed once.
func ProbeDetails(ctx context.Context, r io.Reader) (Details, error) {
	memo := memoOf(ctx)
	if memo != nil {
		if path, fi, ok := memoFile(r); ok {
			if det, ok := memo.lookup(path, fi); ok {
				return det, nil
			}
			det, err := probeDetails(ctx, r)
			if err == nil {
				memo.store(path, fi, det)
			}
			return det, err
		}
	}
	return probeDetails(ctx, r)
}

func probeDetails(ctx context.Context, r io.Reader) (Details, error) {
	in := newInput(r)
	out, err := runProbe(ctx, in)
	if in.rewind != nil {
		if rerr := in.rewind(); rerr != nil && err == nil {
			err = fmt.Errorf("ffmpeg: rewinding input after probe: %w", rerr)
		}
	}
	if err != nil {
		return Details{CoverStream: -1}, err
	}
	return ParseProbe(out)
}

// probeOutputLimit bounds ffprobe's JSON: a crafted file with thousands of
// streams or chapters must not balloon memory.
const probeOutputLimit = 16 << 20

var errProbeOutputTooLarge = fmt.Errorf("%w: ffprobe description larger than %d bytes", audio.ErrMalformed, probeOutputLimit)

// limitedBuffer is a bytes.Buffer that refuses to grow past probeOutputLimit.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > probeOutputLimit {
		return 0, errProbeOutputTooLarge
	}
	return b.Buffer.Write(p)
}

func runProbe(ctx context.Context, in input) ([]byte, error) {
	tool, err := lookTool("ffprobe", "probing a format without a pure-Go codec")
	if err != nil {
		return nil, err
	}
	// One packet is read (read_intervals %+#1): avformat queues attached
	// pictures first, so its size is the cover's size at no extra cost.
	cmd := procpool.Command(ctx, tool, "-v", "error", "-hide_banner",
		"-protocol_whitelist", "file,pipe",
		"-print_format", "json", "-show_format", "-show_streams", "-show_chapters",
		"-show_packets", "-read_intervals", "%+#1",
		"-i", in.arg)
	var stdout limitedBuffer
	var stderr stderrBuffer
	cmd.Stdin = in.stdin
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		// ErrWaitDelay alone means ffprobe succeeded but the caller's reader
		// was still blocked in Read when it exited: the probe is complete.
		if errors.Is(err, errProbeOutputTooLarge) || errors.Is(err, procpool.ErrClosed) {
			return nil, err
		}
		if ctx.Err() == nil && strings.Contains(stderr.String(), "Invalid data found") {
			procpool.Logger(ctx).Info("external program failed", "program", "ffprobe", "while", "probing an input", "err", err,
				"stderr", stderr.String())
			return nil, &sentence{audio.ErrUnknownFormat, notValid("")}
		}
		return nil, exitError(ctx, run{tool: "ffprobe", what: "probing an input", input: true}, err, &stderr)
	}
	return stdout.Bytes(), nil
}

// probeJSON is the part of ffprobe's JSON output that Info needs. Numbers
// that ffprobe prints as strings stay strings and are parsed leniently.
type probeJSON struct {
	Streams []struct {
		Index            int               `json:"index"`
		CodecName        string            `json:"codec_name"`
		CodecType        string            `json:"codec_type"`
		SampleRate       string            `json:"sample_rate"`
		Channels         int               `json:"channels"`
		TimeBase         string            `json:"time_base"`
		StartPTS         *int64            `json:"start_pts"`
		DurationTS       *int64            `json:"duration_ts"`
		Duration         string            `json:"duration"`
		BitRate          string            `json:"bit_rate"`
		BitsPerSample    int               `json:"bits_per_sample"`
		BitsPerRawSample string            `json:"bits_per_raw_sample"`
		Disposition      map[string]int    `json:"disposition"`
		Tags             map[string]string `json:"tags"`
	} `json:"streams"`
	Chapters []struct {
		ID        *int64            `json:"id"`
		StartTime string            `json:"start_time"`
		Tags      map[string]string `json:"tags"`
	} `json:"chapters"`
	Format struct {
		FormatName string            `json:"format_name"`
		Duration   string            `json:"duration"`
		Size       string            `json:"size"`
		BitRate    string            `json:"bit_rate"`
		Tags       map[string]string `json:"tags"`
	} `json:"format"`
	Packets []struct {
		StreamIndex int    `json:"stream_index"`
		Size        string `json:"size"`
	} `json:"packets"`
}

// ParseProbe maps the JSON printed by
//
//	ffprobe -print_format json -show_format -show_streams -show_chapters [-show_packets]
//
// to Details, using the API's format names. The first audio stream is the
// one described. It never panics, whatever the input.
func ParseProbe(data []byte) (Details, error) {
	d := Details{CoverStream: -1}
	d.Frames = -1
	var p probeJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return d, fmt.Errorf("%w: unreadable ffprobe output: %v", audio.ErrMalformed, err)
	}
	audioIdx := -1
	var coverCodec string
	var videoBitrate bool
	for i, s := range p.Streams {
		switch s.CodecType {
		case "audio":
			if audioIdx < 0 {
				audioIdx = i
			}
		case "video":
			if s.Disposition["attached_pic"] != 0 || s.Disposition["timed_thumbnails"] != 0 {
				if d.CoverStream < 0 {
					d.CoverStream = s.Index
					coverCodec = s.CodecName
				}
				continue
			}
			if !d.HasVideo {
				d.VideoCodec = s.CodecName
			}
			d.HasVideo = true
			videoBitrate = true
		}
	}
	if audioIdx < 0 {
		return d, fmt.Errorf("%w: no audio stream in %q content", audio.ErrUnsupported, p.Format.FormatName)
	}
	a := p.Streams[audioIdx]
	if a.CodecName == "" {
		return d, fmt.Errorf("%w: audio stream without a codec name", audio.ErrMalformed)
	}
	d.Container = containerName(p.Format.FormatName, p.Format.Tags)
	d.Format = formatName(a.CodecName, d.Container)
	d.Channels = a.Channels
	d.SampleRate = atoi(a.SampleRate)
	if d.Channels <= 0 || d.SampleRate <= 0 {
		return d, fmt.Errorf("%w: audio stream %q states %d channels at %d Hz", audio.ErrMalformed, a.CodecName, a.Channels, d.SampleRate)
	}
	if isLossless(a.CodecName) {
		d.BitDepth = atoi(a.BitsPerRawSample)
		if d.BitDepth <= 0 {
			d.BitDepth = a.BitsPerSample
		}
		if d.BitDepth < 0 || d.BitDepth > 64 {
			d.BitDepth = 0
		}
	}

	d.Length = atof(a.Duration)
	if d.Length <= 0 {
		d.Length = atof(p.Format.Duration)
	}
	if exactLength(a.CodecName, d.Container) && a.DurationTS != nil && *a.DurationTS > 0 &&
		(a.StartPTS == nil || *a.StartPTS == 0) && a.TimeBase == "1/"+strconv.Itoa(d.SampleRate) {
		d.Frames = *a.DurationTS
		d.Length = float64(d.Frames) / float64(d.SampleRate)
	}
	if d.Length < 0 || math.IsNaN(d.Length) || math.IsInf(d.Length, 0) {
		d.Length = 0
	}

	var coverSize int
	for _, pk := range p.Packets {
		if pk.StreamIndex == d.CoverStream {
			coverSize = atoi(pk.Size)
			break
		}
	}
	d.Bitrate = atof(a.BitRate) / 1000
	if d.Bitrate <= 0 && !videoBitrate && d.Length > 0 {
		// Ogg and some raw streams state no stream bitrate; the file's size
		// over its duration is the audio bitrate once the cover is removed.
		if size := atof(p.Format.Size); size > 0 {
			coverBytes := float64(coverSize)
			if d.Container == "ogg" && coverSize > 0 {
				// Ogg stores the picture base64-encoded in a comment, inside
				// a FLAC picture block of 32 bytes plus the MIME type.
				coverBytes = math.Ceil(float64(coverSize+32+len(imageMIME(coverCodec)))/3) * 4
			}
			d.Bitrate = (size - coverBytes) * 8 / d.Length / 1000
		} else {
			d.Bitrate = atof(p.Format.BitRate) / 1000
		}
	}
	if d.Bitrate < 0 || math.IsNaN(d.Bitrate) || math.IsInf(d.Bitrate, 0) {
		d.Bitrate = 0
	}
	d.Bitrate = math.Round(d.Bitrate*1000) / 1000

	d.Tags = mapTags(p.Format.Tags, a.Tags)
	if d.CoverStream >= 0 {
		d.Tags.Cover = &audio.Picture{MIMEType: imageMIME(coverCodec), Size: coverSize}
	}
	streamTags := lowerKeys(a.Tags)
	for _, c := range p.Chapters {
		start := atof(c.StartTime)
		if start < 0 || math.IsNaN(start) || start > 1e9 {
			continue
		}
		tags := lowerKeys(c.Tags)
		url := tags["url"]
		if url == "" && c.ID != nil && *c.ID >= 0 && *c.ID < 1000 {
			// Vorbis comment chapters keep their URL in CHAPTERnnnURL, which
			// ffmpeg leaves among the stream's tags.
			url = streamTags[fmt.Sprintf("chapter%03durl", *c.ID)]
		}
		d.Chapters = append(d.Chapters, audio.Chapter{
			Start: time.Duration(math.Round(start * float64(time.Second))),
			Title: tags["title"],
			URL:   url,
		})
	}
	return d, nil
}

func atoi(s string) int {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return v
}

func atof(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// containerName maps ffprobe's demuxer names to short container names.
func containerName(formatName string, tags map[string]string) string {
	switch formatName {
	case "mov,mp4,m4a,3gp,3g2,mj2":
		if strings.TrimSpace(lowerKeys(tags)["major_brand"]) == "qt" {
			return "mov"
		}
		return "mp4"
	case "matroska,webm":
		return "matroska"
	case "aac":
		return "adts"
	}
	name, _, _ := strings.Cut(formatName, ",")
	return name
}

// formatName maps ffmpeg's codec names to the API's input format names.
func formatName(codec, container string) string {
	switch {
	case strings.HasPrefix(codec, "pcm_"):
		if container == "aiff" {
			return "aiff"
		}
		return "wav"
	case strings.HasPrefix(codec, "wmav"), codec == "wmapro", codec == "wmalossless":
		return "wma"
	case strings.HasPrefix(codec, "amr_"):
		return "amr"
	}
	switch codec {
	case "mp3", "mp3float":
		return "mp3"
	case "aac", "aac_latm", "aac_fixed":
		return "aac"
	}
	return codec
}

func isLossless(codec string) bool {
	return strings.HasPrefix(codec, "pcm_") || codec == "flac" || codec == "alac" || codec == "wavpack" || codec == "tta" || codec == "ape"
}

// exactLength reports whether the stream's stated duration equals what
// ffmpeg decodes, sample for sample (checked by the tests). The rest are
// estimates: AAC in MP4 keeps its encoder delay, MP3 relies on an optional
// LAME header, Opus counts its pre-skip in the duration, and ffmpeg's
// Vorbis decoder can end up to a block short of the final granule.
func exactLength(codec, container string) bool {
	switch {
	case strings.HasPrefix(codec, "pcm_") && (container == "wav" || container == "aiff"):
		return true
	case codec == "flac" && container == "flac":
		return true
	case codec == "alac" && container == "mp4":
		return true
	}
	return false
}

func imageMIME(codec string) string {
	switch codec {
	case "mjpeg", "jpeg", "jpegls":
		return "image/jpeg"
	case "png", "apng":
		return "image/png"
	case "gif":
		return "image/gif"
	case "bmp":
		return "image/bmp"
	case "webp":
		return "image/webp"
	case "tiff":
		return "image/tiff"
	}
	return "application/octet-stream"
}

func lowerKeys(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// tagSources lists, for each API tag, the container keys it is read from in
// order of preference. ID3, MP4 atoms and Vorbis comments arrive under
// ffmpeg's generic names.
var tagSources = []struct {
	keys []string
	set  func(*audio.Tags, string)
}{
	{[]string{"title"}, func(t *audio.Tags, v string) { t.Title = v }},
	{[]string{"artist", "album_artist", "author", "performer"}, func(t *audio.Tags, v string) { t.Artist = v }},
	{[]string{"album"}, func(t *audio.Tags, v string) { t.Album = v }},
	{[]string{"subtitle", "tit3"}, func(t *audio.Tags, v string) { t.Subtitle = v }},
	{[]string{"summary", "description", "synopsis"}, func(t *audio.Tags, v string) { t.Summary = v }},
	{[]string{"genre"}, func(t *audio.Tags, v string) { t.Genre = v }},
	{[]string{"publisher", "label", "organization"}, func(t *audio.Tags, v string) { t.Publisher = v }},
	{[]string{"url", "purl", "website", "woaf", "woar"}, func(t *audio.Tags, v string) { t.URL = v }},
	{[]string{"license", "copyright"}, func(t *audio.Tags, v string) { t.License = v }},
	{[]string{"track", "tracknumber"}, func(t *audio.Tags, v string) { t.Track = trackNumber(v) }},
	{[]string{"date", "year", "tdrc", "tyer", "creation_time"}, func(t *audio.Tags, v string) { t.Year = year(v) }},
	{[]string{"comment"}, func(t *audio.Tags, v string) { t.Comment = v }},
	{[]string{"license_url", "licenseurl"}, func(t *audio.Tags, v string) { t.LicenseURL = v }},
	{[]string{"keywords"}, func(t *audio.Tags, v string) { t.Keywords = v }},
	{[]string{"location", "location-eng"}, func(t *audio.Tags, v string) { t.Location = v }},
}

// mapTags reads the API's tags from the container's tags, falling back to
// the audio stream's (Ogg stores its comments on the stream).
func mapTags(format, stream map[string]string) audio.Tags {
	var t audio.Tags
	fm, sm := lowerKeys(format), lowerKeys(stream)
	for _, src := range tagSources {
		for _, m := range []map[string]string{fm, sm} {
			v := ""
			for _, k := range src.keys {
				if v = strings.TrimSpace(m[k]); v != "" {
					break
				}
			}
			if v != "" {
				src.set(&t, v)
				break
			}
		}
	}
	return t
}

// trackNumber keeps the number of "3/12".
func trackNumber(v string) string {
	n, _, _ := strings.Cut(v, "/")
	return strings.TrimSpace(n)
}

// year takes the year of a date such as "2024-05-01T10:00:00Z"; values that
// do not start with four digits are kept as they are.
func year(v string) string {
	if len(v) >= 4 {
		if _, err := strconv.Atoi(v[:4]); err == nil && (len(v) == 4 || v[4] < '0' || v[4] > '9') {
			return v[:4]
		}
	}
	return v
}
