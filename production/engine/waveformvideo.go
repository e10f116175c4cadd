package engine

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/audiopost/audiopost/production/artwork"

	"github.com/audiopost/audiopost/audio"
)

// The audiogram output is an MP4 video (H.264 + AAC) of the processed
// audio: the cover image, center-cropped to a square, with the live
// waveform (ffmpeg's showwaves filter) across its lower part. Without a
// cover the background is a plain dark color. ffmpeg renders it from the
// PCM the encoder receives, so it is made in the same single pass as every
// other output. Tags are written as MP4 metadata; chapters are not added.
const (
	audiogramSide = 640
	audiogramFPS  = 15
	audiogramBG   = "0x1e293b"
)

// audiogramEncoder feeds PCM to an ffmpeg process that renders the video
// into a private temporary directory; Close copies it to the writer.
type audiogramEncoder struct {
	ctx      context.Context
	w        io.Writer
	dir      string
	out      string
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	stderr   bytes.Buffer
	format   audio.Format
	scratch  []byte
	err      error
	closed   bool
	closeErr error
}

func newAudiogramEncoder(ctx context.Context, w io.Writer, cover *audio.Picture, f audio.Format, opts audio.EncodeOptions) (*audiogramEncoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tool, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("%w: the audiogram output needs ffmpeg, which is not on PATH", audio.ErrCodecUnavailable)
	}
	dir, err := os.MkdirTemp("", "audiopost-audiogram-")
	if err != nil {
		return nil, err
	}
	e := &audiogramEncoder{ctx: ctx, w: w, dir: dir, out: filepath.Join(dir, "out.mp4"), format: f}
	side := strconv.Itoa(audiogramSide)
	args := []string{"-nostdin", "-hide_banner", "-v", "error",
		"-f", "f64le", "-ar", strconv.Itoa(f.SampleRate), "-ac", strconv.Itoa(f.Channels), "-i", "pipe:0"}
	if cover != nil {
		// Re-encoded as PNG so ffmpeg never sees untrusted image bytes.
		img, _, err := artwork.DecodeImage(cover.Data)
		if err == nil {
			var data []byte
			if data, err = artwork.EncodeImage(artwork.ResizeArea(img, squareCenter(img.Bounds()), audiogramSide, audiogramSide), "image/png"); err == nil {
				err = os.WriteFile(filepath.Join(dir, "cover.png"), data, 0o600)
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("audiogram cover: %w", err)
		}
		args = append(args, "-loop", "1", "-framerate", strconv.Itoa(audiogramFPS), "-i", "file:"+filepath.Join(dir, "cover.png"))
	} else {
		args = append(args, "-f", "lavfi", "-i", "color=c="+audiogramBG+":s="+side+"x"+side+":r="+strconv.Itoa(audiogramFPS))
	}
	waveH := audiogramSide / 4
	filter := fmt.Sprintf("[0:a]showwaves=s=%dx%d:mode=cline:rate=%d:colors=white[w];[1:v]setsar=1[bg];[bg][w]overlay=0:H-h-%d:shortest=1,format=yuv420p[v]",
		audiogramSide, waveH, audiogramFPS, audiogramSide/10)
	args = append(args, "-filter_complex", filter, "-map", "[v]", "-map", "0:a",
		"-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage", "-crf", "28",
		"-c:a", "aac", "-b:a", strconv.Itoa(max(opts.Bitrate, 64))+"k", "-shortest", "-movflags", "+faststart")
	args = append(args, metadataArgs(opts.Tags)...)
	args = append(args, "-f", "mp4", "-y", "file:"+e.out)
	e.cmd = exec.CommandContext(ctx, tool, args...)
	e.cmd.Stderr = &e.stderr
	e.cmd.WaitDelay = 5 * time.Second
	if e.stdin, err = e.cmd.StdinPipe(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := e.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting ffmpeg for the audiogram: %w", err)
	}
	return e, nil
}

func squareCenter(b image.Rectangle) image.Rectangle {
	side := min(b.Dx(), b.Dy())
	x0 := b.Min.X + (b.Dx()-side)/2
	y0 := b.Min.Y + (b.Dy()-side)/2
	b.Min.X, b.Min.Y = x0, y0
	b.Max.X, b.Max.Y = x0+side, y0+side
	return b
}

// metadataArgs writes tags as ffmpeg -metadata options (MP4 keys).
func metadataArgs(t audio.Tags) []string {
	var args []string
	add := func(k, v string) {
		if v != "" {
			args = append(args, "-metadata", k+"="+v)
		}
	}
	add("title", t.Title)
	add("artist", t.Artist)
	add("album", t.Album)
	add("genre", t.Genre)
	add("date", t.Year)
	add("track", t.Track)
	add("comment", t.Summary)
	add("copyright", t.License)
	return args
}

// Write implements audio.Sink.
func (e *audiogramEncoder) Write(src audio.Buffer) error {
	if e.err != nil {
		return e.err
	}
	if len(src) != e.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel audiogram", audio.ErrFormatMismatch, len(src), e.format.Channels)
	}
	need := src.Frames() * e.format.Channels * 8
	if cap(e.scratch) < need {
		e.scratch = make([]byte, need)
	}
	audio.EncodePCM(e.scratch[:need], src, 0, src.Frames(), audio.Float64)
	if _, err := e.stdin.Write(e.scratch[:need]); err != nil {
		e.err = e.fail(err)
		return e.err
	}
	return nil
}

func (e *audiogramEncoder) fail(err error) error {
	e.stdin.Close()
	werr := e.cmd.Wait()
	if e.ctx.Err() != nil {
		return e.ctx.Err()
	}
	if werr != nil {
		err = werr
	}
	return fmt.Errorf("%w: ffmpeg rendering the audiogram: %v: %s", audio.ErrUnsupported, err, bytes.TrimSpace(e.stderr.Bytes()))
}

// Close finishes the video, copies it to the writer and removes the
// temporary directory, whatever happened.
func (e *audiogramEncoder) Close() error {
	if e.closed {
		return e.closeErr
	}
	e.closed = true
	e.closeErr = e.finish()
	return e.closeErr
}

func (e *audiogramEncoder) finish() error {
	defer os.RemoveAll(e.dir)
	if e.err != nil {
		return e.err
	}
	e.err = fmt.Errorf("audiogram encoder: %w", os.ErrClosed)
	e.stdin.Close()
	if err := e.cmd.Wait(); err != nil {
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		return fmt.Errorf("%w: ffmpeg rendering the audiogram: %v: %s", audio.ErrUnsupported, err, bytes.TrimSpace(e.stderr.Bytes()))
	}
	f, err := os.Open(e.out)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(e.w, f); err != nil {
		return fmt.Errorf("writing the audiogram: %w", err)
	}
	return nil
}
