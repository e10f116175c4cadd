package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

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
// ffprobe can describe it before ffmpeg decodes it from the start.
const headLimit = 1 << 20

// rawBlock is the pipe read size: large enough that a 4096-frame block of
// 8-channel float64 needs few reads, small enough to stay in cache.
const rawBlock = 64 << 10

// Decode starts ffmpeg on r. An *os.File is passed by path (MP4 with its
// index at the end needs seeking); any other reader streams through stdin.
// ctx bounds the whole decode: cancelling it kills ffmpeg. Close kills it
// too and must be called. Streams keep their sample rate: converting it is
// dsp.Resampler's job, in pure Go.
func Decode(ctx context.Context, r io.Reader) (*Decoder, error) {
	tool, err := lookTool("ffmpeg", "decoding a format without a pure-Go codec")
	if err != nil {
		return nil, err
	}
	in := newInput(r)
	var det Details
	switch {
	case in.stdin == nil || in.rewind != nil:
		det, err = ProbeDetails(ctx, r)
	default:
		// A one-way stream can be read only once: probe a bounded head and
		// replay it in front of the rest for ffmpeg.
		head := make([]byte, headLimit)
		n, rerr := io.ReadFull(r, head)
		head = head[:n]
		complete := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !complete {
			return nil, fmt.Errorf("ffmpeg: reading input: %w", rerr)
		}
		det, err = ProbeDetails(ctx, bytes.NewReader(head))
		if !complete {
			// ffprobe saw only the head: its duration is an extrapolation.
			det.Length, det.Frames = 0, -1
		}
		in.stdin = io.MultiReader(bytes.NewReader(head), r)
	}
	if err != nil {
		return nil, err
	}
	f := det.StreamFormat()
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("ffmpeg: %s stream: %w", det.Format, err)
	}
	args := append(baseArgs(), "-i", in.arg, "-map", "0:a:0", "-vn", "-sn", "-dn")
	return startDecoder(ctx, tool, args, in.stdin, f, det.Info, run{tool: "ffmpeg", what: "decoding " + det.Format, format: det.Format, input: true})
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

// Info implements audio.Decoder: what ffprobe reported. Frames is exact for
// PCM, FLAC and ALAC, -1 otherwise.
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
