package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
)

// videoContainers maps a probed container to the muxer, audio codec and
// default audio bitrate of the API's "video" output: same container as the
// input, the video copied, the audio re-encoded.
var videoContainers = map[string]outputFormat{
	"mp4":      {codec: []string{"aac"}, muxer: "mp4", ext: ".mp4", defaultKbps: 128, maxChannels: 8, seekable: true, tags: styleMP4},
	"mov":      {codec: []string{"aac"}, muxer: "mov", ext: ".mov", defaultKbps: 128, maxChannels: 8, seekable: true, tags: styleMP4},
	"matroska": {codec: []string{"aac"}, muxer: "matroska", ext: ".mkv", defaultKbps: 128, maxChannels: 8, seekable: true, tags: styleMatroska},
	"webm":     {codec: []string{"libopus"}, muxer: "webm", ext: ".webm", defaultKbps: 96, maxChannels: 8, seekable: true, tags: styleMatroska},
}

// NewVideoEncoder returns an Encoder for the API's "video" output: the
// video streams of the file at videoPath are copied unchanged and the PCM
// written to the encoder becomes its audio, in the input's container (MP4,
// MOV, Matroska or WebM; AAC audio, Opus in WebM). opts.Bitrate sets the
// audio bitrate (default 128 kbps AAC, 96 kbps Opus); tags replace the
// original's metadata and chapters are added; a cover is not embedded in
// video. The output is assembled in a temporary file and copied into w by
// Close, like every MP4 output.
func NewVideoEncoder(ctx context.Context, w io.Writer, videoPath string, f audio.Format, opts audio.EncodeOptions) (*Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tool, err := lookTool("ffmpeg", "remuxing video")
	if err != nil {
		return nil, err
	}
	vf, err := os.Open(videoPath)
	if err != nil {
		return nil, err
	}
	arg, ok := fileInput(vf)
	det, perr := ProbeDetails(ctx, vf)
	vf.Close()
	if perr != nil {
		return nil, fmt.Errorf("%s: %w", videoPath, perr)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a regular file", audio.ErrUnsupported, videoPath)
	}
	if !det.HasVideo {
		return nil, fmt.Errorf("%w: %s has no video stream to remux", audio.ErrUnsupported, videoPath)
	}
	container := det.Container
	if container == "matroska" && (det.VideoCodec == "vp8" || det.VideoCodec == "vp9" || det.VideoCodec == "av1") {
		container = "webm"
	}
	of, ok := videoContainers[container]
	if !ok {
		return nil, fmt.Errorf("%w: video output in a %s container", audio.ErrUnsupported, container)
	}
	if opts.Bitrate < 0 || opts.Bitrate > 1024 {
		return nil, fmt.Errorf("%w: video audio bitrate %d kbps", audio.ErrUnsupported, opts.Bitrate)
	}
	opts.Tags.Cover = nil
	e := &Encoder{ctx: ctx, name: "video", of: of, video: arg, format: f, opts: opts, w: w, tool: tool, stderr: new(stderrBuffer), done: make(chan struct{})}
	if err := e.start(); err != nil {
		e.removeTemps()
		return nil, err
	}
	return e, nil
}

// RemuxVideo writes to w the video at videoPath with its audio replaced by
// src, encoded as NewVideoEncoder describes. It returns once the output is
// complete.
func RemuxVideo(ctx context.Context, w io.Writer, videoPath string, src audio.Source, opts audio.EncodeOptions) error {
	e, err := NewVideoEncoder(ctx, w, videoPath, src.Format(), opts)
	if err != nil {
		return err
	}
	if _, err := audio.Copy(ctx, e, src); err != nil {
		e.Close()
		return err
	}
	return e.Close()
}

// coverLimit bounds an extracted picture; real cover art is far smaller.
const coverLimit = 32 << 20

// ExtractCover returns the embedded cover picture (ID3 APIC, MP4 covr,
// FLAC or Vorbis picture) of the input, or ErrNoCover. r must be an
// *os.File or an io.ReadSeeker, since the input is read twice: once to find
// the picture and once to copy it out.
func ExtractCover(ctx context.Context, r io.Reader) (*audio.Picture, error) {
	if _, ok := r.(io.Seeker); !ok {
		return nil, fmt.Errorf("%w: cover extraction needs a seekable input", audio.ErrUnsupported)
	}
	det, err := ProbeDetails(ctx, r)
	if err != nil {
		return nil, err
	}
	if det.CoverStream < 0 {
		return nil, ErrNoCover
	}
	tool, err := lookTool("ffmpeg", "extracting the cover of "+det.Format)
	if err != nil {
		return nil, err
	}
	in := newInput(r)
	// The attached picture is a single packet; copying it to image2pipe
	// writes its bytes unchanged.
	args := append(baseArgs(), "-i", in.arg, "-map", "0:"+strconv.Itoa(det.CoverStream),
		"-c", "copy", "-frames:v", "1", "-f", "image2pipe", "pipe:1")
	cmd := procpool.Command(ctx, tool, args...)
	var out limitedBuffer
	var stderr stderrBuffer
	cmd.Stdin = in.stdin
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	err = cmd.Run()
	if in.rewind != nil {
		if rerr := in.rewind(); rerr != nil && err == nil {
			err = fmt.Errorf("ffmpeg: rewinding input after cover extraction: %w", rerr)
		}
	}
	if err != nil {
		if errors.Is(err, procpool.ErrClosed) {
			return nil, err
		}
		return nil, exitError(ctx, run{tool: "ffmpeg", what: "extracting the cover of " + det.Format, format: det.Format, input: true}, err, &stderr)
	}
	data := bytes.Clone(out.Bytes())
	if len(data) == 0 || len(data) > coverLimit {
		return nil, fmt.Errorf("%w: cover picture of %d bytes", audio.ErrMalformed, len(data))
	}
	return &audio.Picture{MIMEType: det.Tags.Cover.MIMEType, Data: data, Size: len(data)}, nil
}

// ExtractCoverFile is ExtractCover on the named file.
func ExtractCoverFile(ctx context.Context, path string) (*audio.Picture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ExtractCover(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
