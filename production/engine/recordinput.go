package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/production"
)

// An MP3 or FLAC main input is decoded by a pure-Go decoder (go-mp3
// several times slower than ffmpeg's) on every pass of the chain over
// it, and a production makes up to six: analysis, loudness, limiter and
// render passes (restoration's spill keeps the processed signal for the
// later ones, but only with restoration). So the first pass that reads
// the main input to its end also writes what it decoded to a temporary
// WAV file of 32-bit floats, as decodeonce.go keeps the inputs only
// ffmpeg decodes, and every later open in the run reads that file
// instead, under the input's Info. `audiopost process -o out.mp3 IN` on
// 60 s of 44.1 kHz stereo speech, three runs each, CPU s before -> after,
// the output byte for byte the same: a 128 kb/s MP3 2.93-3.02 -> 1.59-1.68,
// a 16-bit FLAC 1.59-1.60 -> 1.26-1.30 (reading the float WAV costs less
// than decoding FLAC; a WAV input is not recorded: reading it costs what
// reading the recording would). MP3's samples are 16-bit PCM and FLAC's
// are kept up to 24 bits, which 32-bit floats hold exactly, so every pass
// reads the very samples it read before.
//
// Unlike an ffmpeg input's decode this one is not planned (Work's
// DecodedDisk counts ffmpeg's inputs only, so the API's disk errors do
// not change): it is kept only in the temporary disk the plan leaves
// free beside the decodes, the encoders' files and the chain's spill, and
// a recording that outgrows it, or a pass that stops before the end, is
// dropped; the passes then decode the input again, as before.

// recorder holds the main input's recording. Its lock is needed because
// a pass's reads, which complete a recording, may run on a goroutine of
// their own (audio.Prefetched) while the next pass opens the input.
type recorder struct {
	mu sync.Mutex
	// busy is set once a recording is under way, done, or declined (no
	// disk for it): one per run. An open that stops reading before the
	// end clears it, so that a later pass records.
	busy bool
	// file is the recording complete (nil: none); files are every file
	// made, removed by removeAll.
	file  *decodedInput
	path  string
	files []string
	ended bool
}

// done returns the complete recording of the input at path, or nil.
func (rc *recorder) done(path string) *decodedInput {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.file != nil && rc.path == path {
		return rc.file
	}
	return nil
}

// removeAll deletes the recordings when the run ends; one finishing
// later removes its own file.
func (rc *recorder) removeAll() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, f := range rc.files {
		os.Remove(f)
	}
	rc.files, rc.file, rc.ended = nil, nil, true
}

// recordMain returns d, an open of the main input, recording what is
// read from it when it is the run's first open of an input recorded
// (see recorded) and the disk the plan leaves holds it; else d itself.
func (r *run) recordMain(ctx context.Context, d audio.Decoder) audio.Decoder {
	cd, ok := d.(*closingDecoder)
	if !ok || !recorded(cd) || len(r.decoders) == 0 || r.decoders[len(r.decoders)-1] != d {
		return d
	}
	rc := &r.rec
	rc.mu.Lock()
	busy := rc.busy || rc.ended
	rc.busy = true
	rc.mu.Unlock()
	if busy {
		return d
	}
	free := r.spareDisk()
	format := d.Format()
	if free <= 0 || production.DecodedBytes(format.Channels, format.SampleRate, d.Info().Length) > free {
		return d
	}
	f, err := os.CreateTemp(r.e.TempDir, "audiopost-input-*.wav")
	if err != nil {
		return d
	}
	capped := &cappedFile{File: f, left: free}
	enc, err := wav.NewEncoder(ctx, capped, format, audio.EncodeOptions{BitDepth: 32})
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return d
	}
	rc.mu.Lock()
	rc.files = append(rc.files, f.Name())
	rc.mu.Unlock()
	rd := &recordingDecoder{Decoder: d, rc: rc, path: r.in.Main, f: f, enc: enc}
	r.decoders[len(r.decoders)-1] = rd
	return rd
}

// spareDisk is the temporary disk Limits.Disk leaves beside the planned
// work and the chain's spill (see spillBytes).
func (r *run) spareDisk() int64 {
	w := production.PlanWork(r.p)
	left := r.e.Limits.WithDefaults().Disk - max(w.DecodedDisk, r.decodedDisk) - w.OutputDisk
	return left - max(r.spillBytes(), 0)
}

// recordingDecoder writes what is read from its decoder to a WAV file;
// when the decoder ends, the file becomes the recorder's recording.
type recordingDecoder struct {
	audio.Decoder
	rc   *recorder
	path string
	f    *os.File
	enc  audio.Encoder // nil once finished or dropped
}

func (d *recordingDecoder) Read(dst audio.Buffer) (int, error) {
	n, err := d.Decoder.Read(dst)
	if d.enc == nil {
		return n, err
	}
	if n > 0 {
		if werr := d.enc.Write(dst.Slice(0, n)); werr != nil {
			// Outgrown the disk it was given (a length the probe got
			// wrong), or the file failed: not again in this run.
			d.drop(false)
			return n, err
		}
	}
	if errors.Is(err, io.EOF) {
		d.finish()
	} else if err != nil {
		d.drop(false)
	}
	return n, err
}

// finish completes the file and hands it to the recorder.
func (d *recordingDecoder) finish() {
	enc := d.enc
	d.enc = nil
	if enc.Close() != nil || d.f.Close() != nil {
		os.Remove(d.f.Name())
		return
	}
	d.rc.mu.Lock()
	defer d.rc.mu.Unlock()
	if d.rc.ended {
		os.Remove(d.f.Name()) // the run ended meanwhile
		return
	}
	d.rc.file, d.rc.path = &decodedInput{info: d.Decoder.Info(), path: d.f.Name()}, d.path
}

// drop abandons an unfinished recording; with retry a later pass may
// record.
func (d *recordingDecoder) drop(retry bool) {
	if d.enc == nil {
		return
	}
	d.enc = nil
	d.f.Close()
	os.Remove(d.f.Name())
	if retry {
		d.rc.mu.Lock()
		d.rc.busy = false
		d.rc.mu.Unlock()
	}
}

// Close drops a recording its pass did not read to the end (a stop, or
// a pass that needed only the start).
func (d *recordingDecoder) Close() error {
	d.drop(true)
	return d.Decoder.Close()
}

// recorded reports whether the main input decoded by d is recorded: MP3,
// and FLAC of up to 24 bits (what 32-bit floats hold exactly).
func recorded(d *closingDecoder) bool {
	switch audio.CodecOf(d.Decoder) {
	case "mp3":
		return true
	case "flac":
		return d.Info().BitDepth <= 24
	}
	return false
}
