package engine

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"

	"github.com/audiopost/audiopost/production/artwork"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
)

// Videos rendered from the processed audio (ffmpeg.NewRenderEncoder, in
// the same single pass as every other output):
//
//   - audiogram: a square MP4 (H.264 + AAC) of the cover, center-cropped,
//     with the live waveform across its lower part; without a cover the
//     background is a plain dark color.
//   - video of an audio-only input (the spec's "a video is generated from
//     audio"): 1280x720, the cover center-cropped to a square in the
//     middle of a dark frame, with the live waveform across the lower
//     part; without a cover, the waveform in the middle of the frame. The
//     container follows the output's ending (mp4 and m4v: MP4, mov, mkv:
//     Matroska, webm: WebM with VP8 and Opus).
//
// Both carry the tags and chapters as the container allows; a chapter
// part shows its chapter's picture when it has one.
const (
	audiogramSide = 640
	videoWidth    = 1280
	videoHeight   = 720
	sceneColor    = "0x1e293b"
)

// sceneBackground is sceneColor as a color.
var sceneBackground = color.RGBA{0x1e, 0x29, 0x3b, 0xff}

// renderContainers maps the endings of a video output to the container
// of a rendered video.
var renderContainers = map[string]string{"": "mp4", "mp4": "mp4", "m4v": "mp4", "mov": "mov", "mkv": "matroska", "webm": "webm"}

// sceneFor returns the picture of a rendered video of format ("audiogram"
// or "video") with the given ending, showing cover (nil: none).
func sceneFor(format, ending string, cover *audio.Picture) (ffmpeg.Scene, error) {
	s := ffmpeg.Scene{Color: sceneColor, Container: renderContainers[ending]}
	if s.Container == "" {
		return s, fmt.Errorf("%w: a video generated from audio cannot be a .%s file", audio.ErrUnsupported, ending)
	}
	var img image.Image
	if cover != nil {
		// Re-encoded as PNG so ffmpeg never sees untrusted image bytes.
		var err error
		if img, _, err = artwork.DecodeImage(cover.Data); err != nil {
			return s, fmt.Errorf("video picture: %w", err)
		}
	}
	var frame image.Image
	if format == "audiogram" {
		s.Width, s.Height = audiogramSide, audiogramSide
		s.WaveHeight, s.WaveBottom = audiogramSide/4, audiogramSide/10
		if img != nil {
			frame = artwork.ResizeArea(img, squareCenter(img.Bounds()), audiogramSide, audiogramSide)
		}
	} else {
		s.Width, s.Height = videoWidth, videoHeight
		s.WaveHeight, s.WaveBottom = videoHeight/4, videoHeight/10
		if img != nil {
			canvas := image.NewRGBA(image.Rect(0, 0, videoWidth, videoHeight))
			draw.Draw(canvas, canvas.Bounds(), image.NewUniform(sceneBackground), image.Point{}, draw.Src)
			sq := artwork.ResizeArea(img, squareCenter(img.Bounds()), videoHeight, videoHeight)
			x := (videoWidth - videoHeight) / 2
			draw.Draw(canvas, image.Rect(x, 0, x+videoHeight, videoHeight), sq, image.Point{}, draw.Src)
			frame = canvas
		} else {
			s.WaveHeight, s.WaveBottom = videoHeight/2, videoHeight/4
		}
	}
	if frame != nil {
		data, err := artwork.EncodeImage(frame, "image/png")
		if err != nil {
			return s, fmt.Errorf("video picture: %w", err)
		}
		s.Background = data
	}
	return s, nil
}

func squareCenter(b image.Rectangle) image.Rectangle {
	side := min(b.Dx(), b.Dy())
	x0 := b.Min.X + (b.Dx()-side)/2
	y0 := b.Min.Y + (b.Dy()-side)/2
	b.Min.X, b.Min.Y = x0, y0
	b.Max.X, b.Max.Y = x0+side, y0+side
	return b
}
