package engine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/loudness"
)

// Two settings change what an audio output is:
//
//   - mono_mixdown: the output is a mono downmix (the mean of the
//     channels, as a mono player mixes them) of a production with more
//     channels; a mono production is written as it is. The output's files
//     are finished in status 7 (Audio Mono Mixdown).
//   - split_on_chapters: instead of one file, one file per chapter named
//     "<name>-01.<ending>", "<name>-02.<ending>", ... (at least two digits)
//     after the output's resolved file name (see Production.OutputFilename),
//     numbered in output order. Part 1 starts at the beginning of the
//     output (an intro or audio before the first mark belongs to it), each
//     part ends where the next chapter starts. A production without
//     chapters gets the single unsplit file. Each part is tagged with its
//     chapter's title, its number as the track and its picture as the
//     cover. The parts are the output's Parts and are listed as output
//     files of their own (Production.ListedOutputFiles). The last parts
//     are finished in status 8 (Split Audio On Chapter Marks). A video
//     output of a video input is not split (its video is copied, and a
//     copied video can only be cut at its key frames): it is written whole,
//     with a warning.
//
// With both, the parts are mono.

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

// encodedFile is one file an encoder writes during the pass.
type encodedFile struct {
	fh  *fileHandle
	enc audio.Encoder
	// output is the index of the OutputFile the file belongs to.
	output int
	// final marks the status whose finishing work closes it.
	final production.Status
	// mono marks a mono mixdown of a production with more channels.
	mono bool
	// meter measures the encoded audio decoded again while it is encoded
	// (EncodeOptions.Monitor), for the lossy verification; nil when the
	// file is not verified.
	meter  *loudness.Meter
	closed bool
}

func (e *encodedFile) close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.enc.Close()
	// The closed encoder's buffers go with it: the lossy verification
	// keeps the file and its meter through a re-render, not the encoder.
	e.enc = nil
	if err == nil {
		err = e.fh.finish()
	}
	return err
}

// tempLimit is the temporary disk planned for output i's encoder
// (production.Work.OutputTemp; 0: no bound), from the plan of the probed
// production.
func (r *run) tempLimit(i int) int64 {
	if r.tempFiles == nil {
		r.tempFiles = production.PlanWork(r.p).OutputTemp
	}
	if i < len(r.tempFiles) {
		return r.tempFiles[i]
	}
	return 0
}

// limited returns factory's encoders of output i, whose temporary files
// are bounded by limit (EncodeOptions.TempLimit), failing with the form
// error of the output when one reaches it.
func (r *run) limited(factory encoderFactory, i int, limit int64) encoderFactory {
	if limit <= 0 {
		return factory
	}
	return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		enc, err := factory(ctx, fh, f, opts)
		if err != nil {
			return nil, r.tempLimitError(i, limit, err)
		}
		return limitedEncoder{Encoder: enc, err: func(err error) error { return r.tempLimitError(i, limit, err) }}, nil
	}
}

// limitedEncoder is an encoder whose errors of its temporary file's bound
// become its output's form error.
type limitedEncoder struct {
	audio.Encoder
	err func(error) error
}

func (e limitedEncoder) Write(b audio.Buffer) error { return e.err(e.Encoder.Write(b)) }
func (e limitedEncoder) Close() error               { return e.err(e.Encoder.Close()) }

// tempLimitError returns, for an err of output i's encoder whose
// temporary file reached the limit planned for it (audio.ErrTempLimit,
// or errDiskFull of a cappedFile), the form error of the output; any
// other err as it is. Reaching it means the plan that kept the run within
// Limits.Disk was wrong (a length the probe got wrong), so the run stops
// there, as decodeToFile stops a decode, and the encoder leaves no file.
func (r *run) tempLimitError(i int, limit int64, err error) error {
	if !errors.Is(err, audio.ErrTempLimit) && !errors.Is(err, errDiskFull) {
		return err
	}
	msg := fmt.Sprintf("its encoder's temporary files grew past the %s planned for them; a run takes at most %s of temporary disk",
		production.FormatBytes(limit), production.FormatBytes(r.e.Limits.WithDefaults().Disk))
	return fmt.Errorf("the production needs more than this server allows: %w", production.FieldErrors{"output_files." + strconv.Itoa(i): msg})
}

// encoderFactory opens the encoder of one file.
type encoderFactory func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error)

// encoderFor returns the factory of the encoder of an output whose
// resolved file name is name: a video output of a video input is the
// input's video with the new audio, one of an audio-only input (and an
// audiogram) a video rendered from the audio (see sceneFor).
func (r *run) encoderFor(of production.OutputFormat, name string) encoderFactory {
	switch {
	case of.Name == "video" && r.info.HasVideo:
		input := r.in.Main
		if burned, ok := r.burned[name]; ok {
			input = burned
		}
		return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
			return ffmpeg.NewVideoEncoder(ctx, fh.writer(), input, f, opts)
		}
	case of.Name == "video" || of.Name == "audiogram":
		ending := production.FilenameEnding(name, of)
		return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
			// The picture of the file's cover: the production's, or a
			// chapter part's own.
			scene, err := sceneFor(of.Name, ending, opts.Tags.Cover)
			if err != nil {
				return nil, err
			}
			return ffmpeg.NewRenderEncoder(ctx, fh.writer(), scene, f, opts)
		}
	}
	return func(ctx context.Context, fh *fileHandle, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		return audio.NewEncoder(ctx, of.Name, fh.writer(), f, opts)
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
	// open starts the encoder of part k; empty says the stream ended
	// before the part began (nothing to verify).
	open  func(k int, empty bool) (*encodedFile, error)
	files []*encodedFile
	pos   int64
	cur   int
	view  audio.Buffer
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
	f, err := s.open(k, false)
	if err != nil {
		return err
	}
	s.files[k] = f
	return nil
}

// finish closes the part the stream ended in, then opens and closes, one
// after the other, the parts it never reached (chapters starting at or
// after its end, as those in a cut at the end do), which stay empty: like
// the parts it reached, never more than one at a time, whatever their
// number.
func (s *splitSink) finish() error {
	if err := s.ensure(s.cur); err != nil {
		return err
	}
	for k := s.cur; k < len(s.files); k++ {
		if s.files[k] == nil {
			f, err := s.open(k, true)
			if err != nil {
				return err
			}
			s.files[k] = f
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if err := s.files[k].close(); err != nil {
			return fmt.Errorf("output %s: %w", s.files[k].fh.name, err)
		}
	}
	return nil
}

// fileTags returns the production's metadata as file tags: every field
// of the spec's metadata object (the tags as comma-separated keywords, the
// location as an ISO 6709 point), and the cover. With append_chapters the
// chapter list (output positions) is appended to the summary, as podcast
// apps show it there.
func fileTags(p *production.Production, cover *audio.Picture) audio.Tags {
	m := p.Metadata
	t := audio.Tags{
		Title: m.Title, Artist: m.Artist, Album: m.Album, Subtitle: m.Subtitle, Summary: m.Summary,
		Genre: m.Genre, Publisher: m.Publisher, URL: m.URL, License: m.License, LicenseURL: m.LicenseURL,
		Track: m.Track, Year: m.Year, Keywords: production.JoinTags(m.Tags), Cover: cover,
	}
	if l := m.Location; l != nil {
		lat, err1 := strconv.ParseFloat(l.Latitude, 64)
		lon, err2 := strconv.ParseFloat(l.Longitude, 64)
		if err1 == nil && err2 == nil { // validated: always
			t.Location = audio.ISO6709(lat, lon)
		}
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
	// queues are the encoders' queues among sinks: each encoder is fed
	// from a goroutine of its own (see queueBlocks).
	queues []*audio.QueuedSink
	// mu guards files and the run's pending files while the pass runs:
	// a split output opens its parts from its queue's goroutine.
	mu    sync.Mutex
	files []*encodedFile
	// splits own their part files (also listed in files once opened).
	splits []*splitSink
	// monoMeter measures the mono mixdown the mono outputs get (nil
	// without any), the reference of their level check.
	monoMeter *loudness.Meter
}

// maxVorbisMonoKbps is the highest bitrate libvorbis encodes mono at.
const maxVorbisMonoKbps = 240

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
		opts := audio.EncodeOptions{Bitrate: o.Bitrate, Tags: baseTags, Chapters: baseChapters, Length: length, TempDir: r.e.TempDir}
		verify := of.Lossy() && r.normalize
		// Its warnings are given when it is planned the first time, not
		// again for a batch or the lossy verification.
		first := !r.planned[i]
		if r.planned == nil {
			r.planned = map[int]bool{}
		}
		r.planned[i] = true
		monitor := verify && (r.progs == nil || r.progs.monitor[i])
		if of.Lossy() && opts.Bitrate == 0 {
			opts.Bitrate = of.DefaultBitrate
		}
		if of.Name == "flac" && r.info.BitDepth > 16 {
			opts.BitDepth = 24
		}
		opts.TempLimit = r.tempLimit(i)
		factory := r.limited(r.encoderFor(of, name), i, opts.TempLimit)
		vf, status := f, production.StatusAudioEncoding
		isMono := o.MonoMixdown && f.Channels > 1
		if isMono {
			vf.Channels, status = 1, production.StatusMonoMixdown
		}
		if of.Name == "vorbis" && vf.Channels == 1 && opts.Bitrate > maxVorbisMonoKbps {
			// libvorbis has no mono mode above this rate: ffmpeg would
			// fail to open the encoder.
			if first {
				p.AddWarning(status, fmt.Sprintf("%s: bitrate %d kbps lowered to %d kbps, the most Vorbis encodes in mono", name, opts.Bitrate, maxVorbisMonoKbps))
			}
			opts.Bitrate = maxVorbisMonoKbps
		}
		split := o.SplitOnChapters && len(chapters) > 0
		if split && of.Name == "video" && r.info.HasVideo {
			split = false
			if first {
				p.AddWarning(production.StatusSplitChapters, fmt.Sprintf("%s is not split on chapters: the input's video is copied, and a copied video cannot be cut at the chapter marks exactly", name))
			}
		}
		var sink audio.Sink
		if split {
			s := r.newSplit(ctx, plan, i, isMono, verify, monitor, name, of, factory, vf, opts, chapters)
			plan.splits = append(plan.splits, s)
			sink = s
		} else {
			ef, err := r.openEncoded(ctx, i, kindMain, name, factory, vf, opts, status, verify, monitor)
			if err != nil {
				return plan, err
			}
			ef.mono = isMono
			plan.files = append(plan.files, ef)
			sink = ef.enc
		}
		if of.Lossy() {
			sink = r.compensate(i, of, opts.Bitrate, vf, sink)
		}
		q := audio.NewQueuedSink(ctx, sink, vf.Channels, queueBlocks)
		plan.queues = append(plan.queues, q)
		sink = q
		if !isMono {
			plan.sinks = append(plan.sinks, sink)
			continue
		}
		if mono == nil {
			mono = &monoSink{buf: audio.NewBuffer(1, audio.DefaultBlock)}
			plan.sinks = append(plan.sinks, mono)
			meter, err := loudness.NewMeter(vf, loudness.Options{Mode: loudness.ModeI})
			if err != nil {
				return plan, err
			}
			plan.monoMeter = meter
			mono.sinks = append(mono.sinks, meter)
		}
		mono.sinks = append(mono.sinks, sink)
	}
	return plan, nil
}

// queueBlocks is how many blocks (of audio.DefaultBlock frames) each
// encoder's queue holds: enough to ride out an encoder's uneven pace
// (LAME and the AAC encoder work in bursts of frames), little enough that
// memory stays bounded whatever the programme's length (0.5 MB per
// stereo output).
const queueBlocks = 8

// openEncoded creates the file name and starts its encoder. With verify,
// the encoded audio is measured for verifyLossy: with monitor, decoded
// again as it is encoded; without, decoded from the finished file.
func (r *run) openEncoded(ctx context.Context, output int, kind fileKind, name string, factory encoderFactory, f audio.Format,
	opts audio.EncodeOptions, status production.Status, verify, monitor bool) (*encodedFile, error) {
	fh, err := r.create(name, output, kind)
	if err != nil {
		return nil, err
	}
	var meter *loudness.Meter
	if verify {
		if meter, err = loudness.NewMeter(f, loudness.Options{Mode: loudness.ModeTruePeak | loudness.ModeI}); err != nil {
			return nil, err
		}
		if monitor {
			opts.Monitor = meter
		}
	}
	enc, err := factory(ctx, fh, f, opts)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", name, err)
	}
	return &encodedFile{fh: fh, enc: enc, output: output, final: status, meter: meter}, nil
}

func (r *run) newSplit(ctx context.Context, plan *passPlan, output int, isMono, verify, monitor bool, name string, of production.OutputFormat, factory encoderFactory,
	f audio.Format, opts audio.EncodeOptions, chapters []production.Chapter) *splitSink {
	n := len(chapters)
	s := &splitSink{ctx: ctx, bounds: make([]int64, n), files: make([]*encodedFile, n), view: make(audio.Buffer, f.Channels)}
	for k := 1; k < n; k++ {
		s.bounds[k] = int64(chapters[k].OutputStart.Seconds()*float64(f.SampleRate) + 0.5)
	}
	s.open = func(k int, empty bool) (*encodedFile, error) {
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
		plan.mu.Lock()
		defer plan.mu.Unlock()
		ef, err := r.openEncoded(ctx, output, kindPart, PartName(name, of, k, n), factory, f, o, production.StatusSplitChapters,
			verify && !empty, monitor && !empty)
		if err != nil {
			return nil, err
		}
		ef.fh.part, ef.mono = k, isMono
		plan.files = append(plan.files, ef)
		return ef, nil
	}
	return s
}

// drain waits until every encoder's queue is empty and returns the first
// error of an encoder's Write.
func (plan *passPlan) drain() error {
	var first error
	for _, q := range plan.queues {
		if err := q.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// finishPass closes the encoders in status order: the full outputs
// (Audio Encoding), then mono mixdowns, then chapter parts (the last one
// each output's stream reached, then those it never reached), reporting
// each status while its files are finished (for ffmpeg outputs that is
// the flush and, for MP4, the index and metadata pass).
func (r *run) finishPass(plan *passPlan) error {
	for _, st := range []production.Status{production.StatusAudioEncoding, production.StatusMonoMixdown, production.StatusSplitChapters} {
		first := true
		if st == production.StatusSplitChapters && len(plan.splits) > 0 {
			r.setStatus(st, 0)
			first = false
			for _, s := range plan.splits {
				if err := s.finish(); err != nil {
					return err
				}
			}
		}
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
	// The queues' goroutines first: they may be opening files.
	for _, q := range plan.queues {
		q.Stop()
	}
	for _, ef := range plan.files {
		if !ef.closed {
			ef.closed = true
			_ = ef.enc.Close()
		}
	}
}
