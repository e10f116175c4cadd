package artwork

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
)

// ErrImage means a cover image is not a PNG or JPEG picture this package
// can use (damaged, another type, or absurdly large).
var ErrImage = errors.New("production: unusable cover image")

// Limits on cover images: a hostile header must not make us allocate
// gigabytes, while every real cover fits.
const (
	maxImageSide   = 10000
	maxImagePixels = 40 << 20
	// ThumbnailSize is the side of the square thumbnail, in pixels.
	ThumbnailSize = 200
	jpegQuality   = 88
)

// ImageType returns the MIME type of a PNG or JPEG image after checking
// its header: ErrImage for anything else or for dimensions beyond the
// limits.
func ImageType(data []byte) (string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxImageSide || cfg.Height > maxImageSide || cfg.Width*cfg.Height > maxImagePixels {
		return "", fmt.Errorf("%w: %dx%d pixels", ErrImage, cfg.Width, cfg.Height)
	}
	switch format {
	case "png":
		return "image/png", nil
	case "jpeg":
		return "image/jpeg", nil
	}
	return "", fmt.Errorf("%w: %s images are not supported (use PNG or JPEG)", ErrImage, format)
}

// DecodeImage decodes a checked PNG or JPEG image.
func DecodeImage(data []byte) (image.Image, string, error) {
	mime, err := ImageType(data)
	if err != nil {
		return nil, "", err
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	return img, mime, nil
}

// Thumbnail returns the center square of a PNG or JPEG image scaled to
// size x size pixels by area averaging, as PNG whatever the original's
// type: its stored name ends in .png (ThumbnailName), PNG keeps
// transparency, and at this size the encoding hardly changes the bytes.
func Thumbnail(data []byte, size int) ([]byte, error) {
	img, _, err := DecodeImage(data)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	crop := image.Rect(0, 0, side, side).Add(image.Pt(b.Min.X+(b.Dx()-side)/2, b.Min.Y+(b.Dy()-side)/2))
	return EncodeImage(ResizeArea(img, crop, size, size), "image/png")
}

// ConvertImage returns data unchanged when it already is of the type the
// file ending (jpg, jpeg or png) names, and re-encoded otherwise.
func ConvertImage(data []byte, ending string) ([]byte, error) {
	want := "image/jpeg"
	if ending == "png" {
		want = "image/png"
	}
	img, mime, err := DecodeImage(data)
	if err != nil {
		return nil, err
	}
	if mime == want {
		return data, nil
	}
	return EncodeImage(img, want)
}

func EncodeImage(img image.Image, mime string) ([]byte, error) {
	var b bytes.Buffer
	var err error
	if mime == "image/png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: jpegQuality})
	}
	return b.Bytes(), err
}

// ResizeArea scales the part r of src to w x h pixels. Every output pixel
// is the average of the source area it covers, partly covered source
// pixels weighted by the covered fraction, in premultiplied RGBA: the
// right filter for downscaling (no aliasing, no ringing), and a box
// filter when enlarging.
func ResizeArea(src image.Image, r image.Rectangle, w, h int) *image.RGBA {
	r = r.Intersect(src.Bounds())
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if r.Empty() || w <= 0 || h <= 0 {
		return dst
	}
	rgba, ok := src.(*image.RGBA)
	if !ok || rgba.Bounds() != r {
		rgba = image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		draw.Draw(rgba, rgba.Bounds(), src, r.Min, draw.Src)
	} else {
		rgba = rgba.SubImage(r).(*image.RGBA)
	}
	sw, sh := r.Dx(), r.Dy()
	xs := areaWeights(sw, w)
	ys := areaWeights(sh, h)
	// Horizontal pass into a float buffer of w x sh, then vertical.
	tmp := make([]float64, w*sh*4)
	for y := 0; y < sh; y++ {
		row := rgba.Pix[y*rgba.Stride:]
		for x, ws := range xs {
			var acc [4]float64
			for _, t := range ws {
				p := row[t.i*4 : t.i*4+4]
				for c := 0; c < 4; c++ {
					acc[c] += float64(p[c]) * t.w
				}
			}
			copy(tmp[(y*w+x)*4:], acc[:])
		}
	}
	for y, ws := range ys {
		for x := 0; x < w; x++ {
			var acc [4]float64
			for _, t := range ws {
				p := tmp[(t.i*w+x)*4:]
				for c := 0; c < 4; c++ {
					acc[c] += p[c] * t.w
				}
			}
			o := dst.Pix[y*dst.Stride+x*4:]
			for c := 0; c < 4; c++ {
				o[c] = clamp8(acc[c])
			}
		}
	}
	return dst
}

type tap struct {
	i int
	w float64
}

// areaWeights returns, for each of n output cells over m input cells, the
// input cells it covers with weights summing to 1.
func areaWeights(m, n int) [][]tap {
	out := make([][]tap, n)
	scale := float64(m) / float64(n)
	for j := range out {
		a, b := float64(j)*scale, float64(j+1)*scale
		var taps []tap
		for i := int(a); i < m && float64(i) < b; i++ {
			lo, hi := max(a, float64(i)), min(b, float64(i+1))
			if hi > lo {
				taps = append(taps, tap{i, (hi - lo) / scale})
			}
		}
		out[j] = taps
	}
	return out
}

func clamp8(v float64) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}
