package ffmpeg

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/audiopost/audiopost/audio"
)

// Scene is the picture of a video rendered from audio (NewRenderEncoder):
// a still background, with the live waveform of the audio (ffmpeg's
// showwaves) drawn across its lower part.
type Scene struct {
	// Width and Height of the video in pixels; both even (H.264 in
	// 4:2:0 needs them so).
	Width, Height int
	// Background is a PNG or JPEG image of Width x Height pixels; nil
	// fills the frame with Color.
	Background []byte
	// Color is the background without an image, "0xRRGGBB".
	Color string
	// WaveHeight is the height of the waveform band (0: no waveform) and
	// WaveBottom its distance from the bottom edge.
	WaveHeight, WaveBottom int
	// FPS is the frame rate (default 15: a still picture needs few frames
	// and the waveform moves smoothly enough).
	FPS int
	// Container is mp4 (the default), mov, matroska or webm. WebM gets
	// VP8 video and Opus audio, the others H.264 and AAC.
	Container string
}

// renderContainers are the containers of a rendered video: those of a
// remuxed one.
var renderContainers = videoContainers

var colorRE = regexp.MustCompile(`^0x[0-9a-fA-F]{6}$`)

// NewRenderEncoder returns an Encoder of a video made from the PCM written
// to it: the scene's picture with the audio, tagged and with chapters as
// the container allows (a cover is not embedded: it is the picture).
// opts.Bitrate sets the audio bitrate (default 128 kbps AAC, 96 kbps
// Opus). The video is assembled in a temporary file and copied into w by
// Close.
func NewRenderEncoder(ctx context.Context, w io.Writer, scene Scene, f audio.Format, opts audio.EncodeOptions) (*Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if scene.Container == "" {
		scene.Container = "mp4"
	}
	of, ok := renderContainers[scene.Container]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: rendered video in a %q container", audio.ErrUnsupported, scene.Container)
	case scene.Width < 16 || scene.Height < 16 || scene.Width > 4096 || scene.Height > 4096 || scene.Width%2 != 0 || scene.Height%2 != 0:
		return nil, fmt.Errorf("%w: video of %dx%d pixels", audio.ErrUnsupported, scene.Width, scene.Height)
	case scene.WaveHeight < 0 || scene.WaveBottom < 0 || scene.WaveHeight+scene.WaveBottom > scene.Height:
		return nil, fmt.Errorf("%w: waveform of %d pixels %d above the bottom of a %d pixel video", audio.ErrUnsupported, scene.WaveHeight, scene.WaveBottom, scene.Height)
	case scene.Background == nil && !colorRE.MatchString(scene.Color):
		return nil, fmt.Errorf("%w: background color %q (want 0xRRGGBB)", audio.ErrUnsupported, scene.Color)
	case opts.Bitrate < 0 || opts.Bitrate > 1024:
		return nil, fmt.Errorf("%w: video audio bitrate %d kbps", audio.ErrUnsupported, opts.Bitrate)
	}
	if scene.FPS <= 0 {
		scene.FPS = 15
	}
	tool, err := lookTool("ffmpeg", "rendering video")
	if err != nil {
		return nil, err
	}
	opts.Tags.Cover = nil
	e := &Encoder{ctx: ctx, name: "video", of: of, scene: &scene, format: f, opts: opts, w: w, tool: tool, stderr: new(stderrBuffer), done: make(chan struct{})}
	if err := e.start(); err != nil {
		e.removeTemps()
		return nil, err
	}
	return e, nil
}

// sceneArgs returns the input arguments of the scene (input 1) and the
// filter and mapping arguments that make its video stream from it and
// the audio (input 0).
func (e *Encoder) sceneArgs() (inputs, maps []string, err error) {
	s := e.scene
	fps := strconv.Itoa(s.FPS)
	size := fmt.Sprintf("%dx%d", s.Width, s.Height)
	if s.Background != nil {
		ext, err := coverExt(&audio.Picture{Data: s.Background})
		if err != nil {
			return nil, nil, err
		}
		bg, err := e.writeTemp("audiopost-scene-*"+ext, s.Background)
		if err != nil {
			return nil, nil, err
		}
		inputs = []string{"-loop", "1", "-framerate", fps, "-i", "file:" + bg}
	} else {
		inputs = []string{"-f", "lavfi", "-i", "color=c=" + s.Color + ":s=" + size + ":r=" + fps}
	}
	// The background is scaled to the frame whatever it is, so a wrong
	// size costs sharpness, not the production.
	filter := fmt.Sprintf("[1:v]scale=%d:%d,setsar=1[bg]", s.Width, s.Height)
	if s.WaveHeight > 0 {
		filter += fmt.Sprintf(";[0:a]showwaves=s=%dx%d:mode=cline:rate=%s:colors=white[w];[bg][w]overlay=0:H-h-%d:shortest=1",
			s.Width, s.WaveHeight, fps, s.WaveBottom)
	} else {
		filter += ";[bg]null"
	}
	filter += ",format=yuv420p[v]"
	maps = []string{"-filter_complex", filter, "-map", "[v]", "-r", fps}
	if e.of.muxer == "webm" {
		// One thread: libvpx's VP8 encoder, given a thread a core by
		// default, synchronises its threads by spinning, which burns a
		// core whenever the other thread waits, all the more on a busy
		// machine. 6 s of 1280x720 at 15 fps from PCM on a pipe, two
		// cores at a load of 5, three runs each: 1.7-6.6 s of CPU with
		// the default threads, 1.5 s with one, and no slower in wall
		// clock (1.6-2.3 s against 1.9-11.4 s). libx264, which waits on
		// condition variables, took 1.4 s either way and keeps its
		// threads.
		maps = append(maps, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "500k", "-threads:v", "1")
	} else {
		maps = append(maps, "-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage", "-crf", "28")
	}
	// The looped picture never ends: the audio sets the length.
	return inputs, append(maps, "-shortest"), nil
}
