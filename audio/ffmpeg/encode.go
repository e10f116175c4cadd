package ffmpeg

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // cover dimensions for METADATA_BLOCK_PICTURE
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/audio/mp4tag"
	"github.com/audiopost/audiopost/audio/procpool"
)

// outputFormat describes how one API output format is made.
type outputFormat struct {
	codec       []string // encoder arguments after -c:a
	muxer       string
	ext         string // extension of temporary files
	defaultKbps int    // 0 for lossless
	maxChannels int
	// seekable formats (MP4) must be written to a file: the muxer goes
	// back to write the index (and moves it to the front for streaming).
	seekable bool
	// tags is how the container keeps tags (see tagPairs).
	tags tagStyle
	// vbr maps the kbps of EncodeOptions.Bitrate to a LAME quality.
	vbr bool
	// monitor is the muxer of the raw stream that EncodeOptions.Monitor
	// decodes ("" for formats that are not monitored: lossless ones).
	monitor string
}

// tagStyle is how a container keeps tags, chapters and the cover.
type tagStyle uint8

const (
	// styleID3: ffmpeg's ID3v2.3 text frames, APIC and CHAP; package id3
	// adds the URL frames and the chapters' URLs and pictures.
	styleID3 tagStyle = iota
	// styleMP4: ffmpeg's iTunes atoms, covr and a chapter track; package
	// mp4tag adds the atoms ffmpeg leaves out and freeform items.
	styleMP4
	// styleVorbis: Vorbis comments (audio.VorbisComments), the cover as
	// METADATA_BLOCK_PICTURE and the chapters as CHAPTERnnn comments.
	styleVorbis
	// styleMatroska: any key is a tag.
	styleMatroska
)

// outputFormats are the encoders this package registers, by API name.
var outputFormats = map[string]outputFormat{
	"mp3":     {codec: []string{"libmp3lame"}, muxer: "mp3", ext: ".mp3", defaultKbps: 96, maxChannels: 2, tags: styleID3, monitor: "mp3"},
	"mp3-vbr": {codec: []string{"libmp3lame"}, muxer: "mp3", ext: ".mp3", defaultKbps: 96, maxChannels: 2, vbr: true, tags: styleID3, monitor: "mp3"},
	"aac":     {codec: []string{"aac"}, muxer: "ipod", ext: ".m4a", defaultKbps: 64, maxChannels: 8, seekable: true, tags: styleMP4, monitor: "adts"},
	"alac":    {codec: []string{"alac"}, muxer: "ipod", ext: ".m4a", maxChannels: 8, seekable: true, tags: styleMP4},
	"opus":    {codec: []string{"libopus"}, muxer: "ogg", ext: ".opus", defaultKbps: 48, maxChannels: 8, tags: styleVorbis, monitor: "ogg"},
	"vorbis":  {codec: []string{"libvorbis"}, muxer: "ogg", ext: ".ogg", defaultKbps: 80, maxChannels: 8, tags: styleVorbis, monitor: "ogg"},
}

// lameVBR are LAME's -V presets with their typical average bitrate (kbps,
// stereo 44.1 kHz); mp3-vbr picks the preset nearest the requested bitrate.
var lameVBR = []struct{ q, kbps int }{
	{0, 245}, {1, 225}, {2, 190}, {3, 175}, {4, 165}, {5, 130}, {6, 115}, {7, 100}, {8, 85}, {9, 65},
}

// VBRQuality returns the LAME -q:a quality (0 best .. 9 smallest) whose
// typical average bitrate is nearest to kbps.
func VBRQuality(kbps int) int {
	best := lameVBR[0]
	for _, p := range lameVBR[1:] {
		if abs(p.kbps-kbps) < abs(best.kbps-kbps) {
			best = p
		}
	}
	return best.q
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Encoder feeds PCM to an ffmpeg encoder process. It implements
// audio.Encoder; Write allocates nothing. Nothing is complete before Close
// returns nil.
//
// Where the output goes: Ogg, and MP3 to a writer that is not a regular
// file, stream from ffmpeg's stdout into the writer. Everything else (MP4,
// which must seek back to write its index; MP3 to a file, so that the Xing
// header with the exact length is filled in; outputs whose chapter ends
// wait for the total length) is written by ffmpeg to a temporary file -
// beside the writer's file when the writer is an *os.File, else in the
// system temp directory - and copied into the writer by Close. ffmpeg never
// opens the caller's file itself, because the caller holds it open.
type Encoder struct {
	ctx    context.Context
	name   string
	of     outputFormat
	video  string // -i argument of the original video, for NewVideoEncoder
	format audio.Format
	opts   audio.EncodeOptions
	w      io.Writer
	tool   string

	cmd   *procpool.Cmd
	stdin *os.File
	// unreserve gives back the slots of the encoder and its monitor (see
	// start); nil without a monitor.
	unreserve func()
	stderr    *stderrBuffer
	done      chan struct{}
	waitErr   error

	scratch []byte
	frames  int64
	// temps are removed by Close; out is ffmpeg's output file when the
	// output does not stream to w.
	temps []string
	out   string
	// tempWritten is what the finished temporary outputs take, within
	// opts.TempLimit (see templimit.go).
	tempWritten int64
	// scene is the picture of a video rendered from the audio (nil: none).
	scene *Scene
	// metaLater applies tags, cover and chapters in a copy pass at Close,
	// when the chapter ends need the length that only Close knows.
	metaLater bool
	// id3Extras are the frames ffmpeg's mp3 muxer cannot write (URLs,
	// the chapters' URLs and pictures); Close adds them to its ID3 tag
	// (nil: none).
	id3Extras *id3.Extras
	// monDone is closed when the monitor goroutine has written the whole
	// decoded stream to opts.Monitor (nil without a monitor); monErr says
	// why it stopped early.
	monDone  chan struct{}
	monErr   error
	err      error
	closed   bool
	closeErr error
}

// NewEncoder starts ffmpeg encoding the named output format (mp3, mp3-vbr,
// aac, alac, opus or vorbis) from PCM of format f into w. opts.Bitrate 0
// selects the format's default (mp3-vbr maps it to the nearest LAME -V
// preset, see VBRQuality). opts.Tags, opts.Tags.Cover and opts.Chapters are
// embedded as the container allows (see tagPairs for where each tag goes):
// ID3v2.3 frames, APIC and CHAP in MP3, each CHAP with its chapter's URL
// (WXXX) and picture (APIC); iTunes atoms, freeform items, covr and
// chapter tracks in MP4; Vorbis comments with METADATA_BLOCK_PICTURE and
// CHAPTERnnn (with CHAPTERnnnURL) in Ogg. MP4 has no chapter URLs or
// pictures, Ogg no chapter pictures.
//
// With opts.Monitor, a lossy encoder's packets also go (through ffmpeg's
// tee muxer) to a second ffmpeg that decodes them at the input's rate and
// channels for the monitor, concurrently with the encoding, so that the
// decoded file is measured at no cost in time on a machine with a core to
// spare. Chapters are then added in a copy pass at Close. The two programs
// take their slots of the process pool (package procpool) together.
func NewEncoder(ctx context.Context, name string, w io.Writer, f audio.Format, opts audio.EncodeOptions) (*Encoder, error) {
	of, ok := outputFormats[name]
	if !ok {
		return nil, fmt.Errorf("%w: ffmpeg adapter has no encoder %q", audio.ErrUnsupported, name)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.Channels > of.maxChannels {
		return nil, fmt.Errorf("%w: %s takes at most %d channels, not %d", audio.ErrUnsupported, name, of.maxChannels, f.Channels)
	}
	if opts.Bitrate < 0 || opts.Bitrate > 1024 {
		return nil, fmt.Errorf("%w: %s bitrate %d kbps", audio.ErrUnsupported, name, opts.Bitrate)
	}
	tool, err := lookTool("ffmpeg", "encoding "+name)
	if err != nil {
		return nil, err
	}
	e := &Encoder{ctx: ctx, name: name, of: of, format: f, opts: opts, w: w, tool: tool, stderr: new(stderrBuffer), done: make(chan struct{})}
	if err := e.start(); err != nil {
		e.removeTemps()
		return nil, err
	}
	return e, nil
}

// Programs is how many programs NewEncoder runs at once for the output
// format name: the encoder, and with EncodeOptions.Monitor the decoder of
// the encoded stream for the formats that are monitored (the lossy ones);
// 0 for a format this package does not encode. Closing the encoder may run
// one more (adding chapters), after both have exited.
func Programs(name string, monitor bool) int {
	of, ok := outputFormats[name]
	switch {
	case !ok:
		return 0
	case monitor && of.monitor != "":
		return 2
	}
	return 1
}

func (e *Encoder) start() (err error) {
	defer func() {
		if err != nil {
			e.release()
		}
	}()
	fileW, isFile := e.w.(*os.File)
	if isFile {
		if fi, err := fileW.Stat(); err != nil || !fi.Mode().IsRegular() {
			isFile = false
		}
	}
	hasMeta := !e.opts.Tags.IsZero() || len(e.opts.Chapters) > 0
	monitor := e.opts.Monitor != nil && e.of.monitor != "" && e.video == "" && e.scene == nil
	// ffmpeg's tee muxer, which hands the monitor the encoded packets,
	// passes tags and streams on to its outputs but not chapters: with a
	// monitor they are added in the copy pass at Close.
	e.metaLater = len(e.opts.Chapters) > 0 && (e.opts.Length <= 0 || monitor) && e.of.tags != styleVorbis
	e.id3Extras = e.extrasID3()
	toTemp := e.of.seekable || isFile || e.metaLater || e.id3Extras != nil

	args := append(baseArgs(),
		"-f", "f64le", "-ar", strconv.Itoa(e.format.SampleRate), "-ac", strconv.Itoa(e.format.Channels), "-i", "pipe:0")
	next := 1
	var maps []string
	switch {
	case e.video != "":
		// The original's video streams (V: not its cover pictures) are
		// copied untouched, and its metadata unless tags replace it.
		args = append(args, "-i", e.video)
		maps = append(maps, "-map", "1:V", "-c:v", "copy")
		next = 2
	case e.scene != nil:
		in, m, err := e.sceneArgs()
		if err != nil {
			return err
		}
		args = append(args, in...)
		maps = append(maps, m...)
		next = 2
	}
	maps = append(maps, "-map", "0:a")
	if hasMeta && !e.metaLater {
		in, m, err := e.metadataInputs(e.opts.Length, next)
		if err != nil {
			return err
		}
		args = append(args, in...)
		maps = append(maps, m...)
	}
	if e.video != "" {
		// After ours: for a key both set, the first -map_metadata wins.
		maps = append(maps, "-map_metadata", "1")
	}
	args = append(args, maps...)
	args = append(args, "-c:a")
	args = append(args, e.of.codec...)
	args = append(args, e.codecArgs()...)
	target := "pipe:1"
	if toTemp {
		dir := ""
		if isFile {
			dir = filepath.Dir(fileW.Name())
		}
		t, err := tempFile(dir, e.opts.TempDir, ".audiopost-*"+e.of.ext)
		if err != nil {
			return fmt.Errorf("ffmpeg: temporary output for %s: %w", e.name, err)
		}
		t.Close()
		e.temps = append(e.temps, t.Name())
		e.out = t.Name()
		target = "file:" + t.Name()
	}
	if monitor {
		// One encoder, two muxers: the file, and the raw stream on fd 3
		// for the monitor's decoder.
		args = append(args, "-y", "-f", "tee", "["+teeOptions(e.muxerArgs())+"]"+teeEscape(target)+
			"|[f="+e.of.monitor+":select=a]pipe:3")
	} else {
		args = append(args, e.muxerArgs()...)
		args = append(args, "-y", target)
	}

	var monW *os.File
	if monitor {
		// The encoder and its monitor run together: their slots are taken
		// at once (a no-op inside a larger reservation, such as a render's).
		ctx, release, err := procpool.Reserve(e.ctx, 2)
		if err != nil {
			return fmt.Errorf("ffmpeg: encoding %s with its monitor: %w", e.name, err)
		}
		e.ctx, e.unreserve = ctx, release
		if monW, err = e.startMonitor(); err != nil {
			return err
		}
	}
	cmd := procpool.Command(e.ctx, e.tool, args...)
	if monW != nil {
		cmd.ExtraFiles = []*os.File{monW}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		if monW != nil {
			monW.Close()
			<-e.monDone
		}
		return fmt.Errorf("ffmpeg: %w", err)
	}
	cmd.Stdin = pr
	if !toTemp {
		cmd.Stdout = e.w
	}
	cmd.Stderr = e.stderr
	cmd.FileSizeLimit = e.tempLeft() // see templimit.go
	err = cmd.Start()
	pr.Close()
	if monW != nil {
		// The encoder holds its own copy: the monitor sees the end of the
		// stream when the encoder exits.
		monW.Close()
	}
	if err != nil {
		pw.Close()
		if monW != nil {
			<-e.monDone
		}
		if e.ctx.Err() != nil || errors.Is(err, procpool.ErrClosed) {
			return fmt.Errorf("ffmpeg: encoding %s: %w", e.name, err)
		}
		return fmt.Errorf("%w: starting ffmpeg to encode %s: %v", audio.ErrCodecUnavailable, e.name, err)
	}
	e.cmd, e.stdin = cmd, pw
	go func() {
		e.waitErr = cmd.Wait()
		close(e.done)
	}()
	return nil
}

// startMonitor starts the decoder of the monitored stream, whose output a
// goroutine writes to opts.Monitor, and returns the write end of the pipe
// it reads the encoded stream from.
func (e *Encoder) startMonitor() (*os.File, error) {
	monR, monW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg: %w", err)
	}
	demuxer := e.of.monitor
	if demuxer == "adts" {
		demuxer = "aac" // the ADTS muxer's demuxer
	}
	args := append(baseArgs(), "-f", demuxer, "-i", "pipe:0", "-map", "0:a:0")
	if p := monitorPriming[e.of.monitor]; p > 0 {
		// At the stream's own rate, before the decoder resamples.
		args = append(args, "-af", "atrim=start_sample="+strconv.Itoa(p))
	}
	dec, err := startDecoder(e.ctx, e.tool, args, monR, e.format, audio.Info{Format: e.name},
		run{tool: "ffmpeg", what: "decoding the encoded " + e.name + " to verify it"})
	monR.Close()
	if err != nil {
		monW.Close()
		return nil, err
	}
	e.monDone = make(chan struct{})
	go func() {
		defer close(e.monDone)
		_, err := audio.Copy(e.ctx, e.opts.Monitor, dec)
		dec.Close()
		e.monErr = err
	}()
	return monW, nil
}

// monitorPriming is how many samples the decoder of each monitored raw
// stream returns before the first one the encoder was given: the
// encoder's priming, which the file's container (LAME's tag, MP4's edit
// list) tells its decoder to skip but a raw stream does not carry. The
// monitor skips them too, so that it measures what the file will play,
// aligned with the input; unaligned, the gating of a programme as
// regular as a repeated synth phrase moved by 0.9 LU. Ogg's own pre-skip
// already aligns Opus and Vorbis.
var monitorPriming = map[string]int{"mp3": 1105, "adts": 1024}

// teeOptions turns muxer arguments ("-f", "mp3", "-id3v2_version", "3")
// into the options of a tee muxer output ("f=mp3:id3v2_version=3").
func teeOptions(args []string) string {
	var opts []string
	for i := 0; i+1 < len(args); i += 2 {
		opts = append(opts, strings.TrimPrefix(args[i], "-")+"="+args[i+1])
	}
	return strings.Join(opts, ":")
}

// teeEscape escapes what the tee muxer's output list treats as syntax in
// a file name: backslashes, quotes, the separator and white space.
func teeEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune("\\'|[] \t\n\r", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (e *Encoder) codecArgs() []string {
	kbps := e.opts.Bitrate
	if kbps == 0 {
		kbps = e.of.defaultKbps
	}
	switch {
	case e.of.vbr:
		return []string{"-q:a", strconv.Itoa(VBRQuality(kbps))}
	case e.name == "alac":
		if e.opts.BitDepth > 16 {
			return []string{"-sample_fmt", "s32p"}
		}
		return []string{"-sample_fmt", "s16p"}
	case kbps >= aacFastKbps && e.of.codec[0] == "aac":
		// ffmpeg's default twoloop coder lets the decoded true peak jump
		// up to 1.7 dB above a limited programme's, where the fast coder
		// stays within a few tenths and keeps more of the waveform
		// (production/engine's TestAACCoderOvershoot): less headroom for
		// the limiter to keep. Below 64 kb/s ffmpeg's maintainers rate
		// twoloop better.
		return []string{"-b:a", strconv.Itoa(kbps) + "k", "-aac_coder", "fast"}
	case kbps > 0:
		return []string{"-b:a", strconv.Itoa(kbps) + "k"}
	}
	return nil
}

// aacFastKbps is the lowest bitrate at which AAC is encoded with ffmpeg's
// fast coder.
const aacFastKbps = 64

func (e *Encoder) muxerArgs() []string {
	args := []string{"-f", e.of.muxer}
	switch e.of.muxer {
	case "mp3":
		// ID3v2.3 is what most podcast players and tag editors read.
		args = append(args, "-id3v2_version", "3")
	case "ipod", "mp4", "mov":
		// The index first, so players stream the file at once.
		args = append(args, "-movflags", "+faststart")
	}
	return args
}

// metadataInputs writes the ffmetadata file (and cover) and returns the
// input arguments and the mapping arguments for them; first is the input
// index the metadata file gets, the cover is first+1.
func (e *Encoder) metadataInputs(length time.Duration, first int) (inputs, maps []string, err error) {
	meta, err := e.ffmetadata(length)
	if err != nil {
		return nil, nil, err
	}
	mf, err := e.writeTemp("audiopost-meta-*.txt", meta)
	if err != nil {
		return nil, nil, err
	}
	inputs = []string{"-f", "ffmetadata", "-i", "file:" + mf}
	maps = []string{"-map_metadata", strconv.Itoa(first)}
	if e.of.tags == styleVorbis {
		// Ogg chapters are written as comments by ffmetadata above; ffmpeg
		// versions differ in whether they add their own for Vorbis.
		maps = append(maps, "-map_chapters", "-1")
	} else {
		maps = append(maps, "-map_chapters", strconv.Itoa(first))
	}
	if c := e.opts.Tags.Cover; c != nil && len(c.Data) > 0 && e.of.tags != styleVorbis && e.video == "" && e.scene == nil {
		ext, err := coverExt(c)
		if err != nil {
			return nil, nil, err
		}
		cf, err := e.writeTemp("audiopost-cover-*"+ext, c.Data)
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, "-i", "file:"+cf)
		maps = append(maps, "-map", strconv.Itoa(first+1)+":v", "-c:v", "copy", "-disposition:v", "attached_pic",
			"-metadata:s:v", "title=Cover", "-metadata:s:v", "comment=Cover (front)")
	}
	return inputs, maps, nil
}

// writeTemp stores data in a temporary file that Close removes.
func (e *Encoder) writeTemp(pattern string, data []byte) (string, error) {
	f, err := tempFile(e.opts.TempDir, "", pattern)
	if err != nil {
		return "", fmt.Errorf("ffmpeg: temporary file for %s: %w", e.name, err)
	}
	e.temps = append(e.temps, f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("ffmpeg: temporary file for %s: %w", e.name, err)
	}
	return f.Name(), nil
}

// coverExt checks that the cover is an image the containers accept and
// returns the extension that lets ffmpeg's image demuxer recognise it.
func coverExt(p *audio.Picture) (string, error) {
	switch {
	case bytes.HasPrefix(p.Data, []byte{0xFF, 0xD8, 0xFF}):
		return ".jpg", nil
	case bytes.HasPrefix(p.Data, []byte("\x89PNG\r\n\x1a\n")):
		return ".png", nil
	}
	return "", fmt.Errorf("%w: cover art must be JPEG or PNG, got %q", audio.ErrUnsupported, p.MIMEType)
}

// ffmetadata renders tags and chapters in ffmpeg's metadata file format.
// length is the stream length that ends the last chapter.
func (e *Encoder) ffmetadata(length time.Duration) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(";FFMETADATA1\n")
	for _, kv := range tagPairs(e.opts.Tags, e.of.tags) {
		writeMeta(&b, kv[0], kv[1])
	}
	chapters := sortedChapters(e.opts.Chapters)
	if e.of.tags == styleVorbis {
		if c := e.opts.Tags.Cover; c != nil && len(c.Data) > 0 {
			block, err := pictureBlock(c)
			if err != nil {
				return nil, err
			}
			writeMeta(&b, "METADATA_BLOCK_PICTURE", base64.StdEncoding.EncodeToString(block))
		}
		for _, kv := range audio.VorbisChapters(chapters) {
			writeMeta(&b, kv[0], kv[1])
		}
		return b.Bytes(), nil
	}
	for i, c := range chapters {
		end := length
		if i+1 < len(chapters) {
			end = chapters[i+1].Start
		}
		if end <= c.Start {
			end = c.Start + time.Millisecond
		}
		fmt.Fprintf(&b, "[CHAPTER]\nTIMEBASE=1/1000\nSTART=%d\nEND=%d\n", c.Start.Milliseconds(), end.Milliseconds())
		writeMeta(&b, "title", c.Title)
	}
	return b.Bytes(), nil
}

// sortedChapters returns a copy of cs by start time, the order chapters
// are written in.
func sortedChapters(cs []audio.Chapter) []audio.Chapter {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b audio.Chapter) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// tagPairs lists the tags ffmpeg writes, under the keys its muxer of
// style maps to its own frames or atoms:
//
//   - ID3: TIT2, TPE1, TALB, TIT3 (subtitle), TCON, TPUB, TCOP (license),
//     TRCK, TYER, COMM, and TXXX frames "description" (summary),
//     "keywords" and "location"; the URL and the license URL are URL
//     frames ffmpeg cannot write (see extrasID3).
//   - MP4: ©nam, ©ART, ©alb, ©gen, cprt (license), trkn, ©day, ©cmt and
//     the location (loci, or ©xyz in QuickTime); the rest is added
//     afterwards (see mp4Items).
//   - Vorbis: the comments of audio.VorbisComments.
//   - Matroska: every tag, under its own name.
func tagPairs(t audio.Tags, style tagStyle) [][2]string {
	if style == styleVorbis {
		return audio.VorbisComments(t)
	}
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("title", t.Title)
	add("artist", t.Artist)
	add("album", t.Album)
	add("genre", t.Genre)
	add("copyright", t.License)
	add("track", t.Track)
	add("date", t.Year)
	add("comment", t.Comment)
	add("location", t.Location)
	switch style {
	case styleID3:
		add("TIT3", t.Subtitle)
		add("description", t.Summary)
		add("publisher", t.Publisher)
		add("keywords", t.Keywords)
	case styleMatroska:
		add("subtitle", t.Subtitle)
		add("summary", t.Summary)
		add("publisher", t.Publisher)
		add("url", t.URL)
		add("license_url", t.LicenseURL)
		add("keywords", t.Keywords)
	}
	return out
}

// mp4Items are the MP4 tags ffmpeg's muxer leaves out (in QuickTime files
// the description and keywords too): the summary as desc (the short
// description podcast apps show) and ldes (the long one), the keywords as
// keyw, and freeform items SUBTITLE, PUBLISHER, URL and LICENSE_URL.
func mp4Items(t audio.Tags) []mp4tag.Item {
	return []mp4tag.Item{
		{Atom: "desc", Value: t.Summary}, {Atom: "ldes", Value: t.Summary}, {Atom: "keyw", Value: t.Keywords},
		{Name: "SUBTITLE", Value: t.Subtitle}, {Name: "PUBLISHER", Value: t.Publisher},
		{Name: "URL", Value: t.URL}, {Name: "LICENSE_URL", Value: t.LicenseURL},
	}
}

// writeMeta writes one key=value line, escaping what ffmetadata treats as
// syntax.
func writeMeta(b *bytes.Buffer, k, v string) {
	b.WriteString(escapeMeta(k))
	b.WriteByte('=')
	b.WriteString(escapeMeta(v))
	b.WriteByte('\n')
}

func escapeMeta(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '=', ';', '#', '\\', '\n':
			b.WriteByte('\\')
		case '\r':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pictureBlock builds a FLAC PICTURE block (front cover), the payload of a
// Vorbis comment METADATA_BLOCK_PICTURE.
func pictureBlock(p *audio.Picture) ([]byte, error) {
	if _, err := coverExt(p); err != nil {
		return nil, err
	}
	mime := p.MIMEType
	if bytes.HasPrefix(p.Data, []byte{0xFF, 0xD8}) {
		mime = "image/jpeg"
	} else {
		mime = "image/png"
	}
	var w, h int
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Data)); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	var b bytes.Buffer
	put := func(v uint32) { _ = binary.Write(&b, binary.BigEndian, v) }
	put(3) // front cover
	put(uint32(len(mime)))
	b.WriteString(mime)
	put(0) // no description
	put(uint32(w))
	put(uint32(h))
	put(24)
	put(0)
	put(uint32(len(p.Data)))
	b.Write(p.Data)
	return b.Bytes(), nil
}

// Write implements audio.Sink.
func (e *Encoder) Write(src audio.Buffer) error {
	if e.err != nil {
		return e.err
	}
	if len(src) != e.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel encoder", audio.ErrFormatMismatch, len(src), e.format.Channels)
	}
	fb := 8 * e.format.Channels
	if e.scratch == nil {
		e.scratch = make([]byte, (rawBlock/fb)*fb)
	}
	per := len(e.scratch) / fb
	total := src.Frames()
	for from := 0; from < total; from += per {
		n := min(per, total-from)
		audio.EncodePCM(e.scratch, src, from, n, audio.Float64)
		if _, err := e.stdin.Write(e.scratch[:n*fb]); err != nil {
			e.stdin.Close()
			<-e.done
			if lerr := e.overLimit(e.out, e.tempLeft()); lerr != nil {
				e.err = lerr
			} else if e.waitErr == nil && e.ctx.Err() == nil {
				e.err = exitError(e.ctx, e.run(), fmt.Errorf("it stopped taking audio: %w", err), e.stderr)
			} else {
				e.err = exitError(e.ctx, e.run(), e.waitErr, e.stderr)
			}
			return e.err
		}
		e.frames += int64(n)
	}
	return nil
}

// Close finishes the stream: ffmpeg flushes and closes the container, and a
// temporary output is copied into the writer. It removes every temporary
// file whatever happens. Close does not close the writer.
func (e *Encoder) Close() error {
	if e.closed {
		return e.closeErr
	}
	e.closed = true
	e.closeErr = e.finish()
	return e.closeErr
}

// run describes the encoder's ffmpeg for error messages.
func (e *Encoder) run() run { return run{tool: "ffmpeg", what: "encoding " + e.name} }

// release gives back the reserved slots, once.
func (e *Encoder) release() {
	if e.unreserve != nil {
		e.unreserve()
		e.unreserve = nil
	}
}

func (e *Encoder) finish() error {
	defer e.removeTemps()
	defer e.release()
	e.stdin.Close()
	<-e.done
	if e.monDone != nil {
		// The encoder is gone, so the monitor's input has ended.
		<-e.monDone
	}
	if e.err != nil {
		return e.err
	}
	// Whatever follows, later Writes must fail.
	e.err = fmt.Errorf("ffmpeg: write to a closed %s encoder: %w", e.name, os.ErrClosed)
	if err := e.overLimit(e.out, e.tempLeft()); err != nil {
		return err
	}
	if e.waitErr != nil || e.ctx.Err() != nil {
		return exitError(e.ctx, e.run(), e.waitErr, e.stderr)
	}
	if e.monErr != nil && e.frames > 0 {
		// An empty stream has nothing to verify: the monitor's decoder
		// fails on it, having nothing to decode.
		return fmt.Errorf("ffmpeg: verifying the encoded %s: %w", e.name, e.monErr)
	}
	if e.out == "" {
		return nil
	}
	if e.metaLater {
		if fi, err := os.Stat(e.out); err == nil {
			e.tempWritten += fi.Size()
		}
		if err := e.addMetadata(); err != nil {
			return err
		}
	}
	f, err := os.Open(e.out)
	if err != nil {
		return fmt.Errorf("ffmpeg: reading encoded %s: %w", e.name, err)
	}
	defer f.Close()
	switch {
	case e.id3Extras != nil:
		if err := id3.AddExtras(e.w, f, *e.id3Extras); err != nil {
			return fmt.Errorf("ffmpeg: adding URLs and chapter images to %s: %w", e.name, err)
		}
		return nil
	case e.of.tags == styleMP4:
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("ffmpeg: reading encoded %s: %w", e.name, err)
		}
		if err := mp4tag.Add(e.w, f, st.Size(), mp4Items(e.opts.Tags)); err != nil {
			return fmt.Errorf("ffmpeg: adding tags to %s: %w", e.name, err)
		}
		return nil
	}
	if _, err := io.Copy(e.w, f); err != nil {
		return fmt.Errorf("ffmpeg: writing encoded %s: %w", e.name, err)
	}
	return nil
}

// extrasID3 returns, for an MP3 output, what package id3 adds to ffmpeg's
// tag: the URL and license URL, and the URL and picture of every chapter
// in the order ffmpeg writes its CHAP frames (by start); nil when there
// is none of these.
func (e *Encoder) extrasID3() *id3.Extras {
	if e.of.tags != styleID3 {
		return nil
	}
	x := &id3.Extras{URL: e.opts.Tags.URL, LicenseURL: e.opts.Tags.LicenseURL}
	cs := sortedChapters(e.opts.Chapters)
	extras := make([]id3.ChapterExtra, len(cs))
	needed := false
	for i, c := range cs {
		extras[i].URL = c.URL
		if c.Image != nil && len(c.Image.Data) > 0 {
			extras[i].Image = &id3.Picture{MIMEType: c.Image.MIMEType, Data: c.Image.Data}
		}
		needed = needed || c.URL != "" || extras[i].Image != nil
	}
	if needed {
		x.Chapters = extras
	}
	if x.Chapters == nil && x.URL == "" && x.LicenseURL == "" {
		return nil
	}
	return x
}

// addMetadata remuxes the finished output without re-encoding, adding tags,
// cover and chapters whose last end is the now known length.
func (e *Encoder) addMetadata() error {
	length := time.Duration(float64(e.frames) / float64(e.format.SampleRate) * float64(time.Second))
	in, maps, err := e.metadataInputs(length, 1)
	if err != nil {
		return err
	}
	t, err := tempFile(filepath.Dir(e.out), e.opts.TempDir, ".audiopost-*"+e.of.ext)
	if err != nil {
		return fmt.Errorf("ffmpeg: temporary output for %s: %w", e.name, err)
	}
	t.Close()
	e.temps = append(e.temps, t.Name())
	args := append(baseArgs(), "-i", "file:"+e.out)
	args = append(args, in...)
	args = append(args, "-map", "0")
	args = append(args, maps...)
	args = append(args, "-c", "copy")
	args = append(args, e.muxerArgs()...)
	args = append(args, "-y", "file:"+t.Name())
	var stderr stderrBuffer
	cmd := procpool.Command(e.ctx, e.tool, args...)
	cmd.Stderr = &stderr
	left := e.tempLeft()
	if left < 0 {
		return e.overLimit(t.Name(), left)
	}
	cmd.FileSizeLimit = left
	err = cmd.Run()
	if lerr := e.overLimit(t.Name(), left); lerr != nil {
		return lerr
	}
	if err != nil {
		if errors.Is(err, procpool.ErrClosed) {
			return err
		}
		return exitError(e.ctx, run{tool: "ffmpeg", what: "adding tags and chapters to " + e.name}, err, &stderr)
	}
	e.out = t.Name()
	return nil
}

func (e *Encoder) removeTemps() {
	for _, p := range e.temps {
		os.Remove(p)
	}
	e.temps = nil
}
