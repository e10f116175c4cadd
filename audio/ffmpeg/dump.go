package ffmpeg

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/audiopost/audiopost/audio"
)

// A decode's ffmpeg runs at -v level+info: every line it prints starts
// with its level ("[mp3float @ 0x55...] [error] Header missing"). The
// lines of level error and worse are what -v error printed, and go to the
// run's diagnostics as before; of the info lines, the description of the
// input that ffmpeg prints before it decodes (av_dump_format: container,
// duration, tags, streams) is the decoder's Info, parsed by parseDump.
// Warnings and the rest are dropped.

// levelWriter sorts ffmpeg's stderr by level: errs keeps the errors,
// dump the info lines up to "Stream mapping:" (or the description of the
// output, which follows it), which ends the input's description; dumped
// is closed there.
type levelWriter struct {
	errs   *stderrBuffer
	dumped chan struct{}

	mu      sync.Mutex
	partial []byte
	lines   []dumpLine
	inErr   bool // the last tagged line was an error: untagged lines continue it
	inInfo  bool
	done    bool
	dropped bool // a line past lineLimit was cut
}

// dumpLine is one info line; cont marks a line without a level tag,
// which continues the one before (a tag's value with a line break).
type dumpLine struct {
	text string
	cont bool
}

// lineLimit bounds one line of stderr, dumpLineLimit the description.
const (
	lineLimit     = 64 << 10
	dumpLineLimit = 10000
)

func newLevelWriter() *levelWriter {
	return &levelWriter{errs: new(stderrBuffer), dumped: make(chan struct{})}
}

// levelTag matches a line's optional component prefix and its level.
var levelTag = regexp.MustCompile(`^((?:\[[^\]]*\] )*?)\[(quiet|panic|fatal|error|warning|info|verbose|debug|trace)\] ?(.*)$`)

func (w *levelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := lineLimit - len(w.partial)
			w.partial = append(w.partial, p[:min(len(p), max(room, 0))]...)
			break
		}
		line := append(w.partial, p[:i]...)
		if len(line) > lineLimit {
			line = line[:lineLimit]
		}
		w.line(string(bytes.TrimRight(line, "\r")))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line files one complete line.
func (w *levelWriter) line(l string) {
	m := levelTag.FindStringSubmatch(l)
	if m == nil {
		// Untagged: the rest of the line before.
		switch {
		case w.inErr:
			w.errs.Write([]byte(l + "\n"))
		case w.inInfo && !w.done:
			w.add(dumpLine{text: l, cont: true})
		}
		return
	}
	level := m[2]
	w.inErr = level == "error" || level == "fatal" || level == "panic"
	w.inInfo = level == "info" && m[1] == ""
	switch {
	case w.inErr:
		w.errs.Write([]byte(m[1] + m[3] + "\n"))
	case w.inInfo && !w.done:
		if m[3] == "Stream mapping:" || strings.HasPrefix(m[3], "Output #") {
			w.done = true
			close(w.dumped)
			return
		}
		w.add(dumpLine{text: m[3]})
	}
}

func (w *levelWriter) add(l dumpLine) {
	if len(w.lines) < dumpLineLimit {
		w.lines = append(w.lines, l)
	}
}

// dump returns the info lines received so far.
func (w *levelWriter) dump() []dumpLine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]dumpLine(nil), w.lines...)
}

// errNoDump is parseDump's error when ffmpeg printed no description of
// an input: it could not open it.
var errNoDump = errors.New("ffmpeg described no input")

// parseDump reads the Details of the input (its first audio stream)
// from ffmpeg's description of it:
//
//	Input #0, ogg, from 'file:/x.opus':
//	  Metadata:
//	    title           : Hello
//	  Duration: 00:00:03.02, start: 0.000000, bitrate: 52 kb/s
//	  Stream #0:0: Audio: opus, 48000 Hz, stereo, fltp
//	    Metadata:
//	      ENCODER         : Lavc59.37.100 libopus
//
// What ffprobe states more exactly, this states rounded: the duration
// to 10 ms, bitrates to whole kbps; Frames is -1 (exact lengths come from
// ffprobe, see Decode), a cover's Size 0, and there are no chapters.
func parseDump(lines []dumpLine) (Details, error) {
	d := Details{CoverStream: -1}
	d.Frames = -1
	var (
		demuxer     string
		formatTags  = map[string]string{}
		audioTags   map[string]string
		tags        map[string]string // where Metadata lines go now
		lastKey     string
		seen        bool
		inAudio     bool
		codec       string
		streamKbps  float64
		overallKbps float64
		coverCodec  string
	)
	for _, l := range lines {
		if l.cont {
			// "                    : second line" of the value before.
			if _, v, ok := strings.Cut(l.text, ": "); ok && tags != nil && lastKey != "" {
				tags[lastKey] += "\n" + v
			}
			continue
		}
		text := l.text
		trimmed := strings.TrimSpace(text)
		indent := len(text) - len(strings.TrimLeft(text, " "))
		switch {
		case strings.HasPrefix(text, "Input #"):
			if seen {
				break // only input #0 is decoded
			}
			seen = true
			demuxer = strings.TrimPrefix(text, "Input #0, ")
			if i := strings.LastIndex(demuxer, ", from '"); i >= 0 {
				demuxer = demuxer[:i]
			}
			tags, inAudio = nil, false
		case !seen:
		case trimmed == "Metadata:":
			switch {
			case indent <= 2:
				tags = formatTags
			case inAudio:
				audioTags = map[string]string{}
				tags = audioTags
			default:
				tags = map[string]string{} // a chapter's or another stream's
			}
			lastKey = ""
		case strings.HasPrefix(trimmed, "Duration:"):
			tags, inAudio = nil, false
			parts := strings.Split(strings.TrimPrefix(trimmed, "Duration:"), ",")
			d.Length = clockSeconds(strings.TrimSpace(parts[0]))
			for _, part := range parts[1:] {
				if v, ok := strings.CutPrefix(strings.TrimSpace(part), "bitrate:"); ok {
					overallKbps = kbps(v)
				}
			}
		case strings.HasPrefix(trimmed, "Stream #"):
			tags, inAudio = nil, false
			kind, rest := streamKind(trimmed)
			switch kind {
			case "Audio":
				if codec != "" {
					continue
				}
				inAudio = true
				codec = codecOf(rest)
				streamKbps = parseAudioStream(&d, rest)
			case "Video":
				vc := codecOf(rest)
				if strings.Contains(rest, "(attached pic)") || strings.Contains(rest, "(timed thumbnails)") {
					if d.CoverStream < 0 {
						d.CoverStream, coverCodec = streamIndex(trimmed), vc
					}
					continue
				}
				if !d.HasVideo {
					d.VideoCodec = vc
				}
				d.HasVideo = true
			}
		case strings.HasPrefix(trimmed, "Chapter") || indent <= 2:
			tags, inAudio = nil, false
		case tags != nil:
			k, v, ok := strings.Cut(trimmed, ":")
			if !ok {
				continue
			}
			lastKey = strings.TrimSpace(k)
			// The value as printed, after the one space of "key : ".
			_, v, _ = strings.Cut(text, ":")
			tags[lastKey] = strings.TrimPrefix(v, " ")
		}
	}
	if !seen {
		return d, errNoDump
	}
	if codec == "" {
		return d, fmt.Errorf("%w: no audio stream in %q content", audio.ErrUnsupported, demuxer)
	}
	d.Container = containerName(demuxer, formatTags)
	d.Format = formatName(codec, d.Container)
	if !isLossless(codec) {
		d.BitDepth = 0
	}
	d.Bitrate = streamKbps
	if d.Bitrate <= 0 && !d.HasVideo {
		d.Bitrate = overallKbps
	}
	d.Tags = mapTags(formatTags, audioTags)
	if d.CoverStream >= 0 {
		d.Tags.Cover = &audio.Picture{MIMEType: imageMIME(coverCodec)}
	}
	return d, nil
}

// streamKind splits "Stream #0:1[0x2](eng): Audio: aac (LC), ..." into
// "Audio" and what follows it.
func streamKind(line string) (kind, rest string) {
	for _, k := range []string{"Audio", "Video", "Subtitle", "Data", "Attachment"} {
		if _, after, ok := strings.Cut(line, ": "+k+": "); ok {
			return k, after
		}
	}
	return "", ""
}

// codecOf is the codec's name at the start of a stream's description.
func codecOf(rest string) string {
	end := strings.IndexAny(rest, " ,")
	if end < 0 {
		return rest
	}
	return rest[:end]
}

// streamIndex is N of "Stream #0:N...", -1 if unreadable.
func streamIndex(line string) int {
	s := strings.TrimPrefix(line, "Stream #0:")
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(s)
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return -1
	}
	return n
}

// parseAudioStream reads the sample rate, bit depth and bitrate (kbps,
// returned) of "aac (LC) (mp4a / 0x6134706D), 48000 Hz, stereo, fltp,
// 96 kb/s (default)": the parts between ", " after the codec's own.
func parseAudioStream(d *Details, rest string) float64 {
	parts := strings.Split(rest, ", ")
	var rateAt = -1
	var kb float64
	for i, p := range parts {
		switch {
		case strings.HasSuffix(p, " Hz") && rateAt < 0:
			d.SampleRate = atoi(strings.TrimSuffix(p, " Hz"))
			rateAt = i
		case strings.Contains(p, " kb/s"):
			kb = kbps(p)
		}
	}
	if rateAt >= 0 && rateAt+2 < len(parts) {
		// The sample format after the channel layout: "s32p (24 bit)".
		fmtName, bits, _ := strings.Cut(parts[rateAt+2], " (")
		if n, ok := strings.CutSuffix(bits, " bit)"); ok {
			d.BitDepth = atoi(n)
		} else {
			d.BitDepth = sampleFormatBits[strings.TrimSuffix(fmtName, "p")]
		}
	}
	return kb
}

// sampleFormatBits are the bits of ffmpeg's sample formats (planar ones
// without their p).
var sampleFormatBits = map[string]int{"u8": 8, "s16": 16, "s32": 32, "s64": 64, "flt": 32, "dbl": 64}

// kbps reads "147 kb/s" (and " 147 kb/s (default)"); 0 for "N/A".
func kbps(s string) float64 {
	n, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return atof(n)
}

// clockSeconds reads ffmpeg's "01:02:03.45"; 0 for "N/A" or anything
// else.
func clockSeconds(s string) float64 {
	h, rest, ok1 := strings.Cut(s, ":")
	m, sec, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return 0
	}
	hv, err1 := strconv.Atoi(h)
	mv, err2 := strconv.Atoi(m)
	sv, err3 := strconv.ParseFloat(sec, 64)
	if err1 != nil || err2 != nil || err3 != nil || hv < 0 || mv < 0 || sv < 0 {
		return 0
	}
	return float64(hv)*3600 + float64(mv)*60 + sv
}
