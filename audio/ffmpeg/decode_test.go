package ffmpeg

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
)

func openFile(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func decodeAll(t testing.TB, r io.Reader) (audio.Buffer, *Decoder) {
	t.Helper()
	d, err := Decode(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return b, d
}

// TestDecodeAgreesWithFFmpeg compares the adapter with ffmpeg's own f64le
// decode of the same file, and with the signal that was encoded.
func TestDecodeAgreesWithFFmpeg(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	// Samples and levels, which the plain run checks; the decoder's
	// goroutines run under the race detector in the other
	// TestDecode tests (4.5 s of the race run's CPU).
	testsize.SkipRace(t, "numbers only, checked by the plain run")
	t.Parallel()
	cases := []struct {
		name, file string
		codec      []string
		frame      int // codec frame size: the length tolerance
	}{
		{"aac", "a.m4a", []string{"-c:a", "aac", "-b:a", "96k"}, 1024},
		{"opus", "a.opus", []string{"-c:a", "libopus", "-b:a", "64k"}, 960},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := makeFile(t, tc.file, append([]string{"-f", "lavfi", "-i",
				"aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*1000*t):s=48000:d=3"}, tc.codec...)...)
			got, d := decodeAll(t, openFile(t, path))
			f := d.Format()
			if f.Channels != 2 || f.SampleRate != 48000 {
				t.Fatalf("format %+v", f)
			}
			ref := ffmpegRaw(t, path, 2, 48000)
			refFrames := len(ref) / 2
			if diff := got.Frames() - refFrames; diff < -tc.frame || diff > tc.frame {
				t.Errorf("%d frames, ffmpeg decodes %d: more than one codec frame apart", got.Frames(), refFrames)
			}
			if info := d.Info(); math.Abs(info.Length-3) > 0.05 {
				t.Errorf("Info().Length = %.3f, want 3", info.Length)
			}
			for c := 0; c < 2; c++ {
				refCh := make([]float64, refFrames)
				for i := range refCh {
					refCh[i] = ref[2*i+c]
				}
				if r := testaudio.Correlation(got[c], refCh); r < 0.999 {
					t.Errorf("channel %d: correlation with ffmpeg's decode %.5f, want > 0.999", c, r)
				}
			}
			// The encoded tones come back at their level (0.5 and 0.3 peak).
			mid := got.Frames() / 4
			if l := toneDB(got[0][mid:3*mid], 440, 48000); math.Abs(l-20*math.Log10(0.5)-(-3.0103)) > 0.5 {
				t.Errorf("440 Hz left at %.2f dBFS, want %.2f", l, 20*math.Log10(0.5)-3.0103)
			}
			if l := toneDB(got[1][mid:3*mid], 1000, 48000); math.Abs(l-20*math.Log10(0.3)-(-3.0103)) > 0.5 {
				t.Errorf("1 kHz right at %.2f dBFS, want %.2f", l, 20*math.Log10(0.3)-3.0103)
			}
		})
	}
}

// TestDecodeExactLength checks that Frames, where the probe calls it exact,
// is the number of frames the decoder delivers.
func TestDecodeExactLength(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	// Frame counts (2.6 s of the race run's CPU): the decoder's
	// goroutines go through the race detector in the other
	// TestDecode tests.
	testsize.SkipRace(t, "numbers only, checked by the plain run")
	t.Parallel()
	for _, tc := range []struct{ file, codec string }{
		{"a.m4a", "alac"}, {"a.flac", "flac"}, {"a.wav", "pcm_s16le"},
	} {
		t.Run(tc.codec, func(t *testing.T) {
			path := makeFile(t, tc.file, "-f", "lavfi", "-i", "sine=sample_rate=44100:duration=1.2345", "-c:a", tc.codec)
			got, d := decodeAll(t, openFile(t, path))
			if d.Info().Frames != 54441 || got.Frames() != 54441 {
				t.Errorf("Info().Frames = %d, decoded %d, want 54441", d.Info().Frames, got.Frames())
			}
		})
	}
}

func TestDecodeCheckSource(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	path := makeFile(t, "a.opus", "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=0.5", "-ac", "2", "-c:a", "libopus")
	got := audiotest.CheckSource(t, func() audio.Source {
		d, err := Decode(context.Background(), openFile(t, path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
	if n := got.Frames(); n < 24000-960 || n > 24000+960 {
		t.Errorf("%d frames, want about 24000", n)
	}
}

// TestDecodeStreams decodes through stdin: a plain reader (probed from a
// buffered head) and a ReadSeeker (probed, rewound) give the samples of the
// file decoded by path.
func TestDecodeStreams(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	// Longer than headLimit, so the plain reader's head is a prefix: Ogg
	// FLAC of noise gets there in 10 s (Vorbis took 50), and Ogg states
	// no length up front.
	path := makeFile(t, "a.ogg", "-f", "lavfi", "-i", "anoisesrc=sample_rate=44100:duration=10:color=white:amplitude=0.3", "-ac", "2", "-c:a", "flac")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= headLimit {
		t.Fatalf("test file of %d bytes does not exceed the %d-byte head", len(data), headLimit)
	}
	want, _ := decodeAll(t, openFile(t, path))
	for name, r := range map[string]io.Reader{
		"readseeker": bytes.NewReader(data),
		"stream":     struct{ io.Reader }{bytes.NewReader(data)},
	} {
		got, d := decodeAll(t, r)
		if got.Frames() != want.Frames() {
			t.Errorf("%s: %d frames, file decode %d", name, got.Frames(), want.Frames())
			continue
		}
		for c := range got {
			if !slicesEqual(got[c], want[c]) {
				t.Errorf("%s: channel %d differs from the file decode", name, c)
			}
		}
		if name == "stream" && (d.Info().Frames != -1 || d.Info().Length != 0) {
			t.Errorf("stream: Info %+v claims a length from a partial probe", d.Info())
		}
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// endlessWAV is a WAV stream that never ends: a header claiming the largest
// data chunk, then silence forever.
type endlessWAV struct{ head []byte }

func newEndlessWAV(rate, channels int) *endlessWAV {
	h := make([]byte, 44)
	copy(h, "RIFF\xff\xff\xff\xffWAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data\xff\xff\xff\xff")
	return &endlessWAV{head: h}
}

func (w *endlessWAV) Read(p []byte) (int, error) {
	n := copy(p, w.head)
	w.head = w.head[n:]
	clear(p[n:])
	return len(p), nil
}

func TestDecodeCancel(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := Decode(ctx, newEndlessWAV(44100, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := audio.NewBuffer(2, 4096)
	for i := 0; i < 20; i++ {
		if _, err := d.Read(buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	pid := d.cmd.Process.Pid
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := d.Read(buf)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("after cancel: %v, want context.Canceled", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ffmpeg still delivers audio 10 s after cancellation")
		}
	}
	// The process is reaped without Close: signal 0 to a reaped pid fails.
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Fatal("ffmpeg not reaped 10 s after cancellation")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v, want ESRCH: process not gone", pid, err)
	}
}

func TestDecodeCloseKills(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	d, err := Decode(context.Background(), newEndlessWAV(8000, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(audio.NewBuffer(1, 100)); err != nil {
		t.Fatal(err)
	}
	pid := d.cmd.Process.Pid
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) after Close = %v, want ESRCH", pid, err)
	}
	if _, err := d.Read(audio.NewBuffer(1, 100)); err == nil {
		t.Error("Read after Close succeeded")
	}
}

func TestDecodeDamaged(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	path := makeFile(t, "a.m4a", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "aac")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file in half: the index (moov) is at the end and is gone.
	_, err = Decode(context.Background(), bytes.NewReader(data[:len(data)/2]))
	if err == nil {
		t.Fatal("truncated MP4 decoded without error")
	}
	if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnknownFormat) && !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("error %v wraps no audio sentinel", err)
	}
}

func TestDecodeReadAllocs(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	d, err := Decode(context.Background(), newEndlessWAV(48000, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := audio.NewBuffer(2, 4096)
	if a := testing.AllocsPerRun(200, func() {
		if _, err := d.Read(buf); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Read allocates %.1f times per call, want 0", a)
	}
}

func BenchmarkDecoderRead(b *testing.B) {
	need.Programs(b, "ffmpeg", "ffprobe")
	d, err := Decode(context.Background(), newEndlessWAV(48000, 2))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	buf := audio.NewBuffer(2, 4096)
	b.ReportAllocs()
	b.SetBytes(4096 * 2 * 8)
	for b.Loop() {
		if _, err := d.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// processGone reports an error if pid still exists (running or zombie).
func processGone(pid int) error {
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill(%d, 0) = %v, want ESRCH: process not reaped", pid, err)
	}
	return nil
}

// TestDecodeStarts counts the programs a decode starts: one ffmpeg run
// for a format whose length a probe cannot state exactly either (AAC,
// MP3, read by path or streamed), ffprobe before it where the probe
// states the exact length (ALAC in MP4, FLAC behind an ID3 tag, by path
// and streamed), and under a memo of probes (WithProbes) ffprobe once per
// file however often it is decoded, its Info the probe's, and again once
// the file changed.
func TestDecodeStarts(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	aac := makeFile(t, "a.m4a", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "aac")
	alac := makeFile(t, "b.m4a", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "alac")
	mp3 := makeFile(t, "a.mp3", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "libmp3lame", "-metadata", "title=x")
	flac := makeFile(t, "a.flac", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "flac")
	// FLAC behind an empty ID3v2 tag, as some taggers write it.
	id3flac := filepath.Join(t.TempDir(), "id3.flac")
	if err := os.WriteFile(id3flac, append([]byte("ID3\x03\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), mustRead(t, flac)...), 0o644); err != nil {
		t.Fatal(err)
	}
	starts := func(name string, r func() io.Reader, memo *Probes, times int) (probes, decodes int, info audio.Info) {
		t.Helper()
		pool := procpool.New(procpool.Config{Size: 2})
		ctx := procpool.With(context.Background(), pool)
		if memo != nil {
			ctx = WithProbes(ctx, memo)
		}
		for range times {
			d, err := Decode(ctx, r())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := audio.ReadAll(ctx, d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			info = d.Info()
			d.Close()
		}
		return pool.Starts("ffprobe"), pool.Starts("ffmpeg"), info
	}
	byPath := func(p string) func() io.Reader { return func() io.Reader { return openFile(t, p) } }
	streamed := func(p string) func() io.Reader {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return func() io.Reader { return struct{ io.Reader }{bytes.NewReader(data)} }
	}
	for _, tc := range []struct {
		name           string
		r              func() io.Reader
		probes, ffmpeg int
	}{
		{"aac by path", byPath(aac), 0, 1},
		{"aac streamed", streamed(aac), 0, 1},
		{"alac by path", byPath(alac), 1, 1},
		{"alac streamed", streamed(alac), 1, 1},
		{"mp3 behind its ID3 tag", byPath(mp3), 0, 1},
		{"flac behind an ID3 tag, streamed", streamed(id3flac), 1, 1},
	} {
		p, m, info := starts(tc.name, tc.r, nil, 1)
		if p != tc.probes || m != tc.ffmpeg || info.Format == "" || (p > 0) != (info.Frames > 0) {
			t.Errorf("%s: ffprobe %d, ffmpeg %d times (Info %+v), want %d and %d", tc.name, p, m, info, tc.probes, tc.ffmpeg)
		}
	}
	var memo Probes
	p, m, info := starts("aac under a memo", byPath(aac), &memo, 2)
	want, err := ProbeDetails(context.Background(), openFile(t, aac))
	if err != nil {
		t.Fatal(err)
	}
	if p != 1 || m != 2 || info != want.Info {
		t.Errorf("aac decoded twice under a memo: ffprobe %d, ffmpeg %d times, Info %+v, want 1, 2 and the probe's %+v", p, m, info, want.Info)
	}
	// A file written anew is probed anew.
	if err := os.WriteFile(aac, mustRead(t, mp3), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, _, info := starts("aac replaced by mp3", byPath(aac), &memo, 1); p != 1 || info.Format != "mp3" {
		t.Errorf("file replaced: ffprobe %d times, Info %+v, want once and mp3", p, info)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
