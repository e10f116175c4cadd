package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/speech"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs" // the engine decodes and encodes every format
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/loudness"
)

// Engine runs the single-track production pipeline of DESIGN.md: probe and
// decode the input, process it, encode every output in one pass, write
// the side files. An Engine is safe for concurrent use by several runs.
type Engine struct {
	// Processor turns the decoded input into the processed signal; nil
	// means ChainProcessor.
	Processor Processor
	// MaxDuration caps the input length (0: no cap).
	MaxDuration time.Duration
	// Limits bound the work of a run (the zero value means
	// production.DefaultLimits): once the inputs are probed, chapters past
	// the input's end are dropped with a warning and a production whose
	// planned work exceeds its budget ends in Error before any encoder
	// starts. The API checks the same when a production is saved or
	// started; this catches productions saved before.
	Limits production.Limits
	// Logger receives a line per finished run; nil means slog.Default().
	Logger *slog.Logger
	// TempDir is where a run makes its temporary files (the encoders'
	// metadata files and seekable outputs, multitrack stems, videos with
	// burned-in subtitles, the chain's processed signal between its
	// passes, inputs ffmpeg decodes as 32-bit float WAV: 1.4 GB per hour
	// of 48 kHz stereo), all removed before Run returns; "" means the
	// system's (os.TempDir). Limits.Disk bounds what a run plans there
	// (production.Work.Disk), what its decodes write and what each
	// output's encoder writes (its part of the plan, Work.OutputTemp).
	// Outputs are written through the OutputWriter, not here.
	TempDir string
	// Processes is the pool of external programs (ffmpeg, PocketSphinx)
	// runs take their slots in (see programs.go); nil means the pool the
	// context of Run names, else procpool.Default().
	Processes *procpool.Pool
}

// Inputs are the local files of a production.
type Inputs struct {
	// Main is the path of the main input file (none for a multitrack
	// production).
	Main string
	// Multi maps the ID of each intro, outro and multitrack track
	// (MultiInputFile.ID) to the path of its file.
	Multi map[string]string
	// Cover is the path of the cover image (PNG or JPEG); "" uses the
	// picture embedded in the input, if any.
	Cover string
	// Recognizer recognises the speech of a production with
	// speech_recognition: the recognizer of the service it names (see
	// package speech). Nil skips the speech outputs with a warning.
	Recognizer speech.Recognizer
	// ChapterImages maps a chapter's image (Chapter.Image, as the
	// production has it) to the path of the file (PNG or JPEG). Chapters
	// whose image is not here are written without one.
	ChapterImages map[string]string
	// FS, when not nil, is where the paths above are: names in FS
	// (fs.ValidPath) instead of the operating system's files, for a
	// caller whose input is not a file, such as a browser's Blob. A
	// file of FS that is an io.Seeker lets the codecs seek in it as they
	// do in an *os.File. What hands an input's path to ffmpeg (video
	// outputs, burned-in subtitles, covers ffmpeg extracts) needs the
	// operating system's files and fails with FS.
	FS fs.FS
}

// ProgressFunc receives every status change and, within a status, the
// fraction done (0 to 1), so a job runner can persist and publish it.
// Calls come from the goroutine that called Run.
type ProgressFunc func(s production.Status, fraction float64)

// Result lists what a successful run produced beyond the fields it set on
// the Production.
type Result struct {
	// Files are every file written, in the order of the output files.
	Files []WrittenFile
	// Waveform is the PNG behind the production's waveform_image, drawn
	// from the output audio whether or not a waveform output was asked for.
	Waveform []byte
	// Cover is the cover image used (nil without one); Thumbnail is its
	// 200x200 center crop as PNG.
	Cover     *audio.Picture
	Thumbnail []byte
	// LoudnessChart is a PNG of the short-term loudness of input and output
	// over time (artwork.LoudnessChart), nil when the processor gave no
	// loudness steps.
	LoudnessChart []byte
	// Frames is the output length in frames at the output sample rate.
	Frames int64
	// LossyPasses is how many times the lossy verification rendered the
	// programme again, and LossyReencoded how many outputs it encoded
	// again in all (an output split on chapters counts once), because
	// their first encode missed maxpeak or the level: both 0 when every
	// lossy output was right the first time.
	LossyPasses, LossyReencoded int
	// LossyPeakMisses and LossyLevelMisses are how many lossy outputs
	// missed maxpeak, and their level, on the first encode.
	LossyPeakMisses, LossyLevelMisses int
}

// WrittenFile is one published file.
type WrittenFile struct {
	Name string
	// Output is the index in Production.OutputFiles the file belongs to.
	Output int
	Size   int64
	MD5    string
}

// Errors of the engine. Decoding and encoding errors wrap audio's
// sentinels (audio.ErrMalformed, audio.ErrUnsupported, ...).
var (
	// ErrNoInput means the production has no input file to process.
	ErrNoInput = errors.New("production: no input file")
)

// maxCoverBytes bounds a cover image file.
const maxCoverBytes = 32 << 20

// creditsFor returns the used_credits of a production with seconds of
// input audio: hours of input (main input plus intros and outros, as
// probed, rounded up to the whole second) in Combined. Which pool pays
// (one-time or recurring credits) is the account's business, so the job
// runner splits Combined into those two.
func creditsFor(seconds float64) production.UsedCredits {
	h := math.Ceil(seconds) / 3600
	return production.UsedCredits{Combined: h}
}

// run is the state of one Engine.Run.
type run struct {
	e        *Engine
	p        *production.Production
	in       Inputs
	out      OutputWriter
	progress ProgressFunc
	status   production.Status
	lastFrac float64

	info audio.Info
	// coverFrom is the input an embedded cover is extracted from: the
	// main input, or a multitrack production's first track.
	coverFrom string
	// mt is the multitrack processing (nil for single-track).
	mt *multitrack
	// process renders the processed audio (the Processor's, or the
	// multitrack mixdown's), once and again for the lossy verification.
	process func(context.Context, ProcessJob) (*Processed, error)
	// again is the latest Processed's Again: the lossy verification's
	// renders reuse the first one's analysis.
	again func(context.Context, ProcessJob) (*Processed, error)
	// transcript is what the recognizer heard, in input time (production
	// time for multitrack); outTranscript the same on the output's
	// timeline; speechSkipped says why there is none when the production
	// asked for one.
	transcript, outTranscript *speech.Transcript
	speechSkipped             string
	// burned maps a video output's file name to its input video with the
	// subtitles burned in (files in burnDir).
	burned  map[string]string
	burnDir string
	// introGain is the gain in dB that brings each intro and outro, by
	// ID, to the production's loudness target.
	introGain map[string]float64
	cover     *audio.Picture
	// chapterPics are the loaded Inputs.ChapterImages, by chapter image.
	chapterPics map[string]*audio.Picture
	decoders    []audio.Decoder
	closers     []io.Closer // processed sources, closed before the decoders
	// probes holds the probe of each input ffmpeg reads (see Run).
	probes ffmpeg.Probes
	// reading is the fraction reporter of the analysis passes; nil while
	// encoding.
	reading  func(frames int64)
	expected int64
	// decodedDisk is what the run's decoded inputs take on disk;
	// decodesLeft the inputs the probe may still decode, by field, with
	// the length the production held for each (see decodeProgress).
	decodedDisk int64
	decodesLeft map[string]float64
	// rec keeps the main input's pure-Go decode of its first full pass
	// for the passes after it (see recordinput.go).
	rec recorder
	// tempFiles is the temporary disk planned for each output's encoder
	// (production.Work.OutputTemp, see tempLimit).
	tempFiles []int64
	// procFrom is the fraction of Audio Processing done when the
	// processor starts reading (the decodes of the probe's share).
	procFrom float64
	pending  []*fileHandle
	plan     *passPlan
	result   Result

	// normalize is set when the production promises a loudness target;
	// lossy encoders are then level-compensated (see codecgain.go).
	normalize bool
	// settings are the production's algorithms as the DSP's (SettingsOf).
	settings Settings
	// pcmLoudness is the integrated loudness of the audio handed to the
	// encoders, monoLoudness that of its mono mixdown (mono_mixdown
	// outputs); levelFix the extra gain in dB per output that verifyLossy
	// found its decoded file needed.
	pcmLoudness  float64
	monoLoudness float64
	levelFix     map[int]float64

	// ffmpegInputs are the input paths ffmpeg decodes on every open (an
	// external program while a decoder is open), decoded those it
	// decoded once (decodeonce.go); progs the run's plan of external
	// programs and unreserve what gives its slots back.
	ffmpegInputs map[string]bool
	decoded      map[string]*decodedInput
	progs        *programs
	unreserve    func()
	// planned are the outputs planned once: their warnings are given.
	planned map[int]bool
}

// Run processes p from the files in in and writes its outputs to out.
// p must be valid (see Validate). Run sets on p: the input properties
// (format, channels, samplerate, bitrate, has_video), imported metadata
// tags, intro/outro properties, length, cuts, statistics, used_credits,
// every output file's size, size_string and checksum (the parts of an
// output split on chapters in its Parts; see creditsFor for
// used_credits), and the status as it moves: 4 Audio Processing, 5 Audio
// Encoding, 7 Audio Mono Mixdown, 8 Split Audio On Chapter Marks (the
// last two only for outputs that ask for them; 5 to 8 again when the
// lossy verification renders outputs again), then 3 Done. progress (may
// be nil) sees every change.
//
// All files are published together at the end: a failed or cancelled run
// publishes none and leaves the files of an earlier run as they were; a
// successful run replaces them file by file atomically.
//
// On failure p ends in status 2 (Error) with error_status (the status the
// failure happened in) and error_message, and Run returns the error. When
// ctx is cancelled (the production was stopped) Run returns an error
// wrapping ctx.Err() and p goes to 10 (Production Not Started Yet), so it
// can be started again.
func (e *Engine) Run(ctx context.Context, p *production.Production, in Inputs, out OutputWriter, progress ProgressFunc) (*Result, error) {
	r := &run{e: e, p: p, in: in, out: out, progress: progress}
	started := time.Now()
	ctx = procpool.With(ctx, e.Processes)
	// Each input ffmpeg reads is probed once in the run: its decode, the
	// remux of its video and the extraction of its cover share the probe.
	ctx = ffmpeg.WithProbes(ctx, &r.probes)
	err := r.do(ctx)
	r.cleanup(err != nil)
	if r.unreserve != nil {
		r.unreserve()
	}
	log := e.logger()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("production stopped: %w", context.Cause(ctx))
			r.setStatus(production.StatusNotStarted, 0)
		} else {
			p.SetError(r.status, err.Error())
			if r.progress != nil {
				r.progress(production.StatusError, 1)
			}
		}
		log.Info("production failed", "uuid", p.UUID, "status", r.status, "err", err, "elapsed", time.Since(started))
		return nil, err
	}
	r.setStatus(production.StatusDone, 1)
	log.Info("production done", "uuid", p.UUID, "length", p.Length, "files", len(r.result.Files),
		"lossy_reencoded", r.result.LossyReencoded, "lossy_peak_misses", r.result.LossyPeakMisses,
		"lossy_level_misses", r.result.LossyLevelMisses, "elapsed", time.Since(started))
	return &r.result, nil
}

// closeLater has cleanup close src if it holds resources.
// logger is Logger, or slog.Default() when nil.
func (e *Engine) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

func (r *run) closeLater(src audio.Source) {
	if c, ok := src.(io.Closer); ok {
		r.closers = append(r.closers, c)
	}
}

// releaseRender closes the processed sources of the render before
// another one and the decoders it read (the intros' and outros' too,
// which no source closes), so that a second render neither keeps the
// first one's graph (its analysis and plans grow with the programme's
// length) in memory nor its decoders' programs running.
func (r *run) releaseRender() {
	for _, c := range r.closers {
		c.Close()
	}
	r.closers = nil
	for _, d := range r.decoders {
		d.Close()
	}
	clear(r.decoders)
	r.decoders = r.decoders[:0]
}

func (r *run) setStatus(s production.Status, frac float64) {
	r.status = s
	r.p.Status = s
	r.lastFrac = frac
	if r.progress != nil {
		r.progress(s, frac)
	}
}

// report passes a fraction on when it moved by at least 1%.
func (r *run) report(frac float64) {
	frac = min(max(frac, 0), 1)
	if frac-r.lastFrac >= 0.01 {
		r.lastFrac = frac
		if r.progress != nil {
			r.progress(r.status, frac)
		}
	}
}

func (r *run) create(name string, output int, kind fileKind) (*fileHandle, error) {
	fh, err := openHandle(r.out, name, output, kind)
	if err != nil {
		return nil, err
	}
	r.pending = append(r.pending, fh)
	return fh, nil
}

func (r *run) cleanup(failed bool) {
	// Processed sources first: their stages may still read the decoders.
	for _, c := range r.closers {
		c.Close()
	}
	r.closers = nil
	for _, d := range r.decoders {
		d.Close()
	}
	r.decoders = nil
	r.removeDecoded()
	r.rec.removeAll()
	if r.burnDir != "" {
		os.RemoveAll(r.burnDir)
		r.burnDir = ""
	}
	if failed {
		for _, fh := range r.pending {
			fh.pf.Abort()
		}
	}
}

func (r *run) do(ctx context.Context) error {
	p := r.p
	r.setStatus(production.StatusAudioProcessing, 0)
	p.ErrorMessage, p.ErrorStatus = "", nil
	p.ResetWarnings(production.StatusAudioProcessing)
	if !p.IsMultitrack && r.in.Main == "" {
		return ErrNoInput
	}
	if errs := production.Validate(p, production.ValidateOptions{}); errs != nil {
		return errs
	}
	settings, err := SettingsOf(p)
	if err != nil {
		return err
	}
	r.settings, r.normalize = settings, settings.Normalize
	if err := r.probe(ctx); err != nil {
		return err
	}
	if err := r.fitBudget(); err != nil {
		return err
	}
	if p.IsMultitrack {
		r.process = r.mt.process
	} else {
		proc := r.e.Processor
		if proc == nil {
			proc = ChainProcessor{}
		}
		r.process = func(ctx context.Context, job ProcessJob) (*Processed, error) {
			return proc.Process(ctx, r.openMain, job)
		}
	}
	// Everything from here runs in the run's reservation of the process
	// pool: nothing is left open from the probes.
	ctx, release, err := r.reservePrograms(ctx)
	if err != nil {
		return err
	}
	r.unreserve = release
	if err := r.recognize(ctx); err != nil {
		return err
	}
	if r.status == production.StatusAudioProcessing {
		// The processor's passes go on from where the probe's decodes
		// left the bar (recognition, when it ran, started it again).
		r.procFrom = r.lastFrac
	}
	job := ProcessJob{Settings: settings, CutStart: p.CutStart, CutEnd: p.CutEnd, RefineCuts: r.refineCuts(p.SampleRate), TempDir: r.e.TempDir}
	job.SpillBytes = r.spillBytes()
	job.Headroom = lossyHeadroom(p)
	processed, err := r.process(ctx, job)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("audio processing: %w", err)
	}
	r.again = processed.Again
	r.closeLater(processed.Source)
	p.Cuts = processed.Cuts
	src, err := r.withIntroOutro(ctx, processed.Source, job)
	if err != nil {
		return err
	}
	if r.outTranscript, err = r.outputTranscript(p.SampleRate); err != nil {
		return err
	}
	if err := r.burnSubtitles(ctx); err != nil {
		return err
	}
	stats, frames, err := r.encode(ctx, src, processed, job)
	if err != nil {
		return err
	}
	// Neither src nor processed is used from here on: a re-render of the
	// lossy verification must not keep the first render's graph alive.
	f := src.Format()
	src, processed = nil, nil
	if err := r.verifyLossy(ctx, job, f); err != nil {
		return err
	}
	r.result.Frames = frames
	p.Length = float64(frames) / float64(f.SampleRate)
	p.Statistics = stats
	if err := r.sideFiles(ctx); err != nil {
		return err
	}
	return r.publish()
}

// planDecodes notes the inputs the probe may decode, with the lengths the
// production holds for them (see decodeProgress).
func (r *run) planDecodes() {
	p := r.p
	r.decodesLeft = map[string]float64{}
	if !p.IsMultitrack && r.in.Main != "" {
		r.decodesLeft["input_file"] = p.InputLength
	}
	for i, m := range p.MultiInputFiles {
		if p.Reads(m) {
			r.decodesLeft["multi_input_files."+strconv.Itoa(i)] = m.InputLength
		}
	}
}

// probe reads the inputs' properties and tags, and the cover.
func (r *run) probe(ctx context.Context) error {
	p := r.p
	r.planDecodes()
	var credits float64
	if p.IsMultitrack {
		seconds, err := r.probeTracks(ctx)
		if err != nil {
			return err
		}
		credits = seconds
	} else {
		seconds, err := r.probeMain(ctx)
		if err != nil {
			return err
		}
		credits = seconds
	}
	for i := range p.MultiInputFiles {
		m := &p.MultiInputFiles[i]
		if m.Type != production.InputIntro && m.Type != production.InputOutro {
			continue
		}
		path, ok := r.in.Multi[m.ID]
		if !ok {
			return fmt.Errorf("%w for %s %q", ErrNoInput, m.Type, m.ID)
		}
		md, err := r.open(ctx, path, m.Type+" file "+m.ID)
		if err != nil {
			return err
		}
		mi := md.Info()
		m.InputChannels, m.InputSampleRate, m.InputBitrate = md.Format().Channels, md.Format().SampleRate, mi.Bitrate
		m.InputDecoder = r.decoderOf(path, md)
		md.Close()
		m.InputFiletype, m.InputLength = mi.Format, mi.Length
		credits += mi.Length
	}
	p.UsedCredits = creditsFor(credits)
	r.loadChapterImages(p)
	var err error
	r.cover, err = r.loadCover(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A bad cover is not worth failing the audio for.
		p.AddWarning(production.StatusAudioProcessing, "cover image ignored: "+err.Error())
		r.cover = nil
	}
	if r.cover != nil {
		r.result.Cover = r.cover
		thumb, err := artwork.Thumbnail(r.cover.Data, artwork.ThumbnailSize)
		if err != nil {
			p.AddWarning(production.StatusAudioProcessing, "cover image ignored: "+err.Error())
			r.cover, r.result.Cover = nil, nil
		} else {
			r.result.Thumbnail = thumb
		}
	}
	return nil
}

// fitBudget fits the probed production to the engine's Limits (see
// production.FitBudget) at the status it was probed in.
func (r *run) fitBudget() error {
	if err := r.p.FitBudget(r.e.Limits); err != nil {
		return fmt.Errorf("the production needs more than this server allows: %w", err)
	}
	return nil
}

// spillBytes is the ProcessJob's SpillBytes: the chain's default, or
// what Limits.Disk leaves beside the planned work when that is less. The
// decodes count as written when they took more than their probed
// lengths planned (an AAC stream whose length ffprobe estimated).
func (r *run) spillBytes() int64 {
	w := production.PlanWork(r.p)
	left := r.e.Limits.WithDefaults().Disk - max(w.DecodedDisk, r.decodedDisk) - w.OutputDisk
	if left <= 0 {
		return -1
	}
	return min(left, chain.DefaultSpillBytes)
}

// probeMain reads the main input's properties and tags and returns its
// length in seconds.
func (r *run) probeMain(ctx context.Context) (float64, error) {
	p := r.p
	d, err := r.open(ctx, r.in.Main, "input file")
	if err != nil {
		return 0, err
	}
	// Its program, if it has one, must not run beside the render's.
	defer d.Close()
	r.info, r.coverFrom = d.Info(), r.in.Main
	info := r.info
	if info.Format == "" {
		info.Format = info.Container
	}
	p.Format = info.Format
	p.Channels = d.Format().Channels
	p.SampleRate = d.Format().SampleRate
	p.Bitrate = info.Bitrate
	p.HasVideo = info.HasVideo
	p.InputLength = info.Length
	if size, err := r.fileSize(r.in.Main); err == nil {
		p.InputSize = size
	}
	p.InputDecoder = r.decoderOf(r.in.Main, d)
	p.Metadata.ImportTags(info.Tags)
	r.expected = info.Frames
	if r.expected < 0 {
		r.expected = int64(info.Length * float64(p.SampleRate))
	}
	return info.Length, nil
}

// loadChapterImages reads the pictures of Inputs.ChapterImages that a
// chapter uses, each file once. A picture that cannot be used costs its
// chapter the image, with a warning, not the production.
func (r *run) loadChapterImages(p *production.Production) {
	var bad []string
	for _, c := range p.Chapters {
		if c.Image == nil || r.chapterPics[*c.Image] != nil {
			continue
		}
		path, ok := r.in.ChapterImages[*c.Image]
		if !ok {
			continue
		}
		pic, err := r.readPicture(path)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", c.Title, err))
			continue
		}
		if r.chapterPics == nil {
			r.chapterPics = map[string]*audio.Picture{}
		}
		r.chapterPics[*c.Image] = pic
	}
	if len(bad) > 0 {
		p.AddWarning(production.StatusAudioProcessing, "chapter images ignored: "+strings.Join(bad, ", "))
	}
}

// readPicture reads a PNG or JPEG file of at most maxCoverBytes.
func (r *run) readPicture(path string) (*audio.Picture, error) {
	f, err := r.openFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading image: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCoverBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading image: %w", err)
	}
	if len(data) > maxCoverBytes {
		return nil, fmt.Errorf("%w: image larger than %d MB", artwork.ErrImage, maxCoverBytes>>20)
	}
	mime, err := artwork.ImageType(data)
	if err != nil {
		return nil, err
	}
	return &audio.Picture{MIMEType: mime, Data: data, Size: len(data)}, nil
}

// loadCover returns the cover from Inputs.Cover or embedded in the input.
func (r *run) loadCover(ctx context.Context) (*audio.Picture, error) {
	if r.in.Cover != "" {
		return r.readPicture(r.in.Cover)
	}
	c := r.info.Tags.Cover
	if c == nil {
		return nil, nil
	}
	if len(c.Data) == 0 {
		pic, err := ffmpeg.ExtractCoverFile(ctx, r.coverFrom)
		if errors.Is(err, ffmpeg.ErrNoCover) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("extracting the input's cover: %w", err)
		}
		c = pic
	}
	mime, err := artwork.ImageType(c.Data)
	if err != nil {
		return nil, err
	}
	return &audio.Picture{MIMEType: mime, Data: c.Data, Size: len(c.Data)}, nil
}

// open decodes a file; what names it in error messages, so they never
// show server paths.
func (r *run) open(ctx context.Context, path, what string) (audio.Decoder, error) {
	f, err := r.openFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var opts []audio.DecodeOption
	if r.e.MaxDuration > 0 {
		opts = append(opts, audio.WithMaxDuration(r.e.MaxDuration))
	}
	// The run's probes, also where a test calls open alone.
	ctx = ffmpeg.WithProbes(ctx, &r.probes)
	di := r.decoded[path]
	if di == nil {
		di = r.rec.done(path)
	}
	if di != nil {
		f.Close()
		d, err := r.openDecoded(ctx, di, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		r.decoders = append(r.decoders, d)
		return d, nil
	}
	d, err := audio.Decode(ctx, f, opts...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if audio.CodecOf(d) == "ffmpeg" {
		if decodeOnce(d.Info()) {
			// See decodeonce.go: this open is the input's only decode.
			di, err := r.decodeToFile(ctx, d, r.inputField(path))
			d.Close()
			f.Close()
			if errors.Is(err, production.ErrInvalid) {
				return nil, err // the disk limit's, which names the input
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			if r.decoded == nil {
				r.decoded = map[string]*decodedInput{}
			}
			r.decoded[path] = di
			return r.open(ctx, path, what)
		}
		if r.ffmpegInputs == nil {
			r.ffmpegInputs = map[string]bool{}
		}
		r.ffmpegInputs[path] = true
	}
	fd := &closingDecoder{Decoder: d, f: f}
	r.decoders = append(r.decoders, fd)
	return fd, nil
}

// openMain is the Opener handed to the Processor: a fresh decoder of the
// main input, reporting progress while the processor reads it.
func (r *run) openMain(ctx context.Context) (audio.Source, error) {
	d, err := r.open(ctx, r.in.Main, "input file")
	if err != nil {
		return nil, err
	}
	d = r.recordMain(ctx, d)
	return &progressSource{Source: d, progress: r.readProgress}, nil
}

// openFile opens an input file: in Inputs.FS when there is one.
func (r *run) openFile(path string) (io.ReadCloser, error) {
	if r.in.FS != nil {
		return r.in.FS.Open(path)
	}
	return os.Open(path)
}

// decoderOf names the codec that decodes the input at path, of which d
// is an open (see production.Production.InputDecoder): "ffmpeg" for one
// ffmpeg decodes, once or on every pass, else d's.
func (r *run) decoderOf(path string, d audio.Decoder) string {
	if r.decoded[path] != nil || r.ffmpegInputs[path] {
		return "ffmpeg"
	}
	if cd, ok := d.(*closingDecoder); ok {
		d = cd.Decoder
	}
	return audio.CodecOf(d)
}

// fileSize returns the size in bytes of an input file: in Inputs.FS when
// there is one.
func (r *run) fileSize(path string) (int64, error) {
	stat := os.Stat
	if r.in.FS != nil {
		stat = func(name string) (fs.FileInfo, error) { return fs.Stat(r.in.FS, name) }
	}
	fi, err := stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

type closingDecoder struct {
	audio.Decoder
	f      io.Closer
	closed bool
}

func (d *closingDecoder) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	err := d.Decoder.Close()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// progressSource counts the frames read from its source and hands the
// count to progress after every read: the processor's reads of the input
// (readProgress) and the probe's decodes (decodeProgress) move the bar
// this way.
type progressSource struct {
	audio.Source
	frames   int64
	progress func(frames int64)
}

// Close closes the source read, when it holds resources.
func (s *progressSource) Close() error {
	if c, ok := s.Source.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Info is the decoder's, so that the processor sees the input's length
// (the chain sizes its analysis by it).
func (s *progressSource) Info() audio.Info {
	if d, ok := s.Source.(audio.Decoder); ok {
		return d.Info()
	}
	return audio.Info{Frames: -1}
}

func (s *progressSource) Read(dst audio.Buffer) (int, error) {
	n, err := s.Source.Read(dst)
	s.frames += int64(n)
	s.progress(s.frames)
	return n, err
}

// readProgress reports the fraction of the input read while the status
// is Audio Processing (after the probe's decodes' share, procFrom) or
// Speech Recognition.
func (r *run) readProgress(frames int64) {
	if st := r.status; (st == production.StatusAudioProcessing || st == production.StatusSpeechRecognition) && r.expected > 0 {
		frac := float64(frames) / float64(r.expected)
		if st == production.StatusAudioProcessing {
			frac = r.procFrom + (1-r.procFrom)*frac
		}
		r.report(frac)
	}
}

// encode runs the single pass over the processed audio: every encoder, the
// waveform and the output loudness meter are sinks of one tee. When the
// outputs need more external programs at once than the run reserved (see
// programs.go), the first pass encodes the first batch of them and the
// programme is rendered again for each further batch.
func (r *run) encode(ctx context.Context, src audio.Source, processed *Processed, job ProcessJob) (production.Statistics, int64, error) {
	f := src.Format()
	r.setStatus(production.StatusAudioEncoding, 0)
	var first map[int]bool // nil: every output in this pass
	if len(r.progs.batches) > 1 {
		first = setOf(r.progs.batches[0])
	}
	plan, err := r.planOutputs(ctx, f, r.outputLength(f), first)
	if err != nil {
		abortPass(plan)
		return production.Statistics{}, 0, err
	}
	wave := artwork.NewWaveform(f.SampleRate, artwork.WaveformWidth)
	sinks := []audio.Sink{wave}
	measured := processed.Measured
	if measured == nil || src != processed.Source { // intros or outros added
		meter, err := loudness.NewMeter(f, loudness.Options{Mode: loudness.ModeEBU, DualMono: r.settings.Chain.DualMono && f.Channels == 1})
		if err != nil {
			abortPass(plan)
			return production.Statistics{}, 0, err
		}
		sinks = append(sinks, meter)
		measured = meter.Result
	}
	frames, err := r.pass(ctx, src, append(sinks, plan.sinks...), plan)
	if err != nil {
		return production.Statistics{}, 0, err
	}
	out := measured()
	r.plan = plan
	if plan.monoMeter != nil {
		r.monoLoudness = plan.monoMeter.Result().Integrated
	}
	png, err := wave.PNG(artwork.WaveformWidth, artwork.WaveformHeight)
	if err != nil {
		return production.Statistics{}, 0, err
	}
	r.result.Waveform = png
	r.pcmLoudness = out.Integrated
	st, ps := processed.statistics(out, string(r.settings.Chain.Method))
	if len(ps.Warnings) > 0 {
		r.p.AddWarning(production.StatusAudioProcessing, joinWarnings(ps.Warnings))
	}
	if len(ps.InputSteps) > 0 || len(ps.OutputSteps) > 0 {
		chart, err := artwork.LoudnessChart(ps.InputSteps, ps.OutputSteps, r.settings.Chain.TargetLUFS, artwork.ChartWidth, artwork.ChartHeight)
		if err != nil {
			return production.Statistics{}, 0, err
		}
		r.result.LoudnessChart = chart
	}
	for _, b := range r.progs.batches[1:] {
		more, err := r.renderAgain(ctx, job, f, setOf(b))
		if err != nil {
			return production.Statistics{}, 0, err
		}
		r.plan.files = append(r.plan.files, more.files...)
		if r.plan.monoMeter == nil && more.monoMeter != nil {
			r.plan.monoMeter = more.monoMeter
			r.monoLoudness = more.monoMeter.Result().Integrated
		}
	}
	return st, frames, nil
}

// renderAgain renders the programme once more and encodes the outputs of
// only (in one pass: they fit the run's reservation) from it, for a
// batch of outputs or the lossy verification.
func (r *run) renderAgain(ctx context.Context, job ProcessJob, f audio.Format, only map[int]bool) (*passPlan, error) {
	r.releaseRender()
	process := r.process
	if r.again != nil {
		process = r.again
	}
	processed, err := process(ctx, job)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("audio processing: %w", err)
	}
	if processed.Again != nil {
		r.again = processed.Again
	}
	r.closeLater(processed.Source)
	src, err := r.withIntroOutro(ctx, processed.Source, job)
	if err != nil {
		return nil, err
	}
	plan, err := r.planOutputs(ctx, f, r.outputLength(f), only)
	if err != nil {
		abortPass(plan)
		return nil, err
	}
	if _, err := r.pass(ctx, src, plan.sinks, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// outputLength is the expected output duration, or 0 when it is not
// known exactly enough to announce in headers (cuts, estimated inputs).
func (r *run) outputLength(f audio.Format) time.Duration {
	if r.info.Frames < 0 || len(r.p.Cuts) > 0 {
		return 0
	}
	total := r.expected + r.introOutroFrames()
	return time.Duration(float64(total) / float64(f.SampleRate) * float64(time.Second))
}

// pass copies src into the sinks, reporting progress, and finishes the
// plan's files. On error every encoder is closed.
func (r *run) pass(ctx context.Context, src audio.Source, sinks []audio.Sink, plan *passPlan) (int64, error) {
	f := src.Format()
	if runtime.GOMAXPROCS(0) > 1 {
		// Render in one goroutine, encode in this one.
		pre := audio.Prefetch(ctx, src, 4)
		defer pre.Close()
		src = pre
	}
	tee := audio.MultiSink(sinks...)
	buf := audio.NewBuffer(f.Channels, audio.DefaultBlock)
	view := make(audio.Buffer, f.Channels)
	expected := r.expected + r.introOutroFrames()
	var frames int64
	for {
		if err := ctx.Err(); err != nil {
			abortPass(plan)
			return 0, err
		}
		n, rerr := src.Read(buf)
		if n > 0 {
			if err := tee.Write(buf.SliceInto(view, 0, n)); err != nil {
				abortPass(plan)
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				return 0, fmt.Errorf("encoding: %w", err)
			}
			frames += int64(n)
			if expected > 0 {
				r.report(float64(frames) / float64(expected))
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			abortPass(plan)
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, fmt.Errorf("audio processing: %w", rerr)
		}
	}
	if frames == 0 {
		abortPass(plan)
		return 0, fmt.Errorf("%w: input file has no audio", audio.ErrMalformed)
	}
	if err := plan.drain(); err != nil {
		abortPass(plan)
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("encoding: %w", err)
	}
	if err := r.finishPass(plan); err != nil {
		abortPass(plan)
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	// The queues (0.5 MB per stereo output) fed encoders that are
	// finished: a re-render of the lossy verification must not keep them.
	plan.sinks, plan.queues = nil, nil
	return frames, nil
}

// Lossy verification (DESIGN step 6): decoders of lossy formats overshoot
// the true peak of the PCM they were given. The render keeps the headroom
// the codec table predicts for the production's lossy outputs (see
// codecgain.go), and every lossy output file is decoded again while it is
// encoded (EncodeOptions.Monitor) and measured; outputs whose decoded
// true peak still exceeds maxpeak by more than lossyTolerance are
// rendered again, in one more pass for all of them, with the limiter's
// lossy headroom raised by the worst overshoot, up to lossyAttempts
// times; what still overshoots then is reported as a warning. The same
// measurement checks the level: a main file whose integrated loudness is
// more than lossyLevelTolerance from the PCM's (a mono mixdown's: its mono
// PCM's), after the table's compensation, is rendered again with the
// difference added to that output's gain; chapter parts follow their
// output's fix. The status is Audio Encoding again while outputs are
// rendered again; Result.LossyReencoded counts the files encoded again.
// Files of an encoder without a monitor that an OutputWriter cannot read
// back (no File method) are not verified.
const (
	lossyTolerance      = 0.15
	lossyLevelTolerance = 0.2
	lossyAttempts       = 3
)

func (r *run) verifyLossy(ctx context.Context, job ProcessJob, f audio.Format) error {
	if !r.normalize {
		return nil
	}
	promise := job.Settings.Chain.MaxTruePeak
	headroom := job.Headroom
	plan := r.plan
	peakMiss, levelMiss := map[int]bool{}, map[int]bool{}
	defer func() { r.result.LossyPeakMisses, r.result.LossyLevelMisses = len(peakMiss), len(levelMiss) }()
	for attempt := 0; ; attempt++ {
		redo := map[int]bool{}
		worst := 0.0
		var worstName string
		for _, ef := range plan.files {
			got, ok, err := ef.encodedLoudness(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("re-measuring output %s: %w", ef.fh.name, err)
			}
			if !ok {
				continue
			}
			// Only a whole file holds the programme at the level the meter
			// saw; chapter parts follow its fix.
			ref := r.pcmLoudness
			if ef.mono {
				ref = r.monoLoudness
			}
			if drift := got.Integrated - ref; ef.fh.kind == kindMain && math.Abs(drift) > lossyLevelTolerance &&
				!math.IsInf(drift, 0) && !math.IsNaN(drift) {
				if r.levelFix == nil {
					r.levelFix = map[int]float64{}
				}
				r.levelFix[ef.output] -= drift
				redo[ef.output] = true
				if attempt == 0 {
					levelMiss[ef.output] = true
				}
				if worstName == "" {
					worstName = ef.fh.name
				}
			}
			if over := got.TruePeak - promise; over > lossyTolerance {
				redo[ef.output] = true
				if attempt == 0 {
					peakMiss[ef.output] = true
				}
				if over > worst {
					worst, worstName = over, ef.fh.name
				}
			}
		}
		if len(redo) == 0 {
			return nil
		}
		if attempt == lossyAttempts {
			msg := fmt.Sprintf("maxpeak %.1f dBTP not met after lossy encoding: %s decodes %.2f dB above it", promise, worstName, worst)
			if worst == 0 {
				msg = fmt.Sprintf("lossy encoding changed the loudness of %s by more than %.1f LU", worstName, lossyLevelTolerance)
			}
			r.p.AddWarning(production.StatusAudioEncoding, msg)
			return nil
		}
		r.result.LossyPasses++
		r.result.LossyReencoded += len(redo)
		r.e.logger().Info("re-rendering lossy outputs", "uuid", r.p.UUID, "attempt", attempt+1, "outputs", len(redo),
			"worst", worstName, "overshoot_db", round2(worst), "level_fix_db", r.levelFix)
		if worst > 0 {
			headroom += worst + 0.1
			job.Headroom = headroom
		}
		r.setStatus(production.StatusAudioEncoding, 0)
		r.dropOutputs(redo)
		// The outputs to encode again may need more programs than one
		// pass of the reservation runs: as many renders as it takes.
		plan = &passPlan{}
		for _, only := range r.passes(redo) {
			more, err := r.renderAgain(ctx, job, f, only)
			if err != nil {
				return err
			}
			plan.files = append(plan.files, more.files...)
		}
	}
}

// dropOutputs aborts the files of the given outputs written so far.
func (r *run) dropOutputs(outputs map[int]bool) {
	kept := r.pending[:0]
	for _, fh := range r.pending {
		if outputs[fh.output] {
			fh.pf.Abort()
			continue
		}
		kept = append(kept, fh)
	}
	r.pending = kept
}

// encodedLoudness returns the true peak and integrated loudness of a
// verified file's encoded audio (ok false for a file that is not
// verified): what its encoder's monitor measured, or, for an encoder
// without a monitor, what decoding the finished file measures.
func (ef *encodedFile) encodedLoudness(ctx context.Context) (res loudness.Result, ok bool, err error) {
	if ef.meter == nil {
		return res, false, nil
	}
	if res = ef.meter.Result(); res.Frames > 0 {
		return res, true, nil
	}
	if ef.fh.ra == nil {
		return res, false, nil
	}
	res, err = decodedLoudness(ctx, ef.fh)
	return res, err == nil, err
}

// decodedLoudness decodes a finished file and measures its true peak and
// integrated loudness.
func decodedLoudness(ctx context.Context, fh *fileHandle) (loudness.Result, error) {
	// Only the samples count, not the output's Info: without the run's
	// memo of probes an ffmpeg format costs one program, not ffprobe too.
	ctx = ffmpeg.WithProbes(ctx, nil)
	d, err := audio.Decode(ctx, io.NewSectionReader(fh.ra, 0, fh.size))
	if err != nil {
		return loudness.Result{}, err
	}
	defer d.Close()
	return loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeTruePeak | loudness.ModeI})
}

// publish commits every file, fills the output files' size and checksum
// (see fillOutputFields) and lists the files in the Result.
func (r *run) publish() error {
	for _, fh := range r.pending {
		if err := fh.pf.Close(); err != nil {
			return err
		}
	}
	r.fillOutputFields()
	files := slices.Clone(r.pending)
	slices.SortStableFunc(files, func(a, b *fileHandle) int { return a.output - b.output })
	for _, fh := range files {
		r.result.Files = append(r.result.Files, WrittenFile{Name: fh.name, Output: fh.output, Size: fh.size, MD5: fh.sum})
	}
	return nil
}
