package flac

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
	mflac "github.com/mewkiz/flac"
)

// intSignal returns a signal whose every sample is an exact integer of the
// given bit depth: a loud sine plus noise, with both extremes included.
func intSignal(channels, frames, bits int, seed uint64) audio.Buffer {
	full := float64(int64(1) << (bits - 1))
	b := audiotest.Noise(channels, frames, 0.3, seed)
	for c := range b {
		for i := range b[c] {
			x := 0.6*math.Sin(2*math.Pi*float64(i)*float64(c+1)*0.01) + b[c][i]
			b[c][i] = math.Round(x*full) / full
		}
		b[c][0] = -1
		b[c][1] = (full - 1) / full
	}
	return b
}

func encode(t testing.TB, w io.Writer, b audio.Buffer, rate int, opts audio.EncodeOptions) *Encoder {
	t.Helper()
	e, err := NewEncoder(context.Background(), w, audio.Format{SampleRate: rate, Channels: len(b)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Uneven writes: block boundaries must not matter to the encoder.
	for off, k := 0, 1; off < b.Frames(); k = k*3 + 1 {
		end := min(off+k, b.Frames())
		if err := e.Write(b.Slice(off, end)); err != nil {
			t.Fatal(err)
		}
		off = end
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRoundTripBitExact(t *testing.T) {
	for _, bits := range []int{16, 24} {
		for _, ch := range []int{1, 2, 6} {
			t.Run(fmt.Sprintf("%dbit_%dch", bits, ch), func(t *testing.T) {
				in := intSignal(ch, 3*BlockSize+123, bits, uint64(bits*ch))
				// Non-seekable writer: STREAMINFO keeps "unknown" length.
				var stream bytes.Buffer
				e := encode(t, struct{ io.Writer }{&stream}, in, 48000, audio.EncodeOptions{BitDepth: bits})
				if e.Clipped() != 0 {
					t.Errorf("Clipped() = %d for in-range input", e.Clipped())
				}
				got, info := decodeAll(t, bytes.NewReader(stream.Bytes()))
				if d := sameSamples(in, got); d != "" {
					t.Fatalf("FLAC -> Buffer not bit-exact: %s", d)
				}
				if info.BitDepth != bits || info.Frames != -1 || info.Channels != ch {
					t.Errorf("streamed Info = %+v, want %d bits, Frames -1", info, bits)
				}
				// Buffer -> FLAC again, into a file: STREAMINFO is completed.
				path := filepath.Join(t.TempDir(), "x.flac")
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				encode(t, f, got, 48000, audio.EncodeOptions{BitDepth: bits})
				f.Close()
				d, err := audio.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				again, err := audio.ReadAll(context.Background(), d)
				d.Close()
				if err != nil {
					t.Fatal(err)
				}
				if d := sameSamples(in, again); d != "" {
					t.Fatalf("second round trip not bit-exact: %s", d)
				}
				info = d.Info()
				if info.Frames != int64(in.Frames()) || info.Bitrate <= 0 {
					t.Errorf("file Info = %+v, want Frames %d and a bitrate", info, in.Frames())
				}
				checkStreamInfo(t, path, in, bits)
			})
		}
	}
}

// checkStreamInfo verifies the STREAMINFO the encoder patched: total
// samples and the MD5 of the samples as the FLAC format defines it.
func checkStreamInfo(t *testing.T, path string, in audio.Buffer, bits int) {
	t.Helper()
	s, err := mflac.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Info.NSamples != uint64(in.Frames()) {
		t.Errorf("STREAMINFO total samples = %d, want %d", s.Info.NSamples, in.Frames())
	}
	if s.Info.FrameSizeMin == 0 || s.Info.FrameSizeMax < s.Info.FrameSizeMin {
		t.Errorf("STREAMINFO frame sizes %d-%d", s.Info.FrameSizeMin, s.Info.FrameSizeMax)
	}
	h := md5.New()
	full := float64(int64(1) << (bits - 1))
	for i := 0; i < in.Frames(); i++ {
		for c := range in {
			v := int32(in[c][i] * full)
			h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16)}[:bits/8])
		}
	}
	if !bytes.Equal(h.Sum(nil), s.Info.MD5sum[:]) {
		t.Errorf("STREAMINFO MD5 %x, want %x", s.Info.MD5sum, h.Sum(nil))
	}
}

func TestEncoderOutputAcceptedByFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	for _, bits := range []int{16, 24} {
		in := intSignal(2, 2*BlockSize+7, bits, 9)
		dir := t.TempDir()
		path := filepath.Join(dir, "x.flac")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		encode(t, f, in, 44100, audio.EncodeOptions{BitDepth: bits})
		f.Close()
		// -xerror with crccheck makes ffmpeg fail on any CRC or MD5 problem.
		run(t, "ffmpeg", "-v", "error", "-xerror", "-err_detect", "crccheck+bitstream", "-i", path, "-f", "null", "-")
		got := ffmpegF64(t, path, 2)
		if d := sameSamples(in, got); d != "" {
			t.Errorf("%d-bit: ffmpeg decodes our FLAC differently: %s", bits, d)
		}
		if _, ok := need.HasProgram(t, "flac"); ok {
			run(t, "flac", "-t", "-s", path)
		}
	}
}

// TestDecodeMatchesFFmpeg decodes files that ffmpeg encoded and compares
// sample for sample with ffmpeg's own decode.
func TestDecodeMatchesFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	exprs := []string{"0.8*sin(2*PI*440*t)", "0.5*sin(2*PI*1000*t)+0.3*sin(2*PI*57*t)", "0.2*sin(2*PI*3000*t)",
		"0.7*sin(2*PI*100*t)*cos(2*PI*3*t)", "0.4*sin(2*PI*5000*t)", "0.9*sin(2*PI*60*t)"}
	for _, tc := range []struct {
		ch, rate int
		fmt      string
		bits     int
	}{
		{1, 44100, "s16", 16}, {2, 44100, "s16", 16}, {2, 48000, "s32", 24},
		{6, 48000, "s16", 16}, {1, 96000, "s32", 24}, {6, 96000, "s32", 24},
	} {
		t.Run(fmt.Sprintf("%dch_%d_%s", tc.ch, tc.rate, tc.fmt), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.flac")
			src := fmt.Sprintf("aevalsrc=exprs=%s:s=%d:d=1.7", strings.Join(exprs[:tc.ch], "|"), tc.rate)
			run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", src, "-sample_fmt", tc.fmt, "-c:a", "flac", path)
			want := ffmpegF64(t, path, tc.ch)
			got, info := decodeAll(t, mustOpen(t, path))
			if d := sameSamples(want, got); d != "" {
				t.Fatalf("differs from ffmpeg: %s", d)
			}
			if info.BitDepth != tc.bits || info.SampleRate != tc.rate || info.Frames != int64(want.Frames()) {
				t.Errorf("Info = %+v", info)
			}
			if math.Abs(info.Length-1.7) > 1e-3 {
				t.Errorf("Length = %v, want 1.7", info.Length)
			}
		})
	}
}

func mustOpen(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCheckSource(t *testing.T) {
	in := intSignal(2, 2*BlockSize+555, 16, 3)
	var buf bytes.Buffer
	encode(t, &buf, in, 44100, audio.EncodeOptions{})
	got := audiotest.CheckSource(t, func() audio.Source {
		d, err := NewDecoder(context.Background(), bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
	if d := sameSamples(in, got); d != "" {
		t.Fatal(d)
	}
}

func testCover(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 9))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(3, 3, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestTagsRoundTrip(t *testing.T) {
	cover := testCover(t)
	tags := audio.Tags{
		Title: "Épisode 12 = naïve", Artist: "Ann Example", Album: "Show", Subtitle: "sub",
		Summary: "A summary", Genre: "Podcast", Publisher: "Pub", URL: "https://example.com/",
		License: "CC-BY 4.0", Track: "12/40", Year: "2024", Comment: "multi\nline",
		Cover: &audio.Picture{MIMEType: "image/png", Data: cover, Size: len(cover)},
	}
	path := filepath.Join(t.TempDir(), "tags.flac")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	encode(t, f, audiotest.Sine(1, 8000, 440, 0.5, 1000), 8000, audio.EncodeOptions{Tags: tags})
	f.Close()
	info, err := audio.ProbeFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Tags.Cover == nil || !bytes.Equal(info.Tags.Cover.Data, cover) || info.Tags.Cover.MIMEType != "image/png" {
		t.Fatalf("cover did not round-trip: %+v", info.Tags.Cover)
	}
	got := info.Tags
	got.Cover, tags.Cover = nil, nil
	if got != tags {
		t.Errorf("tags = %+v\nwant %+v", got, tags)
	}
	if _, ok := need.HasProgram(t, "ffprobe"); ok {
		out := strings.ToLower(string(run(t, "ffprobe", "-v", "error", "-show_entries", "format_tags=title,artist", "-of", "default=nw=1", path)))
		if !strings.Contains(out, "tag:title="+strings.ToLower(tags.Title)) || !strings.Contains(out, "tag:artist=ann example") {
			t.Errorf("ffprobe reads tags as %q", out)
		}
	}
}

// TestTagsFromFFmpeg reads Vorbis comments and a cover that ffmpeg wrote.
func TestTagsFromFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	cover := filepath.Join(dir, "cover.png")
	if err := os.WriteFile(cover, testCover(t), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.flac")
	run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=22050:duration=0.5",
		"-i", cover, "-map", "0", "-map", "1", "-c:a", "flac", "-c:v", "copy", "-disposition:v", "attached_pic",
		"-metadata", "title=FF Title", "-metadata", "artist=FF Artist", "-metadata", "album=FF Album",
		"-metadata", "track=3", "-metadata", "date=2021", "-metadata", "genre=Speech",
		"-metadata", "comment=hello", path)
	info, err := audio.ProbeFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	tg := info.Tags
	if tg.Title != "FF Title" || tg.Artist != "FF Artist" || tg.Album != "FF Album" || tg.Track != "3" ||
		tg.Year != "2021" || tg.Genre != "Speech" || tg.Comment != "hello" {
		t.Errorf("tags = %+v", tg)
	}
	if tg.Cover == nil || tg.Cover.MIMEType != "image/png" || tg.Cover.Size != len(testCover(t)) {
		t.Errorf("cover = %+v", tg.Cover)
	}
}

func TestID3PrefixAndTrailingJunk(t *testing.T) {
	in := intSignal(2, 5000, 16, 4)
	var buf bytes.Buffer
	encode(t, &buf, in, 44100, audio.EncodeOptions{})
	body := make([]byte, 300)
	id3 := append([]byte{'I', 'D', '3', 3, 0, 0, 0, 0, 0x02, 0x2C}, body...) // 300-byte body
	data := append(append(id3, buf.Bytes()...), []byte("TAG trailing ID3v1 junk")...)
	if !Match(data[:min(len(data), audio.SniffLen)]) {
		t.Fatal("Match rejects FLAC behind an ID3v2 tag")
	}
	got, _ := decodeAll(t, bytes.NewReader(data))
	if d := sameSamples(in, got); d != "" {
		t.Fatal(d)
	}
}

func TestMatch(t *testing.T) {
	var buf bytes.Buffer
	encode(t, &buf, intSignal(1, 100, 16, 1), 8000, audio.EncodeOptions{})
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"flac", buf.Bytes(), true},
		{"signature only", []byte("fLaC"), false},
		{"fLaC then junk", []byte("fLaC\x05\x00\x00\x22"), false},
		{"wav", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), false},
		{"id3 then mp3", []byte("ID3\x03\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"), false},
		{"huge id3", []byte("ID3\x03\x00\x00\x7f\x7f\x7f\x7f"), false},
	} {
		if got := Match(tc.head); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClippingCounted(t *testing.T) {
	b := audio.NewBuffer(2, 10)
	b[0][3], b[1][4], b[1][5] = 1.5, -2, 0.999
	var out bytes.Buffer
	e := encode(t, &out, b, 44100, audio.EncodeOptions{})
	if e.Clipped() != 2 {
		t.Errorf("Clipped() = %d, want 2", e.Clipped())
	}
	got, _ := decodeAll(t, bytes.NewReader(out.Bytes()))
	if got[0][3] != 32767.0/32768 || got[1][4] != -1 {
		t.Errorf("clipped samples decode to %v, %v", got[0][3], got[1][4])
	}
}

// TestPatchAtOffset writes the stream into a file after other content: the
// STREAMINFO patch must land relative to where the stream started.
func TestPatchAtOffset(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prefix := []byte("some container header")
	f.Write(prefix)
	in := intSignal(1, 5000, 16, 2)
	encode(t, f, in, 16000, audio.EncodeOptions{})
	if _, err := f.Seek(int64(len(prefix)), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Info().Frames != 5000 {
		t.Errorf("Frames = %d, want 5000", d.Info().Frames)
	}
}

func TestEncoderErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewEncoder(ctx, io.Discard, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{BitDepth: 32}); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("32-bit: err = %v, want ErrUnsupported", err)
	}
	e, err := NewEncoder(ctx, io.Discard, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(audio.NewBuffer(1, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("mono into stereo: err = %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(audio.NewBuffer(2, 10)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: err = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	var buf bytes.Buffer
	encode(t, &buf, intSignal(2, 3*BlockSize, 16, 5), 44100, audio.EncodeOptions{})
	data := buf.Bytes()
	// Truncated in the middle of the audio.
	d, err := audio.Decode(context.Background(), bytes.NewReader(data[:len(data)*2/3]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), d); !errors.Is(err, audio.ErrMalformed) {
		t.Errorf("truncated: err = %v, want ErrMalformed", err)
	}
	// A flipped bit in the audio breaks a CRC.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0x10
	d, err = audio.Decode(context.Background(), bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), d); !errors.Is(err, audio.ErrMalformed) {
		t.Errorf("corrupt: err = %v, want ErrMalformed", err)
	}
	if _, err := NewDecoder(context.Background(), strings.NewReader("not flac at all")); !errors.Is(err, audio.ErrUnknownFormat) {
		t.Errorf("not flac: err = %v", err)
	}
}

// TestDecodeAllocs measures allocations per Read of a 4096-frame block:
// the library allocates per FLAC frame, the conversion nothing.
func TestDecodeAllocs(t *testing.T) {
	in := intSignal(2, 40*BlockSize, 16, 6)
	var buf bytes.Buffer
	encode(t, &buf, in, 44100, audio.EncodeOptions{})
	d, err := NewDecoder(context.Background(), bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	dst := audio.NewBuffer(2, BlockSize)
	allocs := testing.AllocsPerRun(30, func() {
		if _, err := d.Read(dst); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocs per %d-frame Read (one FLAC frame)", allocs, BlockSize)
	if allocs > 20 {
		t.Errorf("%.1f allocs per Read, want <= 20", allocs)
	}
	// Reads smaller than a FLAC frame are served from the decoded frame.
	small := audio.NewBuffer(2, 64)
	d2, _ := NewDecoder(context.Background(), bytes.NewReader(buf.Bytes()))
	d2.Read(small)
	if a := testing.AllocsPerRun(50, func() { d2.Read(small) }); a != 0 {
		t.Errorf("%.1f allocs per 64-frame Read inside a FLAC frame, want 0", a)
	}
}
