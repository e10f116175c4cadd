package ffmpeg

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
)

// Decoder streams the first audio stream of any input ffmpeg reads as planar
// float64, at the stream's own sample rate and channel count. It implements
// audio.Decoder. Read allocates nothing.
type Decoder struct {
	ctx    context.Context
	info   audio.Info
	format audio.Format
	run    run
	cmd    *procpool.Cmd
	stdout *os.File
	stderr *stderrBuffer
	done   chan struct{} // closed once the process has been reaped
	// waitErr is written before done is closed.
	waitErr error

	raw      []byte // PCM bytes read from the pipe; raw[lo:hi] is unread
	lo, hi   int
	frameLen int
	pending  error // error seen while data was still buffered
	err      error // sticky terminal error, io.EOF at the end
	closed   bool
	// live returns what the pipe holds instead of waiting for a whole
	// request: a live input delivers in real time.
	live bool
}

// headLimit is how much of a non-seekable stream is held in memory so that
// ffprobe can describe it before ffmpeg decodes it from the start, where
// the length must be exact (see exactCandidate).
const headLimit = 1 << 20

// rawBlock is the pipe read size: large enough that a 4096-frame block of
// 8-channel float64 needs few reads, small enough to stay in cache.
const rawBlock = 64 << 10

// Decode starts ffmpeg on r. An *os.File is passed by path (MP4 with its
// index at the end needs seeking); any other reader streams through stdin.
// ctx bounds the whole decode: cancelling it kills ffmpeg. Close kills it
// too and must be called. Streams keep their sample rate: converting it is
// dsp.Resampler's job, in pure Go.
//
// One ffmpeg run does it all: the stream's format is the header of the
// WAV file ffmpeg writes on the pipe, Info what ffmpeg prints of the
// input before it decodes (see parseDump). ffprobe runs first only for
// the formats whose length Info states exactly (PCM in WAV or AIFF, FLAC,
// ALAC in MP4: see exactCandidate), whose exact frame count ffmpeg does
// not print, and under a memo of probes (WithProbes), for work that
// reports its inputs' properties exactly. Each run costs ~0.1 s of CPU
// before any audio, loading ffmpeg's libraries.
func Decode(ctx context.Context, r io.Reader) (*Decoder, error) {
	tool, err := lookTool("ffmpeg", "decoding a format without a pure-Go codec")
	if err != nil {
		return nil, err
	}
	in := newInput(r)
	var det *Details // the probe's, where one ran
	// Under a memo of probes (WithProbes) Info is always the probe's.
	probe := memoOf(ctx) != nil
	switch {
	case in.stdin == nil:
		// By path: the file can be read beside ffmpeg.
		if probe || exactCandidate(r.(io.ReaderAt), -1) {
			d, err := ProbeDetails(ctx, r)
			if err != nil {
				return nil, err
			}
			det = &d
		}
	case in.rewind != nil:
		ra, ok := r.(io.ReaderAt)
		var pos int64
		if ok {
			pos, err = r.(io.Seeker).Seek(0, io.SeekCurrent)
			ok = err == nil
		}
		if probe || !ok || exactCandidate(io.NewSectionReader(ra, pos, math.MaxInt64-pos), -1) {
			d, err := ProbeDetails(ctx, r)
			if err != nil {
				return nil, err
			}
			det = &d
		}
	default:
		// A one-way stream can be read only once: what is sniffed (and
		// probed, where it must be) is replayed in front of the rest.
		head, complete, err := readHead(r, nil, 64)
		if err != nil {
			return nil, err
		}
		if !complete && (probe || isMP4(head) || bytes.HasPrefix(head, []byte("ID3")) || exactCandidate(bytes.NewReader(head), int64(len(head)))) {
			// ffprobe reads a bounded head; ALAC's sample entry is in
			// MP4's index, which a file made to stream has in front, and
			// what an ID3 tag holds comes after it.
			if head, complete, err = readHead(r, head, headLimit); err != nil {
				return nil, err
			}
		}
		if probe || exactCandidate(bytes.NewReader(head), int64(len(head))) {
			d, err := ProbeDetails(ctx, bytes.NewReader(head))
			if err != nil {
				return nil, err
			}
			if !complete {
				// ffprobe saw only the head: its duration is an extrapolation.
				d.Length, d.Frames = 0, -1
			}
			det = &d
		}
		in.stdin = io.MultiReader(bytes.NewReader(head), r)
	}
	if det != nil {
		if err := det.StreamFormat().Validate(); err != nil {
			return nil, fmt.Errorf("ffmpeg: %s stream: %w", det.Format, err)
		}
	}
	return startWAVDecoder(ctx, tool, in, det)
}

// readHead reads r until head holds n bytes or r ends (complete).
func readHead(r io.Reader, head []byte, n int) ([]byte, bool, error) {
	more := make([]byte, n-len(head))
	m, err := io.ReadFull(r, more)
	head = append(head, more[:m]...)
	complete := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !complete {
		return nil, false, fmt.Errorf("ffmpeg: reading input: %w", err)
	}
	return head, complete, nil
}

// exactCandidate reports whether the stream r holds (size bytes, -1 when
// unknown) may be one whose length a probe states exactly (exactLength):
// WAV, AIFF and FLAC by their first bytes, MP4 when its index names ALAC.
// A false yes costs one ffprobe run, a false no an Info without Frames.
func exactCandidate(r io.ReaderAt, size int64) bool {
	head := make([]byte, 12)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case len(head) < 12:
		return false
	case bytes.HasPrefix(head, []byte("RIFF")), bytes.HasPrefix(head, []byte("RF64")), bytes.HasPrefix(head, []byte("FORM")),
		bytes.HasPrefix(head, []byte("fLaC")):
		return true
	case bytes.HasPrefix(head, []byte("ID3")):
		// A FLAC file may carry an ID3 tag in front, as MP3 files do.
		after := make([]byte, 4)
		n, _ := r.ReadAt(after, id3Size(head))
		return n < 4 || string(after) == "fLaC"
	case isMP4(head):
		return mp4HasALAC(r, size)
	}
	return false
}

// id3Size is the size of the ID3v2 tag whose header starts head (at
// least 10 bytes): its syncsafe size, the header and any footer.
func id3Size(head []byte) int64 {
	var n int64
	for _, b := range head[6:10] {
		n = n<<7 | int64(b&0x7f)
	}
	n += 10
	if head[5]&0x10 != 0 {
		n += 10
	}
	return n
}

// isMP4 reports whether head starts with an ISO BMFF ftyp box.
func isMP4(head []byte) bool { return len(head) >= 8 && string(head[4:8]) == "ftyp" }

// mp4IndexLimit bounds how much of an MP4 file's index (moov) is read to
// find its codec.
const mp4IndexLimit = 64 << 20

// mp4HasALAC walks the top-level boxes of an MP4 file to its index and
// reports whether the index names ALAC's sample entry.
func mp4HasALAC(r io.ReaderAt, size int64) bool {
	var off int64
	hdr := make([]byte, 16)
	for i := 0; i < 1000 && (size < 0 || off+8 <= size); i++ {
		n, _ := r.ReadAt(hdr, off)
		if n < 8 {
			return false
		}
		boxLen, hl := int64(binary.BigEndian.Uint32(hdr)), int64(8)
		switch boxLen {
		case 1:
			if n < 16 {
				return false
			}
			boxLen, hl = int64(binary.BigEndian.Uint64(hdr[8:])), 16
		case 0:
			boxLen = math.MaxInt64 - off // to the end
		}
		if boxLen < hl {
			return false
		}
		if string(hdr[4:8]) == "moov" {
			moov := make([]byte, min(boxLen-hl, mp4IndexLimit))
			m, _ := r.ReadAt(moov, off+hl)
			return bytes.Contains(moov[:m], []byte("alac"))
		}
		if boxLen > math.MaxInt64-off {
			return false
		}
		off += boxLen
	}
	return false
}

// startWAVDecoder runs ffmpeg on in, writing the first audio stream as a
// WAV file of float64 on a pipe, and returns once the file's header says
// the stream's format: the Decoder reads its samples from there. det is
// the probe's description where one ran, else Info is what ffmpeg printed
// of the input. A failure before the header (not audio, no audio stream,
// damaged) is the error.
func startWAVDecoder(ctx context.Context, tool string, in input, det *Details) (*Decoder, error) {
	args := []string{"-nostdin", "-hide_banner", "-nostats", "-v", "level+info", "-protocol_whitelist", "file,pipe",
		"-i", in.arg, "-map", "0:a:0", "-vn", "-sn", "-dn", "-map_metadata", "-1", "-c:a", "pcm_f64le", "-f", "wav", "pipe:1"}
	cmd := procpool.Command(ctx, tool, args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg: %w", err)
	}
	cmd.Stdout = pw
	cmd.Stdin = in.stdin
	lw := newLevelWriter()
	cmd.Stderr = lw
	what := "decoding"
	if det != nil {
		what += " " + det.Format
	}
	d := &Decoder{
		ctx:    ctx,
		cmd:    cmd,
		stdout: pr,
		stderr: lw.errs,
		done:   make(chan struct{}),
		run:    run{tool: "ffmpeg", what: what, input: true},
	}
	if det != nil {
		d.info, d.run.format = det.Info, det.Format
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		if ctx.Err() != nil || errors.Is(err, procpool.ErrClosed) {
			return nil, fmt.Errorf("ffmpeg: %s: %w", what, err)
		}
		return nil, fmt.Errorf("%w: starting ffmpeg to decode %s: %v", audio.ErrCodecUnavailable, d.info.Format, err)
	}
	pw.Close()
	go func() {
		d.waitErr = cmd.Wait()
		close(d.done)
	}()
	f, rest, herr := readWAVHeader(pr)
	// The input's description precedes the header on stderr; without a
	// header, ffmpeg has exited.
	select {
	case <-lw.dumped:
	case <-d.done:
	}
	dump, dumpErr := parseDump(lw.dump())
	if det == nil {
		d.info, d.run.format = dump.Info, dump.Format
		d.run.what = "decoding " + dump.Format
		if dump.Format == "" {
			d.run.what = "decoding an input"
		}
	}
	if herr != nil {
		if errors.Is(herr, io.EOF) || errors.Is(herr, io.ErrUnexpectedEOF) {
			// ffmpeg closed its output: its exit status says why.
			<-d.done
		}
		d.Close()
		if ctx.Err() != nil || errors.Is(d.waitErr, procpool.ErrClosed) {
			return nil, exitError(ctx, d.run, d.waitErr, d.stderr)
		}
		if d.waitErr == nil {
			return nil, fmt.Errorf("%w: ffmpeg's decode of %s: %v", audio.ErrMalformed, d.info.Format, herr)
		}
		return nil, d.startError(dumpErr)
	}
	if err := f.Validate(); err != nil {
		d.Close()
		return nil, fmt.Errorf("ffmpeg: %s stream: %w", d.info.Format, err)
	}
	d.format = f
	d.info.SampleRate, d.info.Channels = f.SampleRate, f.Channels
	d.frameLen = 8 * f.Channels
	d.raw = make([]byte, max(rawBlock-rawBlock%d.frameLen, len(rest)+d.frameLen))
	d.hi = copy(d.raw, rest)
	return d, nil
}

// startError is the error of an ffmpeg that exited before the header of
// its output: what a probe said of such inputs (not audio, no audio
// stream), else why it failed.
func (d *Decoder) startError(dumpErr error) error {
	lower := strings.ToLower(d.stderr.String())
	switch {
	case dumpErr == errNoDump && strings.Contains(lower, "invalid data found"):
		procpool.Logger(d.ctx).Info("external program failed", "program", "ffmpeg", "while", "opening an input", "err", d.waitErr,
			"stderr", d.stderr.String())
		return &sentence{audio.ErrUnknownFormat, notValid("")}
	case dumpErr != nil && dumpErr != errNoDump:
		return dumpErr
	}
	return exitError(d.ctx, d.run, d.waitErr, d.stderr)
}

// wavHeaderLimit bounds the header read from ffmpeg's WAV output.
const wavHeaderLimit = 64 << 10

// readWAVHeader reads the header of the WAV file of float64 samples
// ffmpeg writes on a pipe, up to its data chunk, whose size a pipe cannot
// state: the stream's format, and what was read past the header.
func readWAVHeader(r io.Reader) (audio.Format, []byte, error) {
	var f audio.Format
	buf := make([]byte, 0, 512)
	fill := func(n int) error {
		for len(buf) < n {
			if n > wavHeaderLimit {
				return errors.New("header larger than 64 KB")
			}
			if cap(buf) < n {
				buf = append(buf[:cap(buf)], make([]byte, n-cap(buf))...)[:len(buf)]
			}
			m, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err != nil && len(buf) < n {
				return err
			}
		}
		return nil
	}
	if err := fill(12); err != nil {
		return f, nil, err
	}
	if string(buf[:4]) != "RIFF" || string(buf[8:12]) != "WAVE" {
		return f, nil, errors.New("output is not WAV")
	}
	off, bits, float := 12, 0, false
	for {
		if err := fill(off + 8); err != nil {
			return f, nil, err
		}
		id, size := string(buf[off:off+4]), int(binary.LittleEndian.Uint32(buf[off+4:]))
		off += 8
		if id == "data" {
			if bits != 64 || !float || f.Channels == 0 {
				return f, nil, fmt.Errorf("output is %d-bit WAV, not float64", bits)
			}
			return f, buf[off:], nil
		}
		if size > wavHeaderLimit {
			return f, nil, fmt.Errorf("WAV chunk %q of %d bytes", id, size)
		}
		if err := fill(off + size + size%2); err != nil {
			return f, nil, err
		}
		if c := buf[off : off+size]; id == "fmt " && len(c) >= 16 {
			tag := binary.LittleEndian.Uint16(c)
			if tag == 0xfffe && len(c) >= 26 {
				tag = binary.LittleEndian.Uint16(c[24:]) // the extensible format's subformat
			}
			float = tag == 3
			f.Channels = int(binary.LittleEndian.Uint16(c[2:]))
			f.SampleRate = int(binary.LittleEndian.Uint32(c[4:]))
			bits = int(binary.LittleEndian.Uint16(c[14:]))
		}
		off += size + size%2
	}
}

// startDecoder runs ffmpeg with the input arguments args (ending with the
// input and its stream selection) reading stdin, converting the audio to
// planar float64 of format f on a pipe that the returned Decoder reads.
// r says what the run is, for its error message.
func startDecoder(ctx context.Context, tool string, args []string, stdin io.Reader, f audio.Format, info audio.Info, r run) (*Decoder, error) {
	args = append(args, "-f", "f64le", "-ac", strconv.Itoa(f.Channels), "-ar", strconv.Itoa(f.SampleRate), "pipe:1")
	cmd := procpool.Command(ctx, tool, args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg: %w", err)
	}
	// The pipe is ours, not exec's, so a goroutine can reap the process
	// (no zombie after a kill) without closing the read end under Read.
	cmd.Stdout = pw
	cmd.Stdin = stdin
	d := &Decoder{
		ctx:      ctx,
		info:     info,
		format:   f,
		run:      r,
		cmd:      cmd,
		stdout:   pr,
		stderr:   new(stderrBuffer),
		done:     make(chan struct{}),
		frameLen: 8 * f.Channels,
	}
	d.raw = make([]byte, rawBlock-rawBlock%d.frameLen)
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		if ctx.Err() != nil || errors.Is(err, procpool.ErrClosed) {
			return nil, fmt.Errorf("ffmpeg: %s: %w", r.what, err)
		}
		return nil, fmt.Errorf("%w: starting ffmpeg to decode %s: %v", audio.ErrCodecUnavailable, info.Format, err)
	}
	pw.Close()
	go func() {
		d.waitErr = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// Format implements audio.Source.
func (d *Decoder) Format() audio.Format { return d.format }

// Info implements audio.Decoder: what ffmpeg printed of the input (see
// parseDump), or ffprobe reported where it ran. Frames is exact for PCM,
// FLAC and ALAC, -1 otherwise.
func (d *Decoder) Info() audio.Info { return d.info }

// Read implements audio.Source.
func (d *Decoder) Read(dst audio.Buffer) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(dst) != d.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), d.format.Channels)
	}
	want := dst.Frames()
	if want == 0 {
		return 0, nil
	}
	// Fill until the request can be served, the buffer is full, or the
	// pipe ends; a pipe read returns what is there, so this blocks only
	// while ffmpeg has produced less than one block.
	for (d.hi-d.lo)/d.frameLen < want && d.pending == nil && !(d.live && d.hi-d.lo >= d.frameLen) {
		if d.lo > 0 {
			d.hi = copy(d.raw, d.raw[d.lo:d.hi])
			d.lo = 0
		}
		if d.hi == len(d.raw) {
			break
		}
		n, err := d.stdout.Read(d.raw[d.hi:])
		d.hi += n
		if err != nil {
			d.pending = err
		}
	}
	if d.hi-d.lo >= d.frameLen {
		n := audio.DecodePCM(dst, 0, d.raw[d.lo:d.hi], audio.Float64)
		d.lo += n * d.frameLen
		return n, nil
	}
	d.err = d.finish(d.pending)
	return 0, d.err
}

// finish reaps ffmpeg after its output ended and says why it ended.
func (d *Decoder) finish(readErr error) error {
	<-d.done
	// ErrWaitDelay alone: ffmpeg succeeded, only the copy of a caller's
	// reader that blocked in Read was abandoned.
	if errors.Is(d.waitErr, exec.ErrWaitDelay) {
		d.waitErr = nil
	}
	if d.waitErr != nil || d.ctx.Err() != nil {
		return exitError(d.ctx, d.run, d.waitErr, d.stderr)
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) {
		return fmt.Errorf("ffmpeg: reading decoded %s: %w", d.info.Format, readErr)
	}
	if d.hi > d.lo {
		return fmt.Errorf("%w: ffmpeg output ends inside a frame (%d stray bytes)", audio.ErrMalformed, d.hi-d.lo)
	}
	return io.EOF
}

// Close stops ffmpeg if it is still running, reaps it and releases the
// pipe. It does not close the reader given to Decode.
func (d *Decoder) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	select {
	case <-d.done:
	default:
		// Killing a decoder that is no longer wanted is the normal way to
		// stop it early, not an error.
		_ = d.cmd.Kill()
		<-d.done
	}
	if d.err == nil {
		d.err = fmt.Errorf("ffmpeg: read after Close: %w", os.ErrClosed)
	}
	return d.stdout.Close()
}
