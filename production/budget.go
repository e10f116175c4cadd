package production

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The work a production asks for is bounded twice. Requests are checked
// against fixed caps (the constants below, stated in the OpenAPI document)
// when they are applied, productions and presets alike. Once the inputs
// are probed, the work the engine would do (Work, from PlanWork) is checked
// against a Budget that follows from the inputs' length and the server's
// Limits: FitBudget does that when a production is saved, Service.Start
// when it is started and the engine once more before it encodes anything,
// so a production that would outgrow its input is a form error, never a
// surprise in the worker.

// Caps on the lists and numbers of one request, whatever the input.
const (
	// MaxChapters bounds the chapters of a production.
	MaxChapters = 1000
	// MaxOutputFiles bounds the output files of a production or preset.
	MaxOutputFiles = 32
	// MaxMultiInputFiles bounds the tracks, intros and outros together.
	MaxMultiInputFiles = 32
	// MaxSegments bounds the denoise segments of an algorithms object.
	MaxSegments = 1000
	// MaxOffset is the largest offset of a multi_input_files entry, in
	// seconds (a day); the Budget bounds it further by the inputs' length.
	MaxOffset = 86400
	// MaxSegmentSeconds bounds the start and stop of a denoise segment,
	// as MaxTimestampSeconds bounds chapter starts.
	MaxSegmentSeconds = MaxTimestampSeconds
	// MaxChapterImageBytes bounds one chapter image: a player shows it at
	// a few hundred pixels, and the engine holds every one in memory.
	MaxChapterImageBytes = 8 << 20
)

// Limits are the server-wide bounds of the work one production may ask
// for beyond the fixed caps. The zero value of a field means its default
// (DefaultLimits); a negative one is taken as the default too.
type Limits struct {
	// Parts bounds the files one output split on chapters writes.
	Parts int
	// PartSeconds is how much input each split part needs: an output is
	// split into at most 1 + length/PartSeconds parts, so a short input
	// cannot fan out into hundreds of encoders.
	PartSeconds float64
	// Files bounds the files one production writes, parts included.
	Files int
	// Processes bounds the external processes (encoders, the decoders
	// that verify lossy files, decoders of inputs ffmpeg reads) one
	// run starts over its course; ProcessesPerSecond of input are
	// allowed on top of BaseProcesses up to that bound.
	Processes          int
	ProcessesPerSecond float64
	// Memory bounds the planned peak memory of one run in bytes (see
	// Work.Memory), external processes included.
	Memory int64
	// Silence is how many seconds longer than its inputs together a
	// programme may be: offsets that place tracks apart add silence, which
	// costs processing time as audio does.
	Silence float64
	// Disk bounds the planned peak of temporary disk of one run in bytes
	// (see Work.Disk): inputs ffmpeg decodes, which are kept as 32-bit
	// floats for the whole run, and the temporary files of encoders and
	// multitrack tracks. A run that would need more fails before it
	// writes any of it, never with a full disk halfway; one whose plan
	// was wrong (a length the probe got wrong) fails when a decode or an
	// encoder's files outgrow their part of it (Work.OutputTemp). What
	// the plan leaves free may hold an MP3 or FLAC main input decoded
	// once (production/engine's recordinput.go), which is not planned.
	Disk int64
}

// Defaults of Limits.
const (
	DefaultParts              = 500
	DefaultPartSeconds        = 1.0
	DefaultFiles              = 1000
	DefaultProcesses          = 5000
	DefaultProcessesPerSecond = 8.0
	DefaultMemory             = 1 << 30
	DefaultSilence            = 600.0
	// DefaultDisk is generous on purpose: the largest temporary file is
	// a decoded input, 1.4 GB per hour of 48 kHz stereo, so 8 GiB holds
	// a two-hour Opus or AAC programme (2.8 GB) with room for the
	// temporary files of several lossy and ALAC outputs, yet stops an
	// eight-hour 96 kHz multichannel upload (tens of GB) from filling a
	// server's temporary disk.
	DefaultDisk = 8 << 30
	// BaseProcesses are the external processes any production may start,
	// whatever its length.
	BaseProcesses = 200
)

// DefaultLimits returns the limits a server uses unless configured.
func DefaultLimits() Limits {
	return Limits{Parts: DefaultParts, PartSeconds: DefaultPartSeconds, Files: DefaultFiles,
		Processes: DefaultProcesses, ProcessesPerSecond: DefaultProcessesPerSecond,
		Memory: DefaultMemory, Silence: DefaultSilence, Disk: DefaultDisk}
}

// WithDefaults returns l with every unset field at its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.Parts <= 0 {
		l.Parts = d.Parts
	}
	if !(l.PartSeconds > 0) || math.IsInf(l.PartSeconds, 0) {
		l.PartSeconds = d.PartSeconds
	}
	if l.Files <= 0 {
		l.Files = d.Files
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if !(l.ProcessesPerSecond > 0) || math.IsInf(l.ProcessesPerSecond, 0) {
		l.ProcessesPerSecond = d.ProcessesPerSecond
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if !(l.Silence > 0) || math.IsInf(l.Silence, 0) {
		l.Silence = d.Silence
	}
	if l.Disk <= 0 {
		l.Disk = d.Disk
	}
	return l
}

// Budget is what one production may use, from its inputs' length and the
// Limits. It is only meaningful when Known.
type Budget struct {
	// Known is false while an input of the production has no probed
	// length yet (not uploaded, or stored before lengths were kept): the
	// budget is checked again when it has one.
	Known bool
	// Timeline is the length in seconds chapters are placed on: the main
	// input, or a multitrack production's mix.
	Timeline float64
	// Inputs is the length of every input together, in seconds.
	Inputs float64
	// Duration is the longest programme, in seconds.
	Duration float64
	// Parts bounds the parts of one split output.
	Parts int
	// Files, Processes, Memory and Disk bound Work's.
	Files     int
	Processes int
	Memory    int64
	Disk      int64
}

// Work is what processing a production would take, as PlanWork plans it:
// upper bounds, not predictions.
type Work struct {
	// Duration is the programme's length in seconds: the main input or
	// the mix, intros and outros (less their overlaps) included.
	Duration float64
	// Tracks are the multitrack tracks with a file.
	Tracks int
	// Outputs are the output files asked for; Parts the most parts one
	// split output writes (1 when none is split).
	Outputs int
	Parts   int
	// Files are the files written, parts and the waveform and loudness
	// images included.
	Files int
	// Processes are the external processes started over the run: an
	// encoder per file of a format ffmpeg encodes, the decoder that
	// verifies a lossy file, the pass that writes chapters into it,
	// twice for lossy files (the verification may encode them again),
	// and for each input ffmpeg reads its probe and decoder, once per
	// pass for deep lossless inputs (see streamedInputs) and once in all
	// for the others.
	Processes int
	// Concurrent are the external processes running at once at most: in
	// the encoding pass every output's encoder and verifier run, and the
	// decoders of two passes of each deep lossless input ffmpeg reads
	// (the other inputs were decoded before).
	Concurrent int
	// Memory is the planned peak memory in bytes: the engine, each
	// track's analysis, each concurrent external process and the chapter
	// images.
	Memory int64
	// Disk is the planned peak of temporary disk in bytes, DecodedDisk
	// and OutputDisk together.
	Disk int64
	// DecodedDisk is what the inputs ffmpeg decodes take as 32-bit float
	// WAV files for the whole run (production/engine's decodeonce.go): 4
	// bytes per sample of their probed length, channels and sample rate.
	// DecodedInputs has it per input, keyed by the field that names it
	// ("input_file", "multi_input_files.N").
	DecodedDisk   int64
	DecodedInputs map[string]int64
	// OutputDisk is what the encoders' temporary files take while the
	// outputs are encoded, wherever the encoder makes them (the
	// Engine's TempDir, or beside an output written to a local file):
	// for each output ffmpeg encodes into a seekable or tagged file,
	// twice the largest file it can be (the file and its copy with tags
	// and chapters), and for a multitrack "tracks" output its largest
	// track as 32-bit samples (the tracks are written one at a time).
	OutputDisk int64
	// OutputTemp is, by index in OutputFiles, the part of OutputDisk
	// planned for each output's encoder, its temporary files together
	// (0 for an output that makes none): the engine holds each encoder to
	// it (audio.EncodeOptions.TempLimit), and the video a "video" output
	// burns subtitles into as well, so that one writing more than planned
	// fails the run instead of taking disk the plan gave others.
	OutputTemp []int64
}

// Figures of the memory plan, measured on this project's benchmarks and
// ffmpeg 7 (anonymous memory; the libraries are shared between processes):
// the engine stays within 64 MB whatever the input's length
// (BenchmarkEngineLongRSS), a multitrack track's analysis and gain plans
// take a few MB plus about 12 MB per hour (dsp/mixdown: three one-hour
// tracks in 70 MB), an audio encoder or decoder 12 MB, a video encoder
// (libx264 at 1280x720) 210 MB.
//
// The noise reduction's analysis pass keeps the room model's band levels
// of every 10 ms of its input (dsp/spectral's rt60Estimator: octaves for
// the fit, third octaves for its babble check, 14.4 MB an hour), which
// the engine's 64 MB do not hold: roomMemoryPerHour for each input it
// analyses (the main input, or each multitrack track) with denoise on.
//
// Where that pass finds a room, the reverb reduction's WPE stage
// (dsp/spectral's wpe.go) holds a block of every channel's input in a
// delay line, in proportion to the rate, and the bins under 5 kHz over a
// block and the change it makes to them, per channel, and its
// statistics, about the same at any rate: on the 8 s blocks it takes
// where the room model puts the reverberation as strong as the direct
// sound (wpeBlockLow), at 48 kHz 3.1 MB and 5.3 MB a channel (5.3 at
// any rate from 16 to 96 kHz) and 5.0 MB for the stage (5.2 at 44.1 and
// 96 kHz): a stereo 48 kHz input 21.7 MB. BenchmarkNodes/
// dynamic-deverb-room (20 s, stereo, 48 kHz) allocates 27.5 MB against
// 13.3 MB on the 2 s blocks it takes elsewhere, and its process's peak
// RSS is 78 MB against 52 (three runs each of -benchtime=3x under
// /usr/bin/time; the stage kept two blocks of full spectra before, 65.4
// and 22.7 MB allocated, 161 and 68 MB of RSS). reverbMemory bounds that
// for each input with denoise on (whether a room is found is known only
// after the analysis): 16 stereo 48 kHz one-hour multitrack tracks with
// denoise on plan 1008 MB, under the default 1 GB (1584 MB on the full
// spectra).
const (
	engineMemory        = 64 << 20
	trackMemory         = 8 << 20
	trackMemoryPerHour  = 12 << 20
	roomMemoryPerHour   = 15 << 20
	reverbLineMemory    = 3 << 20 // a channel's delay line at 48 kHz
	reverbChannelMemory = 6 << 20 // a channel's low bins over a block and their change
	reverbStageMemory   = 6 << 20
	processMemory       = 16 << 20
	videoProcessMemory  = 256 << 20
)

// reverbMemory is what the reverb reduction may hold for an input of
// channels x rate (stereo and 48 kHz where the probe did not say).
func reverbMemory(channels, rate int) int64 {
	if channels <= 0 {
		channels = unknownChannels
	}
	if rate <= 0 {
		rate = unknownRate
	}
	return bytesOf(float64(channels)*(reverbLineMemory*float64(rate)/48000+reverbChannelMemory) + reverbStageMemory)
}

// nativeInputs are the input formats the engine decodes without ffmpeg,
// unless the probe found otherwise (see readByFFmpeg).
var nativeInputs = []string{"wav", "flac", "mp3"}

// inputPasses is how often an input is decoded in one run at most: probe,
// analysis, loudness pass, render, the verification's render and the cover.
const inputPasses = 6

// streamedInputs are the input formats ffmpeg decodes that may hold
// samples deeper than 24 bits, which the engine decodes again on every
// pass (inputPasses); it probes and decodes every other input ffmpeg
// reads once per run, into 32-bit floats (production/engine's
// decodeonce.go). "wma" names lossless WMA too.
var streamedInputs = []string{"alac", "aiff", "wavpack", "tta", "ape", "wma"}

// readByFFmpeg reports whether the engine decodes an input of format
// with ffmpeg: as decoder, the codec its probe found, says (see
// Production.InputDecoder), or by the format's name when that is not
// known.
func readByFFmpeg(format, decoder string) bool {
	if decoder != "" {
		return decoder == "ffmpeg"
	}
	return !slices.Contains(nativeInputs, format)
}

// inputProcesses returns the processes a run starts for an input of
// format that decoder reads, and how many of them run during the
// encoding pass.
func inputProcesses(format, decoder string) (processes, concurrent int) {
	switch {
	case !readByFFmpeg(format, decoder):
		return 0, 0
	case slices.Contains(streamedInputs, format), format != "mp3" && slices.Contains(nativeInputs, format):
		// PCM or FLAC that ffmpeg reads may be deeper than 24 bits too
		// (the probe's bit depth is not kept): counted as streamed, and
		// as decoded once by planDisk, both upper bounds.
		return inputPasses, 2
	}
	return 2, 0 // its probe and its one decode, before the passes
}

// timeline returns the length chapters are placed on and whether it is
// known: the main input's, or the mix's (see trackEnds).
func (p *Production) timeline() (float64, bool) {
	if !p.IsMultitrack {
		return p.InputLength, p.InputFile != "" && p.InputLength > 0
	}
	var mix float64
	n, known := 0, true
	for _, end := range p.trackEnds() {
		n++
		if end < 0 {
			known = false
			continue
		}
		mix = max(mix, end)
	}
	return mix, known && n > 0
}

// trackEnds returns where each multitrack track with a file ends in the
// mix, in seconds, by its index in MultiInputFiles (-1 while its length is
// unknown), as dsp/mixdown places them: a track at its offset for its
// length; a looped or trimmed one up to the reference, the end of the last
// track that is not (of any track when all are), or at its offset when
// that is later, since the mix lasts until every track's start.
func (p *Production) trackEnds() map[int]float64 {
	ends := map[int]float64{}
	var ref, all float64
	for i, m := range p.MultiInputFiles {
		if m.Type != InputMultitrack || m.InputFile == "" {
			continue
		}
		if !(m.InputLength > 0) {
			ends[i] = -1
			continue
		}
		end := m.Offset + m.InputLength
		ends[i] = end
		all = max(all, end)
		if !m.Algorithms.In(ScopeTrack).Bool("loop_trim") {
			ref = max(ref, end)
		}
	}
	if ref == 0 {
		ref = all
	}
	for i, end := range ends {
		if end >= 0 && p.MultiInputFiles[i].Algorithms.In(ScopeTrack).Bool("loop_trim") {
			ends[i] = max(ref, p.MultiInputFiles[i].Offset)
		}
	}
	return ends
}

// lengths returns the timeline, the inputs' total, the programme's
// duration and whether all are known.
func (p *Production) lengths() (timeline, inputs, duration float64, known bool) {
	timeline, known = p.timeline()
	duration = timeline
	if p.IsMultitrack {
		for _, m := range p.MultiInputFiles {
			if m.Type == InputMultitrack && m.InputFile != "" {
				inputs += m.InputLength
			}
		}
	} else {
		inputs = timeline
	}
	for _, m := range p.MultiInputFiles {
		if (m.Type != InputIntro && m.Type != InputOutro) || m.InputFile == "" {
			continue
		}
		if !(m.InputLength > 0) {
			known = false
			continue
		}
		inputs += m.InputLength
		duration += math.Max(0, m.InputLength-m.Offset)
	}
	return timeline, inputs, duration, known
}

// Budget returns what p may use under l.
func (l Limits) Budget(p *Production) Budget {
	l = l.WithDefaults()
	timeline, inputs, _, known := p.lengths()
	b := Budget{Known: known, Timeline: timeline, Inputs: inputs, Duration: inputs + l.Silence,
		Files: l.Files, Memory: l.Memory, Disk: l.Disk}
	b.Parts = l.Parts
	if parts := 1 + math.Floor(timeline/l.PartSeconds); parts < float64(b.Parts) {
		b.Parts = int(parts)
	}
	b.Processes = l.Processes
	if procs := BaseProcesses + math.Floor(timeline*l.ProcessesPerSecond); procs < float64(b.Processes) {
		b.Processes = int(procs)
	}
	return b
}

// Reads reports whether processing p reads the multi_input_files entry m:
// one with a file, and a multitrack track only in a multitrack production.
func (p *Production) Reads(m MultiInputFile) bool {
	return m.InputFile != "" && (m.Type != InputMultitrack || p.IsMultitrack)
}

// PlanWork plans the work processing p would take (see Work). It reads
// the probed lengths and formats of the inputs; unknown ones count as 0.
func PlanWork(p *Production) Work {
	_, _, duration, _ := p.lengths()
	w := Work{Duration: duration, Outputs: len(p.OutputFiles), Parts: 1}
	var inputs, decoders int // the inputs' processes, and those running while encoding
	if !p.IsMultitrack && p.InputFile != "" {
		inputs, decoders = inputProcesses(p.Format, p.InputDecoder)
	}
	for _, m := range p.MultiInputFiles {
		if !p.Reads(m) {
			continue
		}
		if m.Type == InputMultitrack {
			w.Tracks++
		}
		n, c := inputProcesses(m.InputFiletype, m.InputDecoder)
		inputs, decoders = inputs+n, decoders+c
	}
	normalize := p.Normalizes()
	chapters := len(p.Chapters)
	var memory int64 = engineMemory
	for _, o := range p.OutputFiles {
		f, ok := LookupFormat(o.Format)
		if !ok {
			continue
		}
		files := 1
		if o.SplitOnChapters && chapters > 0 && f.Type != TypeDescription && !(f.Name == "video" && p.HasVideo) {
			files = chapters
			w.Parts = max(w.Parts, files)
		}
		w.Files += files
		perFile, running := 0, 0
		switch {
		case f.Lossy():
			perFile, running = 1, 1
			if normalize {
				perFile, running = 2, 2
			}
			if files == 1 && chapters > 0 {
				perFile++ // chapters written after the encoder
			}
			perFile *= 2 // the verification may encode the file again
		case f.Name == "alac":
			perFile, running = 1, 1
			if chapters > 0 {
				perFile++
			}
		case f.Type == TypeVideo:
			perFile, running = 1, 1
			if o.Subtitles != nil && o.Subtitles.Enabled {
				perFile += 3 // burning the subtitles in: probe, fonts, render
			}
			memory += int64(running) * videoProcessMemory
			running = 0
		}
		w.Processes += files * perFile
		w.Concurrent += running
	}
	w.Files += 2 // waveform and loudness images
	if p.SpeechRecognition != nil {
		w.Processes += 2 // a recognizer and its decoder
	}
	w.Processes += inputs
	// A pass's decoder may live on until the next pass has opened its own.
	w.Concurrent += decoders
	memory += int64(w.Concurrent) * processMemory
	hours := duration / 3600
	memory += int64(w.Tracks) * (trackMemory + int64(hours*trackMemoryPerHour))
	p.measuredRooms(func(channels, rate int) {
		memory += int64(hours*roomMemoryPerHour) + reverbMemory(channels, rate)
	})
	images := map[string]bool{}
	for _, c := range p.Chapters {
		if c.Image != nil && *c.Image != "" {
			images[*c.Image] = true
		}
	}
	memory += int64(len(images)) * MaxChapterImageBytes
	w.Memory = memory
	planDisk(p, &w, len(images))
	return w
}

// Figures of the disk plan. They bound, rather than estimate, what the
// files can take, except audiogramBitsPerSecond (see there).
const (
	// decodedSampleBytes is a sample of a decoded input or of an output
	// that is not compressed (ALAC, a multitrack track's 24-bit WAV or
	// FLAC: lossless coders store a sample they cannot compress in about
	// its own width, never more than 32 bits).
	decodedSampleBytes = 4
	// fileOverheadBytes covers a file's headers and indexes beyond its
	// samples (a WAV header is 44 bytes, MP4 and Ogg indexes some KB).
	fileOverheadBytes = 1 << 20
	// containerOverhead is what Ogg pages, MP4 chunks and MP3 frame
	// headers add to a lossy stream at its bitrate: under 1 % at 32 kbps
	// and above; 2 % leaves room for the lowest Opus rates.
	containerOverhead = 1.02
	// coverBytes bounds the cover an encoder embeds (the engine's
	// maxCoverBytes).
	coverBytes = 32 << 20
	// audiogramBitsPerSecond is the video stream of an audiogram or a
	// video with burned-in subtitles, which libx264 encodes at a constant
	// quality (CRF 28), not a bitrate, so no bound follows from its
	// settings: the waveform of pink noise under a 3 Hz tremolo, which
	// changes every frame, took 0.61 Mbit/s at 1280x720 and 15 fps
	// (ffmpeg 7); 2 Mbit/s leaves three times that. A "video" output
	// that copies the input's video stream counts the input file's size
	// instead (Production.InputSize), and this only when that is not
	// known (see planDisk).
	audiogramBitsPerSecond = 2_000_000
	// unknownChannels and unknownRate stand for a probe that did not say
	// (the engine bounds what it decodes by the limit itself in any
	// case).
	unknownChannels = 2
	unknownRate     = 48000
)

// DecodedBytes is what length seconds of channels x rate take as 32-bit
// samples in a WAV file, as Work.DecodedDisk plans an input's decode
// (stereo and 48 kHz where channels or rate are not known).
func DecodedBytes(channels, rate int, length float64) int64 {
	return bytesOf(decodedSize(channels, rate, length))
}

// decodedSize is DecodedBytes in float64, which sums without wrapping.
func decodedSize(channels, rate int, length float64) float64 {
	if channels <= 0 {
		channels = unknownChannels
	}
	if rate <= 0 {
		rate = unknownRate
	}
	return math.Ceil(max(length, 0)*float64(rate))*float64(channels)*decodedSampleBytes + fileOverheadBytes
}

// maxPlannedBytes is where the disk plan saturates: far beyond any disk,
// and eight of it still fit an int64, so a sum of figures that large
// stays positive and over the limit instead of wrapping around.
const maxPlannedBytes = 1 << 60

// bytesOf converts a planned size to bytes, saturating at
// maxPlannedBytes (NaN, which no probe gives, counts as that too).
func bytesOf(f float64) int64 {
	if !(f < maxPlannedBytes) {
		return maxPlannedBytes
	}
	return int64(math.Ceil(f))
}

// planDisk plans the temporary disk of w (see Work.Disk); images are the
// distinct chapter images an encoder may embed.
func planDisk(p *Production, w *Work, images int) {
	w.DecodedInputs = map[string]int64{}
	// Every input ffmpeg reads counts, deep lossless ones too: those of
	// up to 24 bits among them are decoded once as well.
	var decodedSum float64
	decoded := func(field, format, decoder string, channels, rate int, length float64) {
		if !readByFFmpeg(format, decoder) || !(length > 0) {
			return
		}
		n := decodedSize(channels, rate, length)
		w.DecodedInputs[field] = bytesOf(n)
		decodedSum += n
	}
	// The programme's format: its largest input's, as the mix takes the
	// highest rate of its tracks.
	channels, rate := p.Channels, p.SampleRate
	if !p.IsMultitrack && p.InputFile != "" {
		decoded("input_file", p.Format, p.InputDecoder, p.Channels, p.SampleRate, p.InputLength)
	}
	for i, m := range p.MultiInputFiles {
		if !p.Reads(m) {
			continue
		}
		decoded(indexPath("multi_input_files", i), m.InputFiletype, m.InputDecoder, m.InputChannels, m.InputSampleRate, m.InputLength)
		if m.Type == InputMultitrack {
			channels, rate = max(channels, m.InputChannels), max(rate, m.InputSampleRate)
		}
	}
	// An output may be stereo from a mono input.
	channels = max(channels, unknownChannels)
	if rate <= 0 {
		rate = unknownRate
	}
	pictures := float64(images)*MaxChapterImageBytes + coverBytes
	var outputs float64
	w.OutputTemp = make([]int64, len(p.OutputFiles))
	for i, o := range p.OutputFiles {
		f, ok := LookupFormat(o.Format)
		if !ok {
			continue
		}
		var file float64
		switch {
		case f.Lossy() && len(f.Bitrates) > 0:
			// The format's highest bitrate: VBR coders may exceed the
			// one asked for.
			bps := float64(f.Bitrates[len(f.Bitrates)-1]) * 1000
			file = bps/8*w.Duration*containerOverhead + fileOverheadBytes + pictures
		case f.Name == "alac":
			file = decodedSize(channels, rate, w.Duration) + pictures
		case f.Type == TypeVideo:
			// The audio at AAC's highest bitrate beside the video.
			file = 320_000/8*w.Duration*containerOverhead + fileOverheadBytes + pictures
			subtitles := o.Subtitles != nil && o.Subtitles.Enabled
			if f.Name == "video" && p.HasVideo && !subtitles && p.InputSize > 0 {
				// A copy of the input's video stream, which its file
				// holds: the file's size bounds it whatever its bitrate
				// (the probe's Bitrate is the audio stream's).
				file += float64(p.InputSize)
			} else {
				// A render (an audiogram, the waveform video of an audio
				// input, a video input with subtitles burned in), or a
				// copy of a video input whose size is not known (stored
				// before sizes were kept): the render's figure.
				file += audiogramBitsPerSecond / 8 * w.Duration * containerOverhead
			}
			if subtitles {
				outputs += 2 * file // the burned-in video, and its copy
			}
		}
		w.OutputTemp[i] = bytesOf(2 * file)
		outputs += 2 * file
	}
	if p.IsMultitrack && slices.ContainsFunc(p.OutputFiles, func(o OutputFile) bool { return o.Format == "tracks" }) {
		var largest float64
		for i, end := range p.trackEnds() {
			largest = max(largest, decodedSize(max(p.MultiInputFiles[i].InputChannels, 1), rate, end))
		}
		outputs += largest
		for i, o := range p.OutputFiles {
			if o.Format == "tracks" {
				w.OutputTemp[i] = bytesOf(largest)
			}
		}
	}
	w.DecodedDisk, w.OutputDisk = bytesOf(decodedSum), bytesOf(outputs)
	w.Disk = bytesOf(decodedSum + outputs)
}

// CheckWork checks the planned work of p against its budget under l and
// returns what exceeds it, keyed by the fields that ask for it; nil when
// the work fits or the budget is not known yet (see Budget.Known).
func CheckWork(p *Production, l Limits) FieldErrors {
	l = l.WithDefaults()
	b := l.Budget(p)
	if !b.Known {
		return nil
	}
	w := PlanWork(p)
	errs := FieldErrors{}
	chapters := len(p.Chapters)
	for i, o := range p.OutputFiles {
		if !o.SplitOnChapters || chapters <= b.Parts {
			continue
		}
		if f, ok := LookupFormat(o.Format); !ok || f.Type == TypeDescription || (f.Name == "video" && p.HasVideo) {
			continue
		}
		errs.Addf(indexPath("output_files", i)+".split_on_chapters",
			"would split into %d parts, one per chapter; %s of input allow at most %d (one per %s of input, at most %d)",
			chapters, FormatSeconds(b.Timeline), b.Parts, FormatSeconds(l.PartSeconds), l.Parts)
	}
	if len(errs) == 0 {
		// Files and processes follow from the parts: only without an
		// error there they say something new.
		if w.Files > b.Files {
			errs.Addf("output_files", "would write %d files (split parts included); at most %d", w.Files, b.Files)
		} else if w.Processes > b.Processes {
			errs.Addf("output_files", "would start %d external processes (encoders, and decoders verifying lossy files); %s of input allow at most %d (%d, and %g per second of input, at most %d)",
				w.Processes, FormatSeconds(b.Timeline), b.Processes, BaseProcesses, l.ProcessesPerSecond, l.Processes)
		}
	}
	if p.IsMultitrack && w.Duration > b.Duration {
		for i, end := range p.trackEnds() {
			if end > b.Duration {
				errs.Addf(indexPath("multi_input_files", i)+".offset",
					"places the track's end at %s; the inputs together are %s long, and offsets may add at most %s of silence",
					FormatSeconds(end), FormatSeconds(b.Inputs), FormatSeconds(l.Silence))
			}
		}
		if len(errs) == 0 {
			errs.Addf("multi_input_files", "the programme would be %s long; the inputs together are %s, and offsets may add at most %s of silence",
				FormatSeconds(w.Duration), FormatSeconds(b.Inputs), FormatSeconds(l.Silence))
		}
	}
	if w.Memory > b.Memory {
		errs.Addf("", "processing would need about %d MB of memory (lossy and video outputs, tracks and chapter images); at most %d MB",
			w.Memory>>20, b.Memory>>20)
	}
	if w.Disk > b.Disk {
		// The inputs' decodes when they alone do not fit (named by the
		// largest), else the outputs, which a request can change.
		field := "output_files"
		if w.DecodedDisk > b.Disk {
			field = ""
			largest := int64(-1)
			for f, n := range w.DecodedInputs {
				if n > largest || (n == largest && f < field) {
					field, largest = f, n
				}
			}
		}
		errs.Addf(field, "processing would need up to %s of temporary disk (%s for inputs only ffmpeg decodes, kept as 32-bit floats; %s for the encoders' temporary files); at most %s",
			FormatBytes(w.Disk), FormatBytes(w.DecodedDisk), FormatBytes(w.OutputDisk), FormatBytes(b.Disk))
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// FitBudget makes p fit the work budget under l, as it is saved: chapters
// that start at or after the end of the input are dropped (the spec accepts
// chapters; a part or mark after the end would be empty) with a warning
// naming them, then the work is checked (CheckWork). It returns the
// FieldErrors of the work that does not fit, nil otherwise; p keeps the
// dropped chapters' warning either way.
func (p *Production) FitBudget(l Limits) error {
	if dropped := p.DropChaptersPastEnd(); len(dropped) > 0 {
		end, _ := p.timeline()
		p.AddWarning(p.Status, ChaptersDroppedWarning(dropped, end))
	}
	return CheckWork(p, l).Err()
}

// DropChaptersPastEnd removes the chapters that start at or after the end
// of the timeline they are placed on, when it is known, and returns them
// in start order.
func (p *Production) DropChaptersPastEnd() []Chapter {
	end, known := p.timeline()
	if !known {
		return nil
	}
	limit := seconds(end)
	var dropped []Chapter
	p.Chapters = slices.DeleteFunc(p.Chapters, func(c Chapter) bool {
		if c.Start >= limit {
			dropped = append(dropped, c)
			return true
		}
		return false
	})
	slices.SortStableFunc(dropped, func(a, b Chapter) int { return int(a.Start - b.Start) })
	return dropped
}

// namedDropped is how many dropped chapters a warning names.
const namedDropped = 5

// droppedChaptersMarker is the part of ChaptersDroppedWarning by which
// ResetWarnings tells it from the warnings of a run.
const droppedChaptersMarker = " at or after the end of the input"

// ChaptersDroppedWarning is the warning for chapters dropped because they
// start at or after end (seconds): it names the first few and counts the
// rest, so a long list cannot bloat the production.
func ChaptersDroppedWarning(dropped []Chapter, end float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d chapter", len(dropped))
	if len(dropped) != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, droppedChaptersMarker+" (%s) dropped: ", FormatTimestamp(seconds(end)))
	for i, c := range dropped[:min(len(dropped), namedDropped)] {
		if i > 0 {
			b.WriteString(", ")
		}
		title := c.Title
		if len(title) > 40 {
			title = strings.ToValidUTF8(title[:40], "") + "..."
		}
		fmt.Fprintf(&b, "%s %q", FormatTimestamp(c.Start), title)
	}
	if n := len(dropped) - namedDropped; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	return b.String()
}

// FormatBytes writes a size for messages as CheckWork does: "3.3 MB",
// "740 MB", "2.8 GB" (MiB and GiB, as the limits are set).
func FormatBytes(n int64) string {
	switch {
	case n < 100<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n < 1<<30:
		return fmt.Sprintf("%d MB", (n+1<<19)>>20)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// FormatSeconds writes a length for messages as CheckWork does: "10 s",
// "1.5 s", "2 h 3 min".
func FormatSeconds(s float64) string {
	d := time.Duration(math.Round(s*1000)) * time.Millisecond
	switch {
	case s < 60:
		return fmt.Sprintf("%g s", math.Round(s*1000)/1000)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// measuredRooms calls f with the channels and rate (0 where the probe
// did not say) of each input whose noise reduction analyses the room:
// the main input, or each multitrack track with a file, with denoise on
// (whatever its method: a bound, not an estimate).
func (p *Production) measuredRooms(f func(channels, rate int)) {
	if !p.IsMultitrack {
		if p.InputFile != "" && p.Algorithms.In(ScopeSingletrack).Bool("denoise") {
			f(p.Channels, p.SampleRate)
		}
		return
	}
	for _, m := range p.MultiInputFiles {
		if m.Type == InputMultitrack && p.Reads(m) && m.Algorithms.In(ScopeTrack).Bool("denoise") {
			f(m.InputChannels, m.InputSampleRate)
		}
	}
}
