package artwork

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

func encodePNG(t testing.TB, img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestResizeAreaAverages(t *testing.T) {
	// A 4x4 checkerboard of black and white averages to mid gray at 2x2.
	src := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			v := uint8(0)
			if (x+y)%2 == 0 {
				v = 255
			}
			src.Set(x, y, color.RGBA{v, v, v, 255})
		}
	}
	dst := ResizeArea(src, src.Bounds(), 2, 2)
	for y := 0; y < 2; y++ {
		for x := 0; x < 2; x++ {
			if c := dst.RGBAAt(x, y); c.R != 128 || c.A != 255 {
				t.Errorf("pixel %d,%d = %v, want gray 128", x, y, c)
			}
		}
	}
	// Fractional coverage: a row 0,255,0 to 2 pixels; each covers 1.5
	// source pixels, half of the white one: 255*0.5/1.5 = 85.
	row := image.NewRGBA(image.Rect(0, 0, 3, 1))
	row.Set(1, 0, color.RGBA{255, 255, 255, 255})
	row.Set(0, 0, color.RGBA{0, 0, 0, 255})
	row.Set(2, 0, color.RGBA{0, 0, 0, 255})
	d := ResizeArea(row, row.Bounds(), 2, 1)
	for x := 0; x < 2; x++ {
		if c := d.RGBAAt(x, 0); c.R != 85 {
			t.Errorf("fractional pixel %d = %d, want 85", x, c.R)
		}
	}
	// Enlarging repeats pixels (box filter).
	up := ResizeArea(row, row.Bounds(), 6, 1)
	want := []uint8{0, 0, 255, 255, 0, 0}
	for x, w := range want {
		if c := up.RGBAAt(x, 0); c.R != w {
			t.Errorf("enlarged pixel %d = %d, want %d", x, c.R, w)
		}
	}
}

func TestThumbnailCropsCenter(t *testing.T) {
	// 400x300: red left of x=200, blue right. The center square is
	// x 50..350, so the thumbnail is half red, half blue.
	src := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for y := 0; y < 300; y++ {
		for x := 0; x < 400; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 200 {
				c = color.RGBA{0, 0, 255, 255}
			}
			src.Set(x, y, c)
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		tol  int
	}{
		{"png", encodePNG(t, src), 0},
		{"jpeg", func() []byte {
			var b bytes.Buffer
			jpeg.Encode(&b, src, &jpeg.Options{Quality: 95})
			return b.Bytes()
		}(), 12},
	} {
		out, err := Thumbnail(tc.data, ThumbnailSize)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		img, format, err := image.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if format != "png" {
			t.Errorf("%s: thumbnail is %s, want png", tc.name, format)
		}
		if img.Bounds().Dx() != ThumbnailSize || img.Bounds().Dy() != ThumbnailSize {
			t.Fatalf("%s: thumbnail %v", tc.name, img.Bounds())
		}
		near := func(got uint32, want int) bool {
			d := int(got>>8) - want
			return d >= -tc.tol && d <= tc.tol
		}
		for _, p := range []struct{ x, r, b int }{{10, 255, 0}, {98, 255, 0}, {101, 0, 255}, {190, 0, 255}} {
			r, _, b, _ := img.At(p.x, 100).RGBA()
			if !near(r, p.r) || !near(b, p.b) {
				t.Errorf("%s: pixel x=%d is r=%d b=%d, want r=%d b=%d", tc.name, p.x, r>>8, b>>8, p.r, p.b)
			}
		}
	}
}

func TestImageTypeRejects(t *testing.T) {
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	for name, data := range map[string][]byte{
		"empty": nil, "text": []byte("not an image"), "gif": gif,
		"truncated png": encodePNG(t, image.NewRGBA(image.Rect(0, 0, 10, 10)))[:30],
	} {
		if _, err := ImageType(data); !errors.Is(err, ErrImage) {
			t.Errorf("%s: ImageType = %v, want ErrImage", name, err)
		}
	}
	// A header claiming 100000x100000 pixels is refused before decoding.
	huge := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)))
	huge[16], huge[17], huge[18], huge[19] = 0, 1, 0x86, 0xa0
	huge[20], huge[21], huge[22], huge[23] = 0, 1, 0x86, 0xa0
	if _, err := ImageType(huge); !errors.Is(err, ErrImage) {
		t.Errorf("huge: ImageType = %v, want ErrImage", err)
	}
}

func TestConvertImage(t *testing.T) {
	data := encodePNG(t, image.NewRGBA(image.Rect(0, 0, 8, 8)))
	same, err := ConvertImage(data, "png")
	if err != nil || !bytes.Equal(same, data) {
		t.Errorf("png to png should be unchanged: %v", err)
	}
	jp, err := ConvertImage(data, "jpg")
	if err != nil {
		t.Fatal(err)
	}
	if mime, err := ImageType(jp); err != nil || mime != "image/jpeg" {
		t.Errorf("png to jpg gave %s, %v", mime, err)
	}
}

func FuzzThumbnail(f *testing.F) {
	f.Add(encodePNG(f, image.NewRGBA(image.Rect(0, 0, 3, 5))))
	var b bytes.Buffer
	jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 9, 4)), nil)
	f.Add(b.Bytes())
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Thumbnail(data, 16)
		if err != nil {
			if !errors.Is(err, ErrImage) {
				t.Fatalf("error %v does not wrap ErrImage", err)
			}
			return
		}
		img, _, err := image.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("thumbnail does not decode: %v", err)
		}
		if img.Bounds().Dx() != 16 || img.Bounds().Dy() != 16 {
			t.Fatalf("thumbnail is %v", img.Bounds())
		}
	})
}
