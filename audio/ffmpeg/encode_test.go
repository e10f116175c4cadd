package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
)

// testSignal is 3 s of stereo: a 440 Hz tone at 0.5 on the left, 1 kHz at
// 0.25 on the right, over quiet noise so that VBR encoders spend bits.
func testSignal(rate int) audio.Buffer {
	n := 3 * rate
	b := audio.NewBuffer(2, n)
	l := audiotest.Sine(1, rate, 440, 0.5, n)[0]
	r := audiotest.Sine(1, rate, 1000, 0.25, n)[0]
	noise := audiotest.Noise(2, n, 0.003, 1)
	for i := 0; i < n; i++ {
		b[0][i] = l[i] + noise[0][i]
		b[1][i] = r[i] + noise[1][i]
	}
	return b
}

var testChapters = []audio.Chapter{
	{Start: 0, Title: "Intro"},
	{Start: 1200 * time.Millisecond, Title: "Interview", URL: "https://example.org/i", Image: chapterPicture},
	{Start: 2500 * time.Millisecond, Title: "Outro"},
}

// chapterPicture is a small PNG.
var chapterPicture = func() *audio.Picture {
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 3)))
	return &audio.Picture{MIMEType: "image/png", Data: b.Bytes(), Size: b.Len()}
}()

func TestEncodeRoundTrip(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	cover := testJPEG(t, 120, 90)
	const rate = 44100
	src := testSignal(rate)
	cases := []struct {
		name, codec, container string
		bitrate                int     // requested, 0 for the default
		kbps, tol              float64 // expected bitrate and relative tolerance
		lossless               bool
	}{
		{name: "mp3", codec: "mp3", container: "mp3", bitrate: 128, kbps: 128, tol: 0.05},
		{name: "mp3-vbr", codec: "mp3", container: "mp3", kbps: 100, tol: 0.6},
		{name: "aac", codec: "aac", container: "mp4", kbps: 64, tol: 0.25},
		// libopus VBR spends up to twice the target on pure tones.
		{name: "opus", codec: "opus", container: "ogg", kbps: 48, tol: 1},
		{name: "vorbis", codec: "vorbis", container: "ogg", bitrate: 96, kbps: 96, tol: 0.35},
		{name: "alac", codec: "alac", container: "mp4", lossless: true},
	}
	if testing.Short() {
		cases = []struct {
			name, codec, container string
			bitrate                int
			kbps, tol              float64
			lossless               bool
		}{cases[0], cases[len(cases)-1]} // one lossy, one lossless
	}
	for _, tc := range cases {
		for _, mode := range []string{"file", "buffer", "monitor"} {
			toFile, monitored := mode != "buffer", mode == "monitor"
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				tags := audio.Tags{Title: "Episode 7", Artist: "Host", Album: "Show", Genre: "Podcast",
					Year: "2025", Track: "7", Comment: "round trip", Summary: "What we talk about", License: "CC-BY 4.0",
					Subtitle: "A subtitle", Publisher: "ACME", URL: "https://example.org", LicenseURL: "https://example.org/license",
					Keywords: "news, science", Location: audio.ISO6709(48.2082, 16.3738),
					Cover: &audio.Picture{MIMEType: "image/jpeg", Data: cover, Size: len(cover)}}
				opts := audio.EncodeOptions{Bitrate: tc.bitrate, Tags: tags, Chapters: testChapters}
				var mon *monitorSink
				if monitored {
					mon = &monitorSink{}
					opts.Monitor = mon
				}
				dir := t.TempDir()
				if monitored {
					// The tee muxer's syntax in the directory name.
					dir = filepath.Join(dir, "a b|c'[d]\\e")
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				outPath := filepath.Join(dir, "out")
				var w io.Writer
				var buf bytes.Buffer
				if toFile {
					// The length is known: chapters are written in one pass.
					opts.Length = 3 * time.Second
					f, err := os.Create(outPath)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					w = f
				} else {
					// Unknown length: chapter ends are added at Close.
					w = &buf
				}
				enc, err := audio.NewEncoder(context.Background(), tc.name, w, audio.Format{SampleRate: rate, Channels: 2}, opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := audio.Copy(context.Background(), enc, audio.NewBufferSource(src, rate)); err != nil {
					t.Fatal(err)
				}
				if err := enc.Close(); err != nil {
					t.Fatal(err)
				}
				if toFile {
					if ents, _ := os.ReadDir(dir); len(ents) != 1 {
						t.Errorf("%d entries beside the output, want only the output (temporary files left?)", len(ents))
					}
				} else if err := os.WriteFile(outPath, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}

				if tc.codec == "mp3" && toFile {
					// Written through a temporary file, the LAME header is
					// filled in: "Xing" marks VBR, "Info" CBR.
					data, _ := os.ReadFile(outPath)
					tag := map[string]string{"mp3": "Info", "mp3-vbr": "Xing"}[tc.name]
					if !bytes.Contains(data[:min(len(data), 64<<10)], []byte(tag)) {
						t.Errorf("%s file has no %q header", tc.name, tag)
					}
				}
				// The probe, and the cover's extraction after it, share
				// one ffprobe run.
				probes := WithProbes(context.Background(), new(Probes))
				d, err := ProbeDetails(probes, openFile(t, outPath))
				if err != nil {
					t.Fatal(err)
				}
				if d.Format != tc.codec || d.Container != tc.container || d.Channels != 2 || d.HasVideo {
					t.Errorf("probe: %+v", d.Info)
				}
				if math.Abs(d.Length-3) > 0.1 {
					t.Errorf("length %.3f s, want 3", d.Length)
				}
				if tc.kbps > 0 && math.Abs(d.Bitrate-tc.kbps) > tc.tol*tc.kbps {
					t.Errorf("bitrate %.1f kbps, want %.0f ± %.0f%%", d.Bitrate, tc.kbps, tc.tol*100)
				}
				// The probe's bitrate is the audio's, without cover and tags.
				// Vorbis states its nominal bitrate in its header, which
				// ffprobe reports and the check above compares.
				if real := audioKbps(t, outPath, d.Length); tc.name != "vorbis" && math.Abs(d.Bitrate-real) > 0.05*real+1 {
					t.Errorf("probed bitrate %.1f kbps, audio packets make %.1f kbps", d.Bitrate, real)
				}
				gotTags := d.Tags
				gotTags.Cover, tags.Cover = nil, nil
				if tc.container == "mp3" {
					// ffprobe reads no ID3 URL frames: package id3 does.
					data, _ := os.ReadFile(outPath)
					frames, err := id3.ParseTags(data[:min(len(data), id3.TagSize(data))])
					if err != nil || frames.URL != tags.URL || frames.LicenseURL != tags.LicenseURL {
						t.Errorf("ID3 URL frames: %q %q (%v)", frames.URL, frames.LicenseURL, err)
					}
					gotTags.URL, gotTags.LicenseURL = frames.URL, frames.LicenseURL
				}
				if gotTags != tags {
					t.Errorf("tags read back:\n %+v\nwant\n %+v", gotTags, tags)
				}
				if d.Tags.Cover == nil || d.Tags.Cover.MIMEType != "image/jpeg" || d.Tags.Cover.Size != len(cover) {
					t.Errorf("cover read back %+v, want image/jpeg of %d bytes", d.Tags.Cover, len(cover))
				} else if pic, err := ExtractCoverFile(probes, outPath); err != nil || !bytes.Equal(pic.Data, cover) {
					t.Errorf("extracted cover differs from the embedded one (err %v)", err)
				}
				if len(d.Chapters) != len(testChapters) {
					t.Fatalf("chapters read back %+v, want %d", d.Chapters, len(testChapters))
				}
				for i, c := range d.Chapters {
					w := testChapters[i]
					if c.Title != w.Title || (c.Start-w.Start).Abs() > 25*time.Millisecond {
						t.Errorf("chapter %d = %q at %v, want %q at %v", i, c.Title, c.Start, w.Title, w.Start)
					}
					if tc.container == "ogg" && c.URL != w.URL {
						t.Errorf("chapter %d URL %q, want %q", i, c.URL, w.URL)
					}
				}

				if tc.codec == "mp3" {
					// ffprobe shows neither chapter URLs nor pictures:
					// read the CHAP frames themselves.
					chaps, err := id3.ReadChapters(openFile(t, outPath))
					if err != nil || len(chaps) != len(testChapters) {
						t.Fatalf("CHAP frames: %+v, %v", chaps, err)
					}
					for i, c := range chaps {
						w := testChapters[i]
						var wantPic []byte
						if w.Image != nil {
							wantPic = w.Image.Data
						}
						var gotPic []byte
						if c.Image != nil {
							gotPic = c.Image.Data
							if c.Image.MIMEType != w.Image.MIMEType {
								t.Errorf("chapter %d picture is %s", i, c.Image.MIMEType)
							}
						}
						if c.Title != w.Title || c.URL != w.URL || !bytes.Equal(gotPic, wantPic) {
							t.Errorf("CHAP %d: %q URL %q picture %d bytes; want %q URL %q picture %d bytes", i, c.Title, c.URL, len(gotPic), w.Title, w.URL, len(wantPic))
						}
					}
				}

				got, dec := decodeAll(t, openFile(t, outPath))
				if math.Abs(float64(got.Frames())/float64(dec.Format().SampleRate)-3) > 0.1 {
					t.Errorf("decoded %d frames at %d Hz, want 3 s", got.Frames(), dec.Format().SampleRate)
				}
				if mon != nil {
					checkMonitor(t, mon, got, dec.Format().SampleRate, rate, tc.lossless)
				}
				if tc.lossless {
					if got.Frames() != src.Frames() {
						t.Fatalf("lossless: %d frames, want %d", got.Frames(), src.Frames())
					}
					for c := range src {
						for i := range src[c] {
							if math.Abs(got[c][i]-src[c][i]) > 1.0/32768 {
								t.Fatalf("lossless: channel %d frame %d = %v, want %v within 16-bit quantization", c, i, got[c][i], src[c][i])
							}
						}
					}
					return
				}
				gr := dec.Format().SampleRate
				mid := got.Frames() / 4
				for c, tone := range []struct{ f, amp float64 }{{440, 0.5}, {1000, 0.25}} {
					want := 20*math.Log10(tone.amp) - 3.0103
					if l := toneDB(got[c][mid:3*mid], tone.f, gr); math.Abs(l-want) > 0.5 {
						t.Errorf("channel %d: %.0f Hz at %.2f dBFS after encoding, want %.2f ± 0.5", c, tone.f, l, want)
					}
				}
			})
		}
	}
}

func TestVBRQuality(t *testing.T) {
	for kbps, want := range map[int]int{96: 7, 320: 0, 245: 0, 190: 2, 128: 5, 32: 9} {
		if got := VBRQuality(kbps); got != want {
			t.Errorf("VBRQuality(%d) = %d, want %d", kbps, got, want)
		}
	}
}

func TestEncoderRejects(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	if _, err := NewEncoder(ctx, "mp3", &b, audio.Format{SampleRate: 44100, Channels: 6}, audio.EncodeOptions{}); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("6-channel mp3: %v, want ErrUnsupported", err)
	}
	if _, err := NewEncoder(ctx, "wma", &b, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{}); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("unknown format: %v, want ErrUnsupported", err)
	}
	need.Programs(t, "ffmpeg", "ffprobe")
	bad := audio.EncodeOptions{Tags: audio.Tags{Cover: &audio.Picture{MIMEType: "image/gif", Data: []byte("GIF89a....")}}, Length: time.Second}
	if _, err := NewEncoder(ctx, "mp3", &b, audio.Format{SampleRate: 44100, Channels: 2}, bad); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("GIF cover: %v, want ErrUnsupported", err)
	}
}

// TestEncodeFailureReported checks that an encoder whose ffmpeg dies
// reports an error and writes nothing, instead of a truncated file.
func TestEncodeFailureReported(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	var b bytes.Buffer
	enc, err := NewEncoder(context.Background(), "alac", &b, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Kill ffmpeg behind the encoder's back: Write or Close must fail, not
	// report a complete file.
	enc.cmd.Process.Kill()
	<-enc.done
	werr := enc.Write(audio.NewBuffer(2, 44100))
	cerr := enc.Close()
	if werr == nil && cerr == nil {
		t.Fatal("encoder whose ffmpeg died reported success")
	}
	if b.Len() != 0 {
		t.Errorf("%d bytes written to the writer from a failed encode", b.Len())
	}
}

// TestEncodeTempLimit: a temporary file of the encoder that reaches
// EncodeOptions.TempLimit fails the encoder with audio.ErrTempLimit, and
// no file is left in TempDir nor anything written to the writer: AAC
// (written to a temporary file to seek back in), MP3 through the
// monitor's tee, and the copy pass that adds chapters and a cover to an
// MP3 whose first file is within the limit.
func TestEncodeTempLimit(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	const rate = 44100
	src := testSignal(rate) // 3 s: 96 KB at 256 kbps, 48 KB at 128
	noise := image.NewGray(image.Rect(0, 0, 400, 400))
	x := uint32(1)
	for i := range noise.Pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		noise.Pix[i] = byte(x)
	}
	var cover bytes.Buffer // 160 KB: noise does not compress
	png.Encode(&cover, noise)
	for _, c := range []struct {
		name, format string
		limit        int64
		whileWritten bool // the file reaches the limit while audio is written
		opts         audio.EncodeOptions
	}{
		{"aac", "aac", 16 << 10, true, audio.EncodeOptions{Bitrate: 256}},
		{"mp3 and its monitor", "mp3", 16 << 10, true, audio.EncodeOptions{Bitrate: 256, Monitor: &monitorSink{}, Chapters: testChapters}},
		{"mp3's copy with chapters and cover", "mp3", 100 << 10, false, audio.EncodeOptions{Bitrate: 128, Monitor: &monitorSink{},
			Chapters: testChapters, Tags: audio.Tags{Cover: &audio.Picture{MIMEType: "image/png", Data: cover.Bytes(), Size: cover.Len()}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.TempDir, opts.TempLimit = t.TempDir(), c.limit
			var out bytes.Buffer
			enc, err := NewEncoder(t.Context(), c.format, &out, audio.Format{SampleRate: rate, Channels: 2}, opts)
			if err != nil {
				t.Fatal(err)
			}
			in := src
			if c.whileWritten {
				// 30 s, far more than ffmpeg reads ahead of its output.
				in = audio.NewBuffer(2, 10*src.Frames())
				for ch := range in {
					for k := range 10 {
						copy(in[ch][k*src.Frames():], src[ch])
					}
				}
			}
			_, err = audio.Copy(t.Context(), enc, audio.NewBufferSource(in, rate))
			if c.whileWritten && runtime.GOOS == "linux" && err == nil {
				// The kernel stops the file at the limit: ffmpeg ends
				// then, not when the audio does.
				t.Errorf("the encoder took all of the audio: its file was not cut at %d KB", c.limit>>10)
			}
			if cerr := enc.Close(); err == nil {
				err = cerr
			}
			if !errors.Is(err, audio.ErrTempLimit) {
				t.Errorf("encoding %d KB under a limit of %d KB: %v, want audio.ErrTempLimit", in.Frames()/rate*opts.Bitrate/8, c.limit>>10, err)
			}
			if files, _ := os.ReadDir(opts.TempDir); len(files) > 0 {
				t.Errorf("%d files left in TempDir", len(files))
			}
			if out.Len() > 0 {
				t.Errorf("%d bytes written to the writer", out.Len())
			}
		})
	}
}

func TestEncoderClosed(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	var b bytes.Buffer
	enc, err := NewEncoder(context.Background(), "mp3", &b, audio.Format{SampleRate: 44100, Channels: 1}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(audiotest.Sine(1, 44100, 440, 0.5, 44100)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := enc.Write(audio.NewBuffer(1, 10)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v, want os.ErrClosed", err)
	}
	if b.Len() < 1000 {
		t.Errorf("%d bytes of MP3 for 1 s", b.Len())
	}
}

func TestEncodeCancel(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "out.m4a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := NewEncoder(ctx, "aac", f, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block := audiotest.Sine(2, 48000, 440, 0.5, 4096)
	for i := 0; i < 10; i++ {
		if err := enc.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	pid := enc.cmd.Process.Pid
	cancel()
	var werr error
	deadline := time.Now().Add(10 * time.Second)
	for werr == nil && time.Now().Before(deadline) {
		werr = enc.Write(block)
	}
	cerr := enc.Close()
	if !errors.Is(werr, context.Canceled) || !errors.Is(cerr, context.Canceled) {
		t.Errorf("after cancel: Write %v, Close %v; want context.Canceled", werr, cerr)
	}
	select {
	case <-enc.done:
	default:
		t.Error("ffmpeg not reaped after Close")
	}
	if err := processGone(pid); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the output directory, want the output only", len(ents))
	}
}

func TestEncoderWriteAllocs(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	var b bytes.Buffer
	enc, err := NewEncoder(context.Background(), "mp3", &b, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	block := audiotest.Sine(2, 44100, 440, 0.5, 4096)
	if a := testing.AllocsPerRun(100, func() {
		if err := enc.Write(block); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Write allocates %.1f times per block, want 0", a)
	}
}

func BenchmarkEncoderWrite(b *testing.B) {
	need.Programs(b, "ffmpeg", "ffprobe")
	enc, err := NewEncoder(context.Background(), "mp3", io.Discard, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	block := audiotest.Sine(2, 44100, 440, 0.5, 4096)
	b.ReportAllocs()
	b.SetBytes(4096 * 2 * 8)
	for b.Loop() {
		if err := enc.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := enc.Close(); err != nil {
		b.Fatal(err)
	}
}

// audioKbps sums the audio packets of path with ffprobe: the bitrate of the
// audio alone.
func audioKbps(t testing.TB, path string, seconds float64) float64 {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe packets: %v", err)
	}
	var sum int
	for _, line := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(strings.Trim(line, ","))
		if err != nil {
			t.Fatalf("ffprobe packet size %q", line)
		}
		sum += n
	}
	return float64(sum) * 8 / seconds / 1000
}

// monitorSink collects what an encoder's monitor decodes.
type monitorSink struct{ got audio.Buffer }

func (m *monitorSink) Write(b audio.Buffer) error {
	if m.got == nil {
		m.got = make(audio.Buffer, len(b))
	}
	for c := range b {
		m.got[c] = append(m.got[c], b[c]...)
	}
	return nil
}

// checkMonitor compares what the monitor heard with the decoded file
// (file, at fileRate): the same audio at the encoder's rate, give or take
// the codec's delay and padding, which a raw stream keeps and a file's
// header may trim. Lossless formats are not monitored.
func checkMonitor(t *testing.T, mon *monitorSink, file audio.Buffer, fileRate, rate int, lossless bool) {
	t.Helper()
	if lossless {
		if mon.got != nil {
			t.Errorf("lossless encoder monitored %d frames", mon.got.Frames())
		}
		return
	}
	if len(mon.got) != 2 {
		t.Fatalf("monitor got %d channels, want 2", len(mon.got))
	}
	if d := float64(mon.got.Frames())/float64(rate) - float64(file.Frames())/float64(fileRate); math.Abs(d) > 0.1 {
		t.Errorf("monitor heard %d frames at %d Hz, the file decodes to %d at %d Hz", mon.got.Frames(), rate, file.Frames(), fileRate)
	}
	for c := range 2 {
		if m, f := rmsDB(mon.got[c]), rmsDB(file[c]); math.Abs(m-f) > 0.1 {
			t.Errorf("channel %d: monitor at %.2f dBFS, file at %.2f dBFS", c, m, f)
		}
	}
	if fileRate != rate {
		return
	}
	// Sample for sample, from the first: the monitor skips the priming the
	// file's container skips.
	n := min(mon.got.Frames(), file.Frames())
	worst := 0.0
	for c := range 2 {
		for i := range n {
			worst = max(worst, math.Abs(mon.got[c][i]-file[c][i]))
		}
	}
	if worst > 1e-4 {
		t.Errorf("the monitor's samples differ from the file's by up to %.3g: not aligned", worst)
	}
}

// failingSink refuses every block.
type failingSink struct{}

var errMonitorFull = errors.New("monitor refuses audio")

func (failingSink) Write(audio.Buffer) error { return errMonitorFull }

// TestEncodeMonitorFailure checks that a monitor that cannot take the
// decoded audio fails the encode, without hanging the encoder.
func TestEncodeMonitorFailure(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	const rate = 44100
	f, err := os.Create(filepath.Join(t.TempDir(), "out.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := NewEncoder(context.Background(), "mp3", f, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{Monitor: failingSink{}})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	// 24 s: four times what the pipes between the processes hold (64 KB
	// of MP3 at the default 96 kbps is 5.3 s; the PCM pipes hold far
	// less).
	for range 8 {
		if werr = enc.Write(testSignal(rate)); werr != nil {
			break
		}
	}
	cerr := enc.Close()
	if !errors.Is(werr, errMonitorFull) && !errors.Is(cerr, errMonitorFull) {
		t.Errorf("Write = %v, Close = %v; want the monitor's error", werr, cerr)
	}
}
