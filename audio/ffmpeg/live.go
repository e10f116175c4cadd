package ffmpeg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
)

// Live streams: OpenLive reads anything ffmpeg reads as a live input (an
// Icecast or HTTP stream, RTMP, SRT, a device, a file played at its own
// pace) and LiveOutput writes anything ffmpeg writes live (an Icecast
// mount, RTMP, SRT, a file). Unlike Decode and NewEncoder, which only ever
// open local files and pipes, these hand the URL to ffmpeg as the caller
// gives it: the caller decides which addresses a user may reach. Each
// runs in a slot of the process pool of its context for as long as the
// stream runs.

// LiveInput configures OpenLive.
type LiveInput struct {
	// Format is the PCM the input is converted to: a live graph keeps
	// one format across reconnects, whatever the source sends.
	Format audio.Format
	// Realtime reads a file at its own pace (ffmpeg's -re), as if it were
	// played live.
	Realtime bool
	// Loop plays a file again from the start when it ends (with Realtime:
	// a fallback programme).
	Loop bool
	// InputFormat forces ffmpeg's demuxer or device ("pulse", "alsa",
	// "lavfi", ...); empty lets ffmpeg probe.
	InputFormat string
}

// OpenLive starts ffmpeg reading url and returns a Decoder of its audio at
// in.Format. Read returns whatever has arrived (at least one frame)
// instead of waiting for a whole buffer, so a graph over it delays
// nothing. The stream ends (io.EOF or an error naming ffmpeg's complaint)
// when the source ends or drops; reconnecting is the caller's decision.
// Close kills ffmpeg.
func OpenLive(ctx context.Context, url string, in LiveInput) (*Decoder, error) {
	if err := in.Format.Validate(); err != nil {
		return nil, err
	}
	tool, err := lookTool("ffmpeg", "reading a live input")
	if err != nil {
		return nil, err
	}
	// A small probe: by default ffmpeg reads megabytes of a stream to
	// recognise its format and seconds to describe it, which a live
	// source delivers at its bitrate: 9 s to the first frame of a 128
	// kb/s Icecast MP3 stream, 1 s with 8 KB.
	args := []string{"-nostdin", "-hide_banner", "-v", "error", "-fflags", "nobuffer",
		"-formatprobesize", "8192", "-probesize", "8192", "-analyzeduration", "0"}
	if in.Realtime {
		args = append(args, "-re")
	}
	if in.Loop {
		args = append(args, "-stream_loop", "-1")
	}
	if in.InputFormat != "" {
		args = append(args, "-f", in.InputFormat)
	}
	args = append(args, "-i", url, "-map", "0:a:0", "-vn", "-sn", "-dn")
	d, err := startDecoder(ctx, tool, args, nil, in.Format, audio.Info{Format: "live", Frames: -1},
		run{tool: "ffmpeg", what: "reading the live input", input: true})
	if err != nil {
		return nil, err
	}
	d.live = true
	return d, nil
}

// liveFormats are the codecs and muxers of live outputs, by the API's
// format names; wav and flac suit recording to a file.
var liveFormats = map[string]struct {
	codec, muxer, contentType string
	defaultKbps               int
}{
	"mp3":    {"libmp3lame", "mp3", "audio/mpeg", 128},
	"aac":    {"aac", "adts", "audio/aac", 128},
	"opus":   {"libopus", "ogg", "audio/ogg", 96},
	"vorbis": {"libvorbis", "ogg", "audio/ogg", 128},
	"flac":   {"flac", "ogg", "audio/ogg", 0},
	"wav":    {"pcm_s16le", "wav", "audio/wav", 0},
}

// LiveBitrate returns the bitrate in kbps a live output of format gets
// when none is asked for: 0 for the lossless ones and unknown formats.
func LiveBitrate(format string) int { return liveFormats[format].defaultKbps }

// LiveFormats returns the output formats LiveOutput encodes.
func LiveFormats() []string {
	return []string{"mp3", "aac", "opus", "vorbis", "flac", "wav"}
}

// LiveOutput is one ffmpeg process encoding PCM written to it and sending
// it to a live destination. Write blocks while ffmpeg does not keep up
// (a slow network): callers that feed several outputs give each its own
// goroutine.
type LiveOutput struct {
	ctx    context.Context
	format audio.Format
	cmd    *procpool.Cmd
	stdin  *os.File
	stderr *stderrBuffer
	done   chan struct{}
	// waitErr is written before done is closed.
	waitErr error
	scratch []byte
	err     error
}

// LiveOutputOptions configure a LiveOutput.
type LiveOutputOptions struct {
	// Format is one of LiveFormats; Bitrate in kbps, 0 for its default.
	Format  string
	Bitrate int
	// Name and Description are sent to an Icecast server as the stream's
	// (ice_name, ice_description).
	Name, Description string
}

// StartLiveOutput starts ffmpeg sending PCM of format f, encoded as o
// says, to url.
func StartLiveOutput(ctx context.Context, url string, f audio.Format, o LiveOutputOptions) (*LiveOutput, error) {
	lf, ok := liveFormats[o.Format]
	if !ok {
		return nil, fmt.Errorf("%w: live output format %q (one of %s)", audio.ErrUnsupported, o.Format, strings.Join(LiveFormats(), ", "))
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.Bitrate < 0 || o.Bitrate > 1024 {
		return nil, fmt.Errorf("%w: live output bitrate %d kbps", audio.ErrUnsupported, o.Bitrate)
	}
	tool, err := lookTool("ffmpeg", "sending a live output")
	if err != nil {
		return nil, err
	}
	args := []string{"-nostdin", "-hide_banner", "-v", "error",
		"-f", "f64le", "-ar", strconv.Itoa(f.SampleRate), "-ac", strconv.Itoa(f.Channels), "-i", "pipe:0",
		"-c:a", lf.codec}
	kbps := o.Bitrate
	if kbps == 0 {
		kbps = lf.defaultKbps
	}
	if kbps > 0 {
		args = append(args, "-b:a", strconv.Itoa(kbps)+"k")
	}
	if lf.codec == "libopus" && f.SampleRate != 48000 {
		args = append(args, "-ar", "48000")
	}
	if strings.HasPrefix(url, "icecast://") {
		args = append(args, "-content_type", lf.contentType)
		if o.Name != "" {
			args = append(args, "-ice_name", o.Name)
		}
		if o.Description != "" {
			args = append(args, "-ice_description", o.Description)
		}
	}
	// Packets go out as they are made: a live listener should not wait
	// for the muxer's buffers.
	args = append(args, "-flush_packets", "1", "-f", lf.muxer, url)
	cmd := procpool.Command(ctx, tool, args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg: %w", err)
	}
	cmd.Stdin = pr
	lo := &LiveOutput{ctx: ctx, format: f, cmd: cmd, stdin: pw, stderr: new(stderrBuffer), done: make(chan struct{})}
	cmd.Stderr = lo.stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		if ctx.Err() != nil || errors.Is(err, procpool.ErrClosed) {
			return nil, fmt.Errorf("ffmpeg: starting a live output: %w", err)
		}
		return nil, fmt.Errorf("%w: starting ffmpeg for a live output: %v", audio.ErrCodecUnavailable, err)
	}
	pr.Close()
	go func() {
		lo.waitErr = cmd.Wait()
		close(lo.done)
	}()
	return lo, nil
}

// Done is closed when ffmpeg has exited (the destination went away, or
// Close).
func (o *LiveOutput) Done() <-chan struct{} { return o.done }

// Write implements audio.Sink. It fails once ffmpeg has exited, with its
// explanation.
func (o *LiveOutput) Write(src audio.Buffer) error {
	if o.err != nil {
		return o.err
	}
	if len(src) != o.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel output", audio.ErrFormatMismatch, len(src), o.format.Channels)
	}
	fb := 8 * o.format.Channels
	if o.scratch == nil {
		o.scratch = make([]byte, (rawBlock/fb)*fb)
	}
	per := len(o.scratch) / fb
	total := src.Frames()
	for from := 0; from < total; from += per {
		n := min(per, total-from)
		audio.EncodePCM(o.scratch, src, from, n, audio.Float64)
		if _, err := o.stdin.Write(o.scratch[:n*fb]); err != nil {
			o.stdin.Close()
			<-o.done
			o.err = o.exitErr(err)
			return o.err
		}
	}
	return nil
}

// exitErr says in one sentence why the output stopped (ffmpeg's own
// words go to the pool's log).
func (o *LiveOutput) exitErr(err error) error {
	if o.waitErr != nil {
		err = o.waitErr
	}
	return exitError(o.ctx, run{tool: "ffmpeg", what: "sending a live output"}, err, o.stderr)
}

// Close ends the stream: ffmpeg flushes and exits; after closeWait it is
// killed.
func (o *LiveOutput) Close() error {
	o.stdin.Close()
	select {
	case <-o.done:
	case <-time.After(closeWait):
		_ = o.cmd.Kill()
		<-o.done
	}
	if o.err != nil {
		return o.err
	}
	o.err = fmt.Errorf("ffmpeg: write to a closed live output: %w", os.ErrClosed)
	if o.waitErr != nil && !errors.Is(o.waitErr, exec.ErrWaitDelay) {
		return o.exitErr(o.waitErr)
	}
	return nil
}

// closeWait is how long Close lets ffmpeg flush a live output.
const closeWait = 3 * time.Second
