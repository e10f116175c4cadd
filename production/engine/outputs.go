package engine

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
)

// Names of the extra files some outputs make. They are derived from the
// output's resolved file name (see Production.OutputFilename) by inserting
// a marker before the ending:
//
//   - mono_mixdown: besides the output itself, a mono downmix (the mean of
//     the channels) named "<name>-mono.<ending>". A mono production needs
//     no mixdown and gets none.
//   - split_on_chapters: instead of one file, one file per chapter named
//     "<name>-01.<ending>", "<name>-02.<ending>", ... (at least two digits),
//     numbered in output order. Part 1 starts at the beginning of the
//     output (an intro or audio before the first mark belongs to it), each
//     part ends where the next chapter starts. A production without
//     chapters gets the single unsplit file. Each part is tagged with its
//     chapter's title and its number as the track. With mono_mixdown too,
//     the mono file is split the same way ("<name>-mono-01.<ending>").
const (
	MonoMarker = "-mono"
)

// splitName cuts a resolved output name into stem and ending (with the
// dot), knowing the format's multi-part endings.
func splitName(name string, f production.OutputFormat) (stem, ext string) {
	if e := production.FilenameEnding(name, f); e != "" {
		return name[:len(name)-len(e)-1], name[len(name)-len(e)-1:]
	}
	ext = path.Ext(name)
	return strings.TrimSuffix(name, ext), ext
}

// PartName is the file name of chapter part k (0-based) of n of an output
// called name.
func PartName(name string, f production.OutputFormat, k, n int) string {
	stem, ext := splitName(name, f)
	width := max(2, len(strconv.Itoa(n)))
	return fmt.Sprintf("%s-%0*d%s", stem, width, k+1, ext)
}

// MonoName is the file name of the mono mixdown of an output called name.
func MonoName(name string, f production.OutputFormat) string {
	stem, ext := splitName(name, f)
	return stem + MonoMarker + ext
}

// encodedFile is one file an encoder writes during the pass.
type encodedFile struct {
	fh  *fileHandle
	enc audio.Encoder
	// output is the index of the OutputFile the file belongs to.
	output int
	// final marks the status whose finishing work closes it.
	final  production.Status
	closed bool
}

func (e *encodedFile) close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.enc.Close()
	if err == nil {
		err = e.fh.finish()
	}
	return err
}

// encoderFactory opens the encoder of one file.
type encoderFactory func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error)

// audioEncoder returns the factory for an audio output format.
func audioEncoder(format string, input string, cover *audio.Picture) encoderFactory {
	switch format {
	case "video":
		return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
			return ffmpeg.NewVideoEncoder(ctx, fh.writer(), input, f, opts)
		}
	case "audiogram":
		return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
			return newAudiogramEncoder(ctx, fh.writer(), cover, f, opts)
		}
	}
	return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		return audio.NewEncoder(ctx, format, fh.writer(), f, opts)
	}
}

// isAudioOutput reports whether a format is encoded from the processed
// audio in the pass.
func isAudioOutput(f production.OutputFormat) bool {
	switch f.Name {
	case "mp3", "mp3-vbr", "vorbis", "opus", "aac", "flac", "alac", "wav", "wav-24bit", "video", "audiogram":
		return true
	}
	return false
}

// monoSink downmixes to mono (the mean of the channels) and feeds sinks.
type monoSink struct {
	buf   audio.Buffer
	view  audio.Buffer
	sinks []audio.Sink
}

func (m *monoSink) Write(b audio.Buffer) error {
	n := b.Frames()
	if cap(m.buf[0]) < n {
		m.buf[0] = make([]float64, n)
	}
	out := m.buf[0][:n]
	scale := 1 / float64(len(b))
	for i := range out {
		var s float64
		for c := range b {
			s += b[c][i]
		}
		out[i] = s * scale
	}
	if m.view == nil {
		m.view = make(audio.Buffer, 1)
	}
	m.view[0] = out
	for _, s := range m.sinks {
		if err := s.Write(m.view); err != nil {
			return err
		}
	}
	return nil
}

// splitSink writes consecutive ranges of the stream to one encoder per
// chapter, opening each when its range begins and closing it when its
// range ends, so at most one encoder of the output runs at a time.
type splitSink struct {
	ctx    context.Context
	bounds []int64 // start frame of each part; bounds[0] == 0
	open   func(k int) (*encodedFile, error)
	files  []*encodedFile
	pos    int64
	cur    int
	view   audio.Buffer
}

func (s *splitSink) Write(b audio.Buffer) error {
	n := int64(b.Frames())
	var done int64
	for done < n {
		if err := s.advance(); err != nil {
			return err
		}
		take := n - done
		if s.cur < len(s.bounds)-1 {
			take = min(take, s.bounds[s.cur+1]-s.pos)
		}
		if err := s.files[s.cur].enc.Write(b.SliceInto(s.view, int(done), int(done+take))); err != nil {
			return err
		}
		done += take
		s.pos += take
	}
	return nil
}

// advance closes the parts that end at the current position (opening
// empty ones first, so every chapter has its file) and opens the current.
func (s *splitSink) advance() error {
	for s.cur < len(s.bounds)-1 && s.pos >= s.bounds[s.cur+1] {
		if err := s.ensure(s.cur); err != nil {
			return err
		}
		if err := s.files[s.cur].close(); err != nil {
			return err
		}
		s.cur++
	}
	return s.ensure(s.cur)
}

func (s *splitSink) ensure(k int) error {
	if s.files[k] != nil {
		return nil
	}
	f, err := s.open(k)
	if err != nil {
		return err
	}
	s.files[k] = f
	return nil
}

// finish opens the parts the stream never reached (chapters starting
// after its end), which stay empty.
func (s *splitSink) finish() error {
	for k := range s.files {
		if err := s.ensure(k); err != nil {
			return err
		}
	}
	return nil
}

// tags returns the production's metadata as file tags. With
// append_chapters the chapter list (output positions) is appended to the
// summary, as podcast apps show it there.
func fileTags(p *production.Production, cover *audio.Picture) audio.Tags {
	m := p.Metadata
	t := audio.Tags{
		Title: m.Title, Artist: m.Artist, Album: m.Album, Subtitle: m.Subtitle, Summary: m.Summary,
		Genre: m.Genre, Publisher: m.Publisher, URL: m.URL, License: m.License, Track: m.Track, Year: m.Year,
		Cover: cover,
	}
	if m.AppendChapters && len(p.Chapters) > 0 {
		text := production.FormatChapters(outputChapters(p))
		if t.Summary != "" {
			t.Summary += "\n\n"
		}
		t.Summary += strings.TrimRight(text, "\n")
	}
	return t
}

// outputChapters returns the chapters with Start moved to the output
// position, sorted: what files, chapter files and players show.
func outputChapters(p *production.Production) []production.Chapter {
	cs := p.ChapterPositions()
	for i := range cs {
		cs[i].Start = cs[i].OutputStart
	}
	return cs
}

// audioChapters converts chapters for encoders, with their pictures.
func (r *run) audioChapters(cs []production.Chapter) []audio.Chapter {
	out := make([]audio.Chapter, 0, len(cs))
	for _, c := range cs {
		ac := audio.Chapter{Start: c.OutputStart, Title: c.Title, URL: c.URL}
		if c.Image != nil {
			ac.Image = r.chapterPics[*c.Image]
		}
		out = append(out, ac)
	}
	return out
}

// passPlan is every file of the encoding pass.
type passPlan struct {
	sinks []audio.Sink
	files []*encodedFile
	// splits own their part files (also listed in files once opened).
	splits []*splitSink
}

// planOutputs opens the encoders of every audio output of p (or, when
// only is not nil, of the outputs it names) for a stream of format f and
// expected length (0 if unknown).
func (r *run) planOutputs(ctx context.Context, f audio.Format, length time.Duration, only map[int]bool) (*passPlan, error) {
	p := r.p
	plan := &passPlan{}
	chapters := p.ChapterPositions()
	baseTags := fileTags(p, r.cover)
	baseChapters := r.audioChapters(chapters)
	var mono *monoSink
	for i, o := range p.OutputFiles {
		of, ok := production.LookupFormat(o.Format)
		if !ok || !isAudioOutput(of) || (only != nil && !only[i]) {
			continue
		}
		name := p.OutputFilename(i)
		opts := audio.EncodeOptions{Bitrate: o.Bitrate, Tags: baseTags, Chapters: baseChapters, Length: length}
		if of.Lossy() && opts.Bitrate == 0 {
			opts.Bitrate = of.DefaultBitrate
		}
		if of.Name == "flac" && r.info.BitDepth > 16 {
			opts.BitDepth = 24
		}
		factory := audioEncoder(of.Name, r.in.Main, r.cover)
		variants := []struct {
			name string
			mono bool
		}{{name, false}}
		if o.MonoMixdown && f.Channels > 1 {
			variants = append(variants, struct {
				name string
				mono bool
			}{MonoName(name, of), true})
		}
		for _, v := range variants {
			vf := f
			status := production.StatusAudioEncoding
			if v.mono {
				vf.Channels = 1
				status = production.StatusMonoMixdown
			}
			var sink audio.Sink
			if o.SplitOnChapters && len(chapters) > 0 {
				s := r.newSplit(ctx, plan, i, v.mono, v.name, of, factory, vf, opts, chapters)
				plan.splits = append(plan.splits, s)
				sink = s
			} else {
				kind := kindMain
				if v.mono {
					kind = kindMono
				}
				ef, err := r.openEncoded(ctx, i, kind, v.name, factory, vf, opts, status)
				if err != nil {
					return plan, err
				}
				plan.files = append(plan.files, ef)
				sink = ef.enc
			}
			if of.Lossy() {
				var err error
				if sink, err = r.compensate(ctx, i, of, opts.Bitrate, vf, sink); err != nil {
					return plan, err
				}
			}
			if v.mono {
				if mono == nil {
					mono = &monoSink{buf: audio.NewBuffer(1, audio.DefaultBlock)}
					plan.sinks = append(plan.sinks, mono)
				}
				mono.sinks = append(mono.sinks, sink)
			} else {
				plan.sinks = append(plan.sinks, sink)
			}
		}
	}
	return plan, nil
}

func (r *run) openEncoded(ctx context.Context, output int, kind fileKind, name string, factory encoderFactory, f audio.Format, opts audio.EncodeOptions, status production.Status) (*encodedFile, error) {
	fh, err := r.create(name, output, kind)
	if err != nil {
		return nil, err
	}
	enc, err := factory(ctx, fh, f, opts)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", name, err)
	}
	return &encodedFile{fh: fh, enc: enc, output: output, final: status}, nil
}

func (r *run) newSplit(ctx context.Context, plan *passPlan, output int, mono bool, name string, of production.OutputFormat, factory encoderFactory,
	f audio.Format, opts audio.EncodeOptions, chapters []production.Chapter) *splitSink {
	n := len(chapters)
	s := &splitSink{ctx: ctx, bounds: make([]int64, n), files: make([]*encodedFile, n), view: make(audio.Buffer, f.Channels)}
	for k := 1; k < n; k++ {
		s.bounds[k] = int64(chapters[k].OutputStart.Seconds()*float64(f.SampleRate) + 0.5)
	}
	s.open = func(k int) (*encodedFile, error) {
		o := opts
		o.Tags.Title = chapters[k].Title
		o.Tags.Track = strconv.Itoa(k + 1)
		// A part is its chapter: the chapter's picture is its cover.
		if img := chapters[k].Image; img != nil && r.chapterPics[*img] != nil {
			o.Tags.Cover = r.chapterPics[*img]
		}
		o.Chapters = nil
		o.Length = 0
		if opts.Length > 0 {
			end := opts.Length
			if k+1 < n {
				end = chapters[k+1].OutputStart
			}
			start := time.Duration(0)
			if k > 0 {
				start = chapters[k].OutputStart
			}
			o.Length = max(0, end-start)
		}
		kind := kindPart
		if mono {
			kind = kindMonoPart
		}
		ef, err := r.openEncoded(ctx, output, kind, PartName(name, of, k, n), factory, f, o, production.StatusSplitChapters)
		if err != nil {
			return nil, err
		}
		plan.files = append(plan.files, ef)
		return ef, nil
	}
	return s
}

// finishPass closes the encoders in status order: the full outputs
// (Audio Encoding), then mono mixdowns, then chapter parts, reporting each
// status while its files are finished (for ffmpeg outputs that is the
// flush and, for MP4, the index and metadata pass).
func (r *run) finishPass(plan *passPlan) error {
	for _, s := range plan.splits {
		if err := s.finish(); err != nil {
			return err
		}
	}
	for _, st := range []production.Status{production.StatusAudioEncoding, production.StatusMonoMixdown, production.StatusSplitChapters} {
		first := true
		for _, ef := range plan.files {
			if ef.final != st || ef.closed {
				continue
			}
			if first && st != production.StatusAudioEncoding {
				r.setStatus(st, 0)
				first = false
			}
			if err := ef.close(); err != nil {
				return fmt.Errorf("output %s: %w", ef.fh.name, err)
			}
		}
	}
	return nil
}

// abortPass closes every encoder after a failure, so external processes
// and their temporary files go away; the files themselves are aborted by
// the run.
func abortPass(plan *passPlan) {
	if plan == nil {
		return
	}
	for _, ef := range plan.files {
		if !ef.closed {
			ef.closed = true
			_ = ef.enc.Close()
		}
	}
}
