package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/production"
)

// Inputs that only ffmpeg decodes (Opus, AAC, Vorbis, ALAC, video) are
// read several times in one run: the probe, the analysis and render
// passes, the lossy verification's renders, speech recognition, an
// intro's level. Each read used to start ffprobe and ffmpeg again (an
// Opus input cost 11 ffprobe and 10 ffmpeg runs, each 0.1-0.15 s of CPU
// before any audio, and the decoding itself every time). The first open
// now decodes the whole input once into a temporary WAV file of 32-bit
// floats, and every later open of the same path in the run reads that
// file with the pure-Go decoder, under the Info ffprobe gave (the
// production's input properties, and everything the chain decides from
// them, are what they were). ffmpeg's decoders of lossy codecs produce
// 32-bit floats and integer PCM of up to 24 bits fits one exactly, so
// the file holds the very samples ffmpeg gives; deeper lossless inputs
// (32-bit PCM or ALAC), which 32-bit floats would round, are decoded by
// ffmpeg on every pass as before. The file takes 4 bytes per sample
// (1.4 GB per hour of 48 kHz stereo) in Engine.TempDir until the run
// ends, failed or not.
//
// That disk is bounded by Limits.Disk: the API checks the plan when a
// production is saved and started (production.Work.DecodedDisk), but a
// run of a production stored before, or of the command line's, only
// learns its inputs' lengths here. So each decode is checked against the
// limit, with the decodes before it, before anything is written, and the
// file stops growing at the limit: a probe that got the length wrong
// (or had none) fails the run with the limit's error instead of filling
// the disk.

// decodedInput is an input ffmpeg decoded once in this run.
type decodedInput struct {
	// info is what the probe of the original file said.
	info audio.Info
	// path is the temporary WAV file holding its samples.
	path string
}

// decodeOnce reports whether an input ffmpeg decodes with this Info is
// kept as 32-bit floats: lossy codecs (no bit depth) and PCM of up to 24
// bits, whose samples 32-bit floats hold exactly.
func decodeOnce(info audio.Info) bool { return info.BitDepth <= 24 }

// decodeToFile reads d to its end into a new temporary WAV file and
// returns the decoded input; it leaves no file behind on failure. field
// names the input in the production ("input_file",
// "multi_input_files.N") for the error of the disk limit.
func (r *run) decodeToFile(ctx context.Context, d audio.Decoder, field string) (*decodedInput, error) {
	limit := r.e.Limits.WithDefaults().Disk
	format, info := d.Format(), d.Info()
	need := production.DecodedBytes(format.Channels, format.SampleRate, info.Length)
	if r.decodedDisk+need > limit {
		return nil, diskError(field, fmt.Sprintf("decodes to %s as 32-bit floats (%s of %d channels at %d Hz)",
			production.FormatBytes(need), production.FormatSeconds(info.Length), format.Channels, format.SampleRate), r.decodedDisk, limit)
	}
	f, err := os.CreateTemp(r.e.TempDir, "audiopost-input-*.wav")
	if err != nil {
		return nil, fmt.Errorf("decoding the input once: %w", err)
	}
	capped := &cappedFile{File: f, left: limit - r.decodedDisk}
	err = func() error {
		enc, err := wav.NewEncoder(ctx, capped, format, audio.EncodeOptions{BitDepth: 32})
		if err != nil {
			return err
		}
		if _, err := audio.Copy(ctx, enc, r.decodeProgress(d, field)); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
		return f.Close()
	}()
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		if errors.Is(err, errDiskFull) {
			return nil, diskError(field, fmt.Sprintf("decodes to more than its probe said (%s of %d channels at %d Hz)",
				production.FormatSeconds(info.Length), format.Channels, format.SampleRate), r.decodedDisk, limit)
		}
		return nil, err
	}
	r.decodedDisk += capped.written
	return &decodedInput{info: info, path: f.Name()}, nil
}

// errDiskFull is what cappedFile's writes fail with at its bound.
var errDiskFull = errors.New("a temporary file reached its limit")

// cappedFile is a file that takes at most left bytes in all: writes past
// them fail with errDiskFull before anything is written. Seeks pass
// through (the WAV encoder completes its header by seeking back), and
// the bound is on the file's size, which a rewrite of the header does
// not grow.
type cappedFile struct {
	*os.File
	left, written, pos int64
}

func (c *cappedFile) Write(p []byte) (int, error) {
	if grow := c.pos + int64(len(p)) - c.written; grow > c.left {
		return 0, errDiskFull
	}
	n, err := c.File.Write(p)
	c.pos += int64(n)
	if c.pos > c.written {
		c.left -= c.pos - c.written
		c.written = c.pos
	}
	return n, err
}

func (c *cappedFile) Seek(offset int64, whence int) (int64, error) {
	pos, err := c.File.Seek(offset, whence)
	if err == nil {
		c.pos = pos
	}
	return pos, err
}

// diskError is the form error of an input whose decode does not fit
// Limits.Disk beside the decodes before it (used bytes), as fitBudget
// words the others.
func diskError(field, what string, used, limit int64) error {
	msg := "the input " + what + "; inputs only ffmpeg decodes are kept as 32-bit floats for the run, in at most " + production.FormatBytes(limit) + " of temporary disk"
	if used > 0 {
		msg += " (" + production.FormatBytes(used) + " taken by the inputs decoded before it)"
	}
	return fmt.Errorf("the production needs more than this server allows: %w", production.FieldErrors{field: msg})
}

// inputField names the input at path in the production's fields for
// messages: "input_file", or "multi_input_files.N" for an intro, outro
// or track.
func (r *run) inputField(path string) string {
	if r.p == nil || (!r.p.IsMultitrack && path == r.in.Main) {
		return "input_file"
	}
	for i, m := range r.p.MultiInputFiles {
		if m.InputFile != "" && r.in.Multi[m.ID] == path {
			return "multi_input_files." + strconv.Itoa(i)
		}
	}
	return "input_file"
}

// decodeShare is the part of Audio Processing's progress the probe's
// decodes take when inputs are decoded once. ffmpeg decodes Opus or AAC
// at a few hundred times real time on one core, the chain's passes run at
// 30-100 times with restoration and about 150-300 without; a quarter
// keeps the decode of a two-hour Opus input moving through the first
// quarter of the step instead of holding the bar at 0 for minutes.
const decodeShare = 0.25

// decodeProgress returns d, the decoder of the input named field,
// reporting, while it is read to its end, the fraction of its probed
// length read, within this decode's part of decodeShare: what is left of
// it, divided among this input and those not decoded yet by their length.
// The others' lengths are the ones the production held when the run
// started (the API probes every input when it is uploaded or fetched);
// one the production did not hold (the command line's inputs) counts as
// long as this one, so that with none known the share is divided by the
// inputs' count.
func (r *run) decodeProgress(d audio.Decoder, field string) audio.Source {
	info := d.Info()
	total := info.Frames
	if total <= 0 {
		total = int64(info.Length * float64(d.Format().SampleRate))
	}
	own := info.Length
	if !(own > 0) {
		own = r.decodesLeft[field]
	}
	delete(r.decodesLeft, field)
	var rest float64 // the inputs left, in lengths of this one
	for _, length := range r.decodesLeft {
		if own > 0 && length > 0 {
			rest += length / own
		} else {
			rest++
		}
	}
	from := r.lastFrac
	span := max(decodeShare-from, 0) / (1 + rest)
	return &progressSource{Source: d, progress: func(frames int64) {
		if total > 0 {
			r.report(from + span*min(float64(frames)/float64(total), 1))
		}
	}}
}

// The WAV encoder completes its header only through a Seeker.
var _ io.WriteSeeker = (*cappedFile)(nil)

// openDecoded opens the samples of a decoded input.
func (r *run) openDecoded(ctx context.Context, di *decodedInput, opts []audio.DecodeOption) (audio.Decoder, error) {
	f, err := os.Open(di.path)
	if err != nil {
		return nil, err
	}
	d, err := audio.Decode(ctx, f, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &closingDecoder{Decoder: decodedDecoder{Decoder: d, info: di.info}, f: f}, nil
}

// removeDecoded deletes the run's decoded inputs.
func (r *run) removeDecoded() {
	for path, di := range r.decoded {
		os.Remove(di.path)
		delete(r.decoded, path)
	}
}

// decodedDecoder reads a decoded input's samples and describes the
// original file. It does not seek: the chain plans its passes as for the
// original, which ffmpeg could only stream.
type decodedDecoder struct {
	audio.Decoder
	info audio.Info
}

func (d decodedDecoder) Info() audio.Info { return d.info }
