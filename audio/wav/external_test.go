package wav

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
)

// ffmpegDecode returns ffmpeg's own decode of path as interleaved float64.
func ffmpegDecode(t *testing.T, path string) []float64 {
	t.Helper()
	out, err := exec.Command(need.Program(t, "ffmpeg"), "-v", "error", "-i", path, "-f", "f64le", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg decode of %s: %v", path, stderrOf(err))
	}
	v := make([]float64, len(out)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(out[i*8:]))
	}
	return v
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return err.Error() + ": " + string(ee.Stderr)
	}
	return err.Error()
}

// agree decodes path with this package and checks it against ffmpeg sample
// for sample; it returns the decoder for further checks.
func agree(t *testing.T, path string) *Decoder {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, got, err := decodeAll(t, data)
	if err != nil {
		t.Fatalf("decode %s: %v", filepath.Base(path), err)
	}
	ref := ffmpegDecode(t, path)
	ch := d.Format().Channels
	if got.Frames()*ch != len(ref) {
		t.Fatalf("%d frames of %d channels, ffmpeg gives %d samples", got.Frames(), ch, len(ref))
	}
	if got.Frames() == 0 {
		t.Fatal("no frames")
	}
	var worst float64
	for i := range got.Frames() {
		for c := range ch {
			worst = max(worst, math.Abs(got[c][i]-ref[i*ch+c]))
		}
	}
	if worst > 1e-9 {
		t.Errorf("largest difference to ffmpeg %g, want <= 1e-9", worst)
	}
	if fr := d.Info().Frames; fr >= 0 && fr != int64(got.Frames()) {
		t.Errorf("Info().Frames = %d, decoded %d", fr, got.Frames())
	}
	return d
}

// TestAgreesWithFFmpeg decodes files written by ffmpeg (to a file and to a
// pipe) in every sample format and checks them against ffmpeg's decode.
// shortPick is every case of a test against ffmpeg or sox in the plain
// run and, with -short (the quick check), three of them, the first and
// last kept: each case starts two to four programs.
func shortPick[T any](cases []T) []T {
	if testing.Short() {
		return testsize.Pick(cases, 3)
	}
	return cases
}

func TestAgreesWithFFmpeg(t *testing.T) {
	ffmpeg := need.Program(t, "ffmpeg")
	dir := t.TempDir()
	for _, tc := range shortPick([]struct {
		codec    string
		channels int
		rate     int
		bits     int
		mask     uint32 // expected channel mask, 0 for plain fmt
	}{
		{"pcm_u8", 1, 8000, 8, 0},
		{"pcm_s16le", 2, 44100, 16, 0},
		{"pcm_s16le", 6, 48000, 16, 0x3f},
		{"pcm_s24le", 2, 96000, 24, 0x3},
		{"pcm_s32le", 1, 48000, 32, 0x4},
		{"pcm_f32le", 2, 48000, 32, 0x3},
		{"pcm_f64le", 8, 22050, 64, 0x63f},
	}) {
		name := tc.codec + "-" + string(rune('0'+tc.channels)) + "ch"
		t.Run(name, func(t *testing.T) {
			args := []string{"-v", "error", "-f", "lavfi", "-i", "anoisesrc=d=0.3:c=pink:a=0.7:r=" + itoa(tc.rate),
				"-ac", itoa(tc.channels), "-c:a", tc.codec, "-metadata", "title=Pink noise", "-y"}
			file := filepath.Join(dir, name+".wav")
			if out, err := exec.Command(ffmpeg, append(args, file)...).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v: %s", err, out)
			}
			d := agree(t, file)
			info := d.Info()
			if info.Channels != tc.channels || info.SampleRate != tc.rate || info.BitDepth != tc.bits || d.ChannelMask() != tc.mask {
				t.Errorf("Info = %+v, mask %#x; want %d ch, %d Hz, %d bit, mask %#x", info, d.ChannelMask(), tc.channels, tc.rate, tc.bits, tc.mask)
			}
			if info.Tags.Title != "Pink noise" {
				t.Errorf("title %q, want %q", info.Tags.Title, "Pink noise")
			}
			// The same through a pipe: sizes are 0xFFFFFFFF.
			piped, err := exec.Command(ffmpeg, append(args[:len(args)-1], "-f", "wav", "-")...).Output()
			if err != nil {
				t.Fatalf("ffmpeg to pipe: %v", stderrOf(err))
			}
			pipeFile := filepath.Join(dir, name+"-pipe.wav")
			if err := os.WriteFile(pipeFile, piped, 0o644); err != nil {
				t.Fatal(err)
			}
			if d := agree(t, pipeFile); d.Info().Frames != -1 {
				t.Errorf("piped file: Info().Frames = %d, want -1", d.Info().Frames)
			}
		})
	}
}

// TestAgreesWithSox decodes files written by sox, including its pipe
// placeholder sizes, and checks them against ffmpeg's decode.
func TestAgreesWithSox(t *testing.T) {
	sox := need.Program(t, "sox")
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	for _, tc := range shortPick([]struct {
		name string
		args []string
	}{
		{"u8", []string{"-b", "8", "-c", "1", "-r", "8000"}},
		{"s16", []string{"-b", "16", "-c", "2", "-r", "44100"}},
		{"s24-3ch", []string{"-b", "24", "-c", "3", "-r", "48000"}},
		{"s32", []string{"-b", "32", "-e", "signed-integer", "-c", "2", "-r", "48000"}},
		{"f32", []string{"-b", "32", "-e", "floating-point", "-c", "2", "-r", "48000"}},
		{"f64", []string{"-b", "64", "-e", "floating-point", "-c", "1", "-r", "192000"}},
	}) {
		t.Run(tc.name, func(t *testing.T) {
			synth := []string{"synth", "0.3", "sine", "440", "gain", "-3"}
			file := filepath.Join(dir, tc.name+".wav")
			args := append(append([]string{"-n"}, tc.args...), file)
			if out, err := exec.Command(sox, append(args, synth...)...).CombinedOutput(); err != nil {
				t.Fatalf("sox: %v: %s", err, out)
			}
			agree(t, file)
			args = append(append([]string{"-n"}, tc.args...), "-t", "wav", "-")
			piped, err := exec.Command(sox, append(args, synth...)...).Output()
			if err != nil {
				t.Fatalf("sox to pipe: %v", stderrOf(err))
			}
			pipeFile := filepath.Join(dir, tc.name+"-pipe.wav")
			if err := os.WriteFile(pipeFile, piped, 0o644); err != nil {
				t.Fatal(err)
			}
			agree(t, pipeFile)
		})
	}
}

// TestFFmpegReadsOurFiles checks that ffmpeg decodes what the encoder writes
// (seekable with JUNK and tags, pipe with unknown sizes, pipe with a stated
// Length) to the same samples as this package, and reads the tags.
func TestFFmpegReadsOurFiles(t *testing.T) {
	ffprobe := need.Program(t, "ffprobe")
	dir := t.TempDir()
	for i, bits := range []int{16, 24, 32} {
		for j, channels := range []int{1, 2, 6} {
			if testing.Short() && i != j {
				continue // the quick check: 16 bit mono, 24 bit stereo, 32 bit 6 channels
			}
			in := audiotest.Noise(channels, 4801, 0.9, uint64(bits*channels))
			name := "b" + itoa(bits) + "-c" + itoa(channels)
			seekable := filepath.Join(dir, name+".wav")
			encodeFile(t, seekable, in, 48000, audio.EncodeOptions{BitDepth: bits, Tags: testTags})
			var streamed bytes.Buffer
			e, err := NewEncoder(context.Background(), onlyWriter{&streamed}, audio.Format{SampleRate: 48000, Channels: channels}, audio.EncodeOptions{BitDepth: bits})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Write(in); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			pipeFile := filepath.Join(dir, name+"-pipe.wav")
			if err := os.WriteFile(pipeFile, streamed.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run(name, func(t *testing.T) {
				agree(t, seekable)
				agree(t, pipeFile)
				out, err := exec.Command(ffprobe, "-v", "error", "-show_entries", "format_tags=title,artist,album", "-of", "default=nw=1", seekable).Output()
				if err != nil {
					t.Fatal(stderrOf(err))
				}
				for _, want := range []string{"TAG:title=" + testTags.Title, "TAG:artist=" + testTags.Artist, "TAG:album=" + testTags.Album} {
					if !strings.Contains(string(out), want) {
						t.Errorf("ffprobe output %q lacks %q", out, want)
					}
				}
			})
		}
	}
}

// TestEBUFiles decodes the official EBU loudness test files.
func TestEBUFiles(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "testdata", "ebu-loudness")
	files, _ := filepath.Glob(filepath.Join(dir, "*.wav"))
	if len(files) == 0 {
		t.Skipf("no EBU test files in %s", dir)
	}
	depths := map[int]int{}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := audio.Decode(context.Background(), f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		got, err := audio.ReadAll(context.Background(), d)
		f.Close()
		info := d.Info()
		switch {
		case err != nil:
			t.Errorf("%s: %v", filepath.Base(path), err)
		case int64(got.Frames()) != info.Frames || info.SampleRate != 48000 || info.Format != "wav":
			t.Errorf("%s: %d frames decoded, Info %+v", filepath.Base(path), got.Frames(), info)
		case strings.Contains(path, "bit") && !strings.Contains(filepath.Base(path), itoa(info.BitDepth)+"bit"):
			t.Errorf("%s: bit depth %d", filepath.Base(path), info.BitDepth)
		}
		var peak float64
		for c := range got {
			for _, x := range got[c] {
				peak = max(peak, math.Abs(x))
			}
		}
		if peak == 0 || peak > 1 {
			t.Errorf("%s: peak %v", filepath.Base(path), peak)
		}
		depths[info.BitDepth]++
	}
	t.Logf("decoded %d EBU files, by bit depth: %v", len(files), depths)
}

func itoa(i int) string { return strconv.Itoa(i) }
