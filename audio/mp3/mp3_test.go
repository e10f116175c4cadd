package mp3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	gomp3 "github.com/hajimehoshi/go-mp3"
)

func mustOpen(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// onlyReader hides Seek, as a network body would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// makeMP3 encodes a test signal with ffmpeg/libmp3lame into dir and returns
// the path. Channels carry different content so that a swap would show.
func makeMP3(t testing.TB, dir, name string, rate, channels int, dur float64, args ...string) string {
	t.Helper()
	exprs := "0.5*sin(2*PI*440*t)+0.2*sin(2*PI*(200+900*t)*t)|0.4*sin(2*PI*700*t)+0.1*sin(2*PI*5000*t)"
	if channels == 1 {
		exprs = exprs[:strings.IndexByte(exprs, '|')]
	}
	path := filepath.Join(dir, name)
	a := []string{"-v", "error", "-y", "-f", "lavfi", "-i", fmt.Sprintf("aevalsrc=exprs=%s:s=%d:d=%g", exprs, rate, dur)}
	a = append(a, args...)
	a = append(a, "-c:a", "libmp3lame", path)
	run(t, "ffmpeg", a...)
	return path
}

func TestDecodeMatchesFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		rate, ch int
		args     []string
	}{
		{"cbr128_stereo_44k", 44100, 2, []string{"-b:a", "128k"}},
		{"vbr_stereo_48k", 48000, 2, []string{"-q:a", "2"}},
		{"cbr64_mono_44k", 44100, 1, []string{"-b:a", "64k"}},
		{"vbr_mono_48k", 48000, 1, []string{"-q:a", "5"}},
		{"mpeg2_stereo_22k", 22050, 2, []string{"-b:a", "48k"}},
		{"mpeg2_mono_22k_vbr", 22050, 1, []string{"-q:a", "6"}},
		{"mpeg2_24k", 24000, 2, []string{"-b:a", "64k"}},
		{"cbr_no_xing", 44100, 2, []string{"-b:a", "96k", "-write_xing", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := makeMP3(t, dir, tc.name+".mp3", tc.rate, tc.ch, 2.3, tc.args...)
			want := ffmpegF64(t, path, tc.ch)
			got, info := decodeAll(t, mustOpen(t, path))
			if info.Channels != tc.ch || info.SampleRate != tc.rate || info.Format != "mp3" {
				t.Fatalf("Info = %+v", info)
			}
			if d := got.Frames() - want.Frames(); d > 1152 || d < -1152 {
				t.Errorf("decoded %d frames, ffmpeg %d", got.Frames(), want.Frames())
			}
			for c := range got {
				if r := testaudio.Correlation(got[c], want[c]); r < 0.999 {
					t.Errorf("channel %d: correlation with ffmpeg %.5f, want > 0.999", c, r)
				}
			}
			// Duration from the header, without decoding.
			if d := info.Frames - int64(want.Frames()); d > 1152 || d < -1152 {
				t.Errorf("Info.Frames = %d, ffmpeg decodes %d", info.Frames, want.Frames())
			}
			if math.Abs(info.Length-float64(want.Frames())/float64(tc.rate)) > 1152.0/float64(tc.rate) {
				t.Errorf("Length = %v", info.Length)
			}
			if info.Bitrate < 8 || info.Bitrate > 330 {
				t.Errorf("Bitrate = %v kbps", info.Bitrate)
			}
		})
	}
}

// TestGoMP3Delay measures by cross-correlation how far go-mp3's output is
// shifted against ffmpeg's, the constant goMP3Delay compensates. The
// alignment after trimming must be exact.
func TestGoMP3Delay(t *testing.T) {
	need.Program(t, "ffmpeg")
	path := makeMP3(t, t.TempDir(), "d.mp3", 44100, 2, 1.5, "-b:a", "160k")
	want := ffmpegF64(t, path, 2)
	got, _ := decodeAll(t, mustOpen(t, path))
	best, bestR := 0, -2.0
	for lag := -1200; lag <= 1200; lag++ {
		x, y := got[0], want[0]
		if lag >= 0 {
			x = x[lag:]
		} else {
			y = y[-lag:]
		}
		if r := testaudio.Correlation(x, y); r > bestR {
			best, bestR = lag, r
		}
	}
	t.Logf("go-mp3 lags ffmpeg by %d samples after compensation (r=%.6f)", best, bestR)
	if best != 0 {
		t.Errorf("residual delay %d samples: goMP3Delay should be %d", best, goMP3Delay+best)
	}
	if got.Frames() != want.Frames() {
		t.Errorf("length %d, ffmpeg %d", got.Frames(), want.Frames())
	}
}

func TestDurationWithoutDecoding(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	xing := makeMP3(t, dir, "x.mp3", 44100, 2, 3.1, "-b:a", "128k")
	plain := makeMP3(t, dir, "p.mp3", 44100, 2, 3.1, "-b:a", "128k", "-write_xing", "0")
	truth := ffmpegF64(t, plain, 2).Frames()
	ctx := context.Background()
	// Xing frame count: known even on a plain reader.
	data, _ := os.ReadFile(xing)
	info, err := Probe(ctx, onlyReader{bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != int64(ffmpegF64(t, xing, 2).Frames()) {
		t.Errorf("Xing: Frames = %d", info.Frames)
	}
	// No Xing, seekable: frame headers are counted.
	info, err = Probe(ctx, mustOpen(t, plain))
	if err != nil {
		t.Fatal(err)
	}
	if d := info.Frames - int64(truth); d != 0 {
		t.Errorf("scanned Frames = %d, ffmpeg decodes %d", info.Frames, truth)
	}
	if math.Abs(info.Bitrate-128) > 1 {
		t.Errorf("scanned Bitrate = %v, want 128", info.Bitrate)
	}
	// No Xing, not seekable: unknown.
	data, _ = os.ReadFile(plain)
	info, err = Probe(ctx, onlyReader{bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != -1 {
		t.Errorf("unseekable Frames = %d, want -1", info.Frames)
	}
	// Counting restored the position: decoding still gets everything.
	f := mustOpen(t, plain)
	d, err := NewDecoder(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.ReadAll(ctx, d)
	if err != nil || b.Frames() != truth {
		t.Errorf("after counting, decoded %d frames (%v), want %d", b.Frames(), err, truth)
	}
}

func TestCheckSource(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	for _, ch := range []int{1, 2} {
		path := makeMP3(t, dir, fmt.Sprintf("c%d.mp3", ch), 44100, ch, 0.7, "-b:a", "96k")
		data, _ := os.ReadFile(path)
		got := audiotest.CheckSource(t, func() audio.Source {
			d, err := NewDecoder(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
		if got.Channels() != ch {
			t.Errorf("%d channels, want %d", got.Channels(), ch)
		}
	}
}

func testCover(t testing.TB) []byte {
	img := image.NewGray(image.Rect(0, 0, 20, 10))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 13)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestTagsFromFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	cover := filepath.Join(dir, "cover.png")
	coverData := testCover(t)
	if err := os.WriteFile(cover, coverData, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"3", "4"} {
		t.Run("id3v2."+v, func(t *testing.T) {
			path := filepath.Join(dir, "t"+v+".mp3")
			run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=44100:duration=1",
				"-i", cover, "-map", "0", "-map", "1", "-c:a", "libmp3lame", "-b:a", "64k", "-c:v", "copy",
				"-id3v2_version", v, "-metadata:s:v", "comment=Cover (front)",
				"-metadata", "title=Tïtle "+v, "-metadata", "artist=Ärtist", "-metadata", "album=Album",
				"-metadata", "track=4/9", "-metadata", "date=2023", "-metadata", "genre=Podcast",
				"-metadata", "comment=A comment", "-metadata", "publisher=Pub Co", path)
			info, err := audio.ProbeFile(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			tg := info.Tags
			want := audio.Tags{Title: "Tïtle " + v, Artist: "Ärtist", Album: "Album", Track: "4/9", Year: "2023",
				Genre: "Podcast", Comment: "A comment", Publisher: "Pub Co"}
			if tg.Cover == nil || !bytes.Equal(tg.Cover.Data, coverData) || tg.Cover.MIMEType != "image/png" {
				t.Errorf("cover = %+v", tg.Cover)
			}
			tg.Cover = nil
			if tg != want {
				t.Errorf("tags = %+v\nwant %+v", tg, want)
			}
			// The big tag hides the first frame from Match, which must still
			// claim the file; decoding must skip the tag.
			got, _ := decodeAll(t, mustOpen(t, path))
			if d := got.Frames() - 44100; d > 1152 || d < -1152 {
				t.Errorf("decoded %d frames, want ~44100", got.Frames())
			}
		})
	}
	t.Run("id3v1", func(t *testing.T) {
		// ffmpeg writes ID3v1 only together with ID3v2: cut the ID3v2 tag.
		path := filepath.Join(dir, "v1.mp3")
		run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=44100:duration=1",
			"-c:a", "libmp3lame", "-write_id3v1", "1",
			"-metadata", "title=Old Title", "-metadata", "artist=Old Artist", "-metadata", "track=7",
			"-metadata", "date=1999", "-metadata", "genre=Speech", path)
		data, _ := os.ReadFile(path)
		data = data[id3.TagSize(data):]
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := audio.ProbeFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		tg := info.Tags
		if tg.Title != "Old Title" || tg.Artist != "Old Artist" || tg.Track != "7" || tg.Year != "1999" || tg.Genre != "Speech" {
			t.Errorf("ID3v1 tags = %+v", tg)
		}
		// The ID3v1 tag at the end is not audio.
		got, _ := decodeAll(t, mustOpen(t, path))
		want := ffmpegF64(t, path, 1)
		if got.Frames() != want.Frames() {
			t.Errorf("decoded %d frames, ffmpeg %d", got.Frames(), want.Frames())
		}
	})
}

func TestMatch(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	mp3 := makeMP3(t, dir, "m.mp3", 44100, 2, 0.5, "-b:a", "128k", "-id3v2_version", "0")
	mp3tag := makeMP3(t, dir, "mt.mp3", 44100, 2, 0.5, "-b:a", "128k", "-metadata", "title=x")
	mp2 := filepath.Join(dir, "m.mp2")
	run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "mp2", mp2)
	aac := filepath.Join(dir, "a.aac")
	run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "aac", "-f", "adts", aac)
	mp25 := makeMP3(t, dir, "m25.mp3", 11025, 1, 0.5, "-b:a", "16k", "-id3v2_version", "0")
	head := func(p string) []byte {
		b, _ := os.ReadFile(p)
		return b[:min(len(b), audio.SniffLen)]
	}
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i*7919>>3) | 0x80
	}
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"mp3", head(mp3), true},
		{"mp3 with ID3v2", head(mp3tag), true},
		{"mp2", head(mp2), false},
		{"adts aac", head(aac), false},
		{"mpeg-2.5", head(mp25), false},
		{"noise", noise, false},
		{"one sync word", []byte{0xFF, 0xFB, 0x90, 0x64, 1, 2, 3, 4}, false},
		{"wav", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), false},
		{"flac behind id3", append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), []byte("fLaC\x00\x00\x00\x22")...), false},
	} {
		if got := Match(tc.head); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := NewDecoder(context.Background(), mustOpen(t, mp25)); !errors.Is(err, ErrMPEG25) {
		t.Errorf("MPEG-2.5: err = %v, want ErrMPEG25", err)
	}
}

// frameOffsets returns the offsets of the frames of an MP3 without tags.
func frameOffsets(data []byte) []int {
	var offs []int
	for p := 0; p+4 <= len(data); {
		h, ok := parseHeader(data[p:])
		if !ok {
			break
		}
		offs = append(offs, p)
		p += h.size
	}
	return offs
}

// TestMalformedMPEG2 sets the mixed-block flag on MPEG-2 frames, which makes
// go-mp3 v0.3.4 index out of range. The decoder must conceal those frames,
// keep the length and decode the rest.
func TestMalformedMPEG2(t *testing.T) {
	need.Program(t, "ffmpeg")
	path := makeMP3(t, t.TempDir(), "m2.mp3", 22050, 1, 2, "-b:a", "32k", "-id3v2_version", "0", "-write_xing", "0")
	data, _ := os.ReadFile(path)
	clean, _ := decodeAll(t, bytes.NewReader(data))
	bad := bytes.Clone(data)
	offs := frameOffsets(bad)
	damaged := 0
	for i := 10; i < len(offs); i += 7 {
		// MPEG-2 mono side info: main_data_begin 8, private 1, then
		// part2_3 12, big_values 9, global_gain 8, scalefac_compress 9
		// (bit 47), window switching (bit 47), block type 2 bits, mixed.
		si := bad[offs[i]+4:]
		setBits(si, 47, 1, 1)
		setBits(si, 48, 2, 2)
		setBits(si, 50, 1, 1)
		damaged++
	}
	goPanics := panics(func() {
		d, err := gomp3.NewDecoder(bytes.NewReader(bad))
		if err != nil {
			return
		}
		io.Copy(io.Discard, d)
	})
	t.Logf("go-mp3 alone panics on this input: %v", goPanics)
	d, err := NewDecoder(context.Background(), bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	got, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got.Frames() != clean.Frames() {
		t.Errorf("damaged stream decodes to %d frames, clean to %d", got.Frames(), clean.Frames())
	}
	if d.Concealed() != int64(damaged) {
		t.Errorf("Concealed() = %d, want %d", d.Concealed(), damaged)
	}
	r := testaudio.Correlation(got[0], clean[0])
	t.Logf("%d of %d frames concealed; correlation with the clean decode %.4f", damaged, len(offs), r)
	if r < 0.9 {
		t.Errorf("correlation with the clean decode %.3f", r)
	}
}

func setBits(p []byte, pos, n int, v uint) {
	for i := 0; i < n; i++ {
		bit := (v >> uint(n-1-i)) & 1
		byteI, shift := (pos+i)/8, 7-uint((pos+i)%8)
		p[byteI] = p[byteI]&^(1<<shift) | byte(bit<<shift)
	}
}

func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// TestResync inserts junk between frames and truncates the last frame.
func TestResync(t *testing.T) {
	need.Program(t, "ffmpeg")
	path := makeMP3(t, t.TempDir(), "r.mp3", 44100, 2, 2, "-b:a", "128k", "-id3v2_version", "0", "-write_xing", "0")
	data, _ := os.ReadFile(path)
	clean, _ := decodeAll(t, bytes.NewReader(data))
	offs := frameOffsets(data)
	// Junk full of sync bytes and one valid header that no second header
	// follows, so only the two-header check can reject it.
	junk := bytes.Repeat([]byte{0x12, 0xFF, 0xFB, 0x33, 0xFF, 0xE0, 0x00}, 150)
	copy(junk[500:], []byte{0xFF, 0xFB, 0x90, 0x64})
	var bad []byte
	bad = append(bad, data[:offs[30]]...)
	bad = append(bad, junk...)
	bad = append(bad, data[offs[30]:len(data)-100]...)
	got, _ := decodeAll(t, bytes.NewReader(bad))
	if d := clean.Frames() - got.Frames(); d != 1152 {
		t.Errorf("decoded %d frames, clean %d: want exactly the truncated last frame missing", got.Frames(), clean.Frames())
	}
	for c := range got {
		if r := testaudio.Correlation(got[c], clean[c]); r < 0.999 {
			t.Errorf("channel %d: correlation %.4f after resync", c, r)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewDecoder(ctx, bytes.NewReader(make([]byte, 10000))); !errors.Is(err, audio.ErrMalformed) {
		t.Errorf("zeros: err = %v, want ErrMalformed", err)
	}
	if _, err := NewDecoder(ctx, strings.NewReader("ID3\x03\x00\x00\x00\x00\x10\x00short")); !errors.Is(err, audio.ErrMalformed) {
		t.Errorf("truncated tag: err = %v, want ErrMalformed", err)
	}
	d, err := NewDecoder(ctx, bytes.NewReader(append([]byte{0xFF, 0xFB, 0x90, 0x64}, make([]byte, 413)...)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(audio.NewBuffer(1, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("mono buffer for stereo: err = %v", err)
	}
}

// TestDecodeAllocs reports the allocations per 1152-frame Read, all of them
// go-mp3's (it allocates per frame); the conversion adds none.
func TestDecodeAllocs(t *testing.T) {
	need.Program(t, "ffmpeg")
	path := makeMP3(t, t.TempDir(), "a.mp3", 44100, 2, 3, "-b:a", "128k")
	data, _ := os.ReadFile(path)
	d, err := NewDecoder(context.Background(), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	dst := audio.NewBuffer(2, 1152)
	a := testing.AllocsPerRun(50, func() { d.Read(dst) })
	t.Logf("%.1f allocs per 1152-frame Read", a)
	// Reads inside an already decoded frame allocate nothing.
	one := audio.NewBuffer(2, 1)
	for d.pcmN-d.pcmPos < 4*16*25 {
		d.Read(one)
	}
	small := audio.NewBuffer(2, 16)
	if a := testing.AllocsPerRun(20, func() { d.Read(small) }); a != 0 {
		t.Errorf("%.1f allocs per 16-frame Read inside a decoded frame, want 0", a)
	}
}

// silentMP3 returns n frames with header hdr and empty side information.
func silentMP3(n int, hdr []byte) []byte {
	h, _ := parseHeader(hdr)
	frame := make([]byte, h.size)
	copy(frame, hdr)
	return bytes.Repeat(frame, n)
}
