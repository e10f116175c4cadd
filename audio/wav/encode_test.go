package wav

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

var testTags = audio.Tags{Title: "Épisode 1", Artist: "Host", Album: "Show", Year: "2025", Genre: "Podcast", Comment: "odd", Track: "12"}

// TestRoundTripBitExact encodes noise, decodes it and encodes the decoded
// samples again through a file: the two files must be byte-identical, and
// the samples must be exactly the quantised input.
func TestRoundTripBitExact(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		bits     int
		channels int
		scale    float64
	}{
		{"16-bit stereo", 16, 2, 32768},
		{"16-bit mono odd", 16, 1, 32768},
		{"24-bit stereo", 24, 2, 8388608},
		{"24-bit 5.1", 24, 6, 8388608},
		{"24-bit mono odd", 24, 1, 8388608},
		{"float 32 stereo", 32, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := 12345 // odd: exercises the pad byte for 24-bit mono
			in := audiotest.Noise(tc.channels, frames, 0.99, 7)
			a := encodeFile(t, filepath.Join(dir, tc.name+"-a.wav"), in, 48000, audio.EncodeOptions{BitDepth: tc.bits, Tags: testTags})
			d, got, err := decodeAll(t, a)
			if err != nil {
				t.Fatal(err)
			}
			if got.Frames() != frames || d.Info().Frames != int64(frames) || d.Info().Tags != testTags {
				t.Fatalf("decoded %d frames, Info %+v", got.Frames(), d.Info())
			}
			for c := range in {
				for i, x := range in[c] {
					want := float64(float32(x))
					if tc.scale != 0 {
						want = math.Round(x*tc.scale) / tc.scale
					}
					if got[c][i] != want {
						t.Fatalf("channel %d frame %d = %v, want %v", c, i, got[c][i], want)
					}
				}
			}
			b := encodeFile(t, filepath.Join(dir, tc.name+"-b.wav"), got, 48000, audio.EncodeOptions{BitDepth: tc.bits, Tags: d.Info().Tags})
			if !bytes.Equal(a, b) {
				t.Errorf("second encode differs from the first (%d vs %d bytes)", len(a), len(b))
			}
			if len(a)&1 == 1 {
				t.Errorf("file of odd size %d", len(a))
			}
			if riffSize := binary.LittleEndian.Uint32(a[4:]); int(riffSize) != len(a)-8 {
				t.Errorf("RIFF size %d, file %d bytes", riffSize, len(a))
			}
		})
	}
}

// TestNonSeekable encodes to writers that cannot seek: with and without a
// known Length, through a bytes.Buffer wrapper and through an io.Pipe read
// by the decoder concurrently.
func TestNonSeekable(t *testing.T) {
	const rate, frames = 44100, 44100/2 + 3
	in := audiotest.Sine(2, rate, 997, 0.8, frames)
	exact := time.Duration(frames) * time.Second / rate
	for _, tc := range []struct {
		name       string
		length     time.Duration
		infoFrames int64
	}{
		{"unknown length", 0, -1},
		{"known length", exact, frames},
	} {
		t.Run(tc.name+" buffer", func(t *testing.T) {
			var buf bytes.Buffer
			e, err := NewEncoder(context.Background(), onlyWriter{&buf}, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{Length: tc.length, BitDepth: 24})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := audio.Copy(context.Background(), e, audio.NewBufferSource(in, rate)); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.length == 0 && binary.LittleEndian.Uint32(buf.Bytes()[4:]) != sizeUnknown {
				t.Errorf("RIFF size %#x, want 0xFFFFFFFF", binary.LittleEndian.Uint32(buf.Bytes()[4:]))
			}
			if tc.length != 0 && int(binary.LittleEndian.Uint32(buf.Bytes()[4:])) != buf.Len()-8 {
				t.Errorf("RIFF size %d for a %d-byte file", binary.LittleEndian.Uint32(buf.Bytes()[4:]), buf.Len())
			}
			d, got, err := decodeAll(t, buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if d.Info().Frames != tc.infoFrames || got.Frames() != frames {
				t.Errorf("Info().Frames = %d, decoded %d; want %d, %d", d.Info().Frames, got.Frames(), tc.infoFrames, frames)
			}
			for i := range frames {
				if math.Abs(got[1][i]-in[1][i]) > 0.5/8388608 {
					t.Fatalf("frame %d = %v, want %v", i, got[1][i], in[1][i])
				}
			}
		})
		t.Run(tc.name+" pipe", func(t *testing.T) {
			pr, pw := io.Pipe()
			errc := make(chan error, 1)
			go func() {
				e, err := NewEncoder(context.Background(), pw, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{Length: tc.length})
				if err == nil {
					_, err = audio.Copy(context.Background(), e, audio.NewBufferSource(in, rate))
				}
				if err == nil {
					err = e.Close()
				}
				pw.CloseWithError(err)
				errc <- err
			}()
			d, err := audio.Decode(context.Background(), pr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := audio.ReadAll(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if got.Frames() != frames || d.Info().Frames != tc.infoFrames {
				t.Errorf("decoded %d frames, Info().Frames %d; want %d, %d", got.Frames(), d.Info().Frames, frames, tc.infoFrames)
			}
			var worst float64
			for i := range frames {
				worst = max(worst, math.Abs(got[0][i]-in[0][i]))
			}
			if worst > 0.5/32768 {
				t.Errorf("worst error %g, want at most half a 16-bit step", worst)
			}
		})
	}
}

// TestDeclaredLength checks the non-seekable contract around
// EncodeOptions.Length: too few frames are padded with silence, too many are
// an error.
func TestDeclaredLength(t *testing.T) {
	f := audio.Format{SampleRate: 8000, Channels: 1}
	var buf bytes.Buffer
	e, err := NewEncoder(context.Background(), onlyWriter{&buf}, f, audio.EncodeOptions{Length: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(audiotest.Sine(1, 8000, 100, 0.5, 5000)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, err := decodeAll(t, buf.Bytes())
	if err != nil || got.Frames() != 8000 {
		t.Fatalf("decoded %d frames, %v; want 8000", got.Frames(), err)
	}
	for i := 5000; i < 8000; i++ {
		if got[0][i] != 0 {
			t.Fatalf("padding frame %d = %v, want 0", i, got[0][i])
		}
	}
	e, err = NewEncoder(context.Background(), onlyWriter{io.Discard}, f, audio.EncodeOptions{Length: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(audio.NewBuffer(1, 8000)); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(audio.NewBuffer(1, 1)); !errors.Is(err, ErrLengthExceeded) || !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("writing past Length: %v, want ErrLengthExceeded", err)
	}
}

// TestRF64Header checks the header a seekable encoder writes when the data
// outgrows 4 GiB, without writing gigabytes: the header for that many
// frames must parse back to the same frame count, and has the size of the
// reserved one.
func TestRF64Header(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.wav"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := NewEncoder(context.Background(), f, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{BitDepth: 24, Tags: testTags})
	if err != nil {
		t.Fatal(err)
	}
	const frames = 1 << 30 // 6 GiB of 24-bit stereo
	small, big := e.header(-1), e.header(frames)
	if len(small) != len(big) || string(big[:4]) != "RF64" || string(small[12:16]) != "JUNK" {
		t.Fatalf("headers: %q... (%d bytes) vs %q... (%d bytes)", small[:16], len(small), big[:16], len(big))
	}
	d, err := NewDecoder(context.Background(), bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	if info := d.Info(); info.Frames != frames || info.Tags != testTags || info.BitDepth != 24 {
		t.Errorf("Info = %+v, want %d frames", info, frames)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestClipped checks the clip count and that clipping saturates.
func TestClipped(t *testing.T) {
	var buf bytes.Buffer
	e, err := NewEncoder(context.Background(), onlyWriter{&buf}, audio.Format{SampleRate: 8000, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := audio.Buffer{{0.5, 1.5, -2, 1, -1}, {math.NaN(), 0, 1.0001, 0, 0}}
	if err := e.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e.Clipped() != 4 {
		t.Errorf("Clipped() = %d, want 4 (1.5, -2, NaN, 1.0001)", e.Clipped())
	}
	_, got, err := decodeAll(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := audio.Buffer{{0.5, 32767.0 / 32768, -1, 32767.0 / 32768, -1}, {0, 0, 32767.0 / 32768, 0, 0}}
	for c := range want {
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				t.Errorf("channel %d frame %d = %v, want %v", c, i, got[c][i], want[c][i])
			}
		}
	}
}

// TestEncoderOptions checks the bit depth choices and the refusals.
func TestEncoderOptions(t *testing.T) {
	f := audio.Format{SampleRate: 48000, Channels: 2}
	for _, tc := range []struct {
		format string
		opts   audio.EncodeOptions
		enc    audio.SampleEncoding
	}{
		{"wav", audio.EncodeOptions{}, audio.Int16},
		{"wav", audio.EncodeOptions{BitDepth: 24}, audio.Int24},
		{"wav", audio.EncodeOptions{BitDepth: 32}, audio.Float32},
		{"wav-24bit", audio.EncodeOptions{}, audio.Int24},
	} {
		var buf bytes.Buffer
		e, err := audio.NewEncoder(context.Background(), tc.format, &buf, f, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		d, _, err := decodeAll(t, buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if d.Encoding() != tc.enc || d.Info().Frames != -1 {
			t.Errorf("%s %+v: %v, %d frames; want %v, -1 (unknown on a non-seekable writer)", tc.format, tc.opts, d.Encoding(), d.Info().Frames, tc.enc)
		}
	}
	if _, err := NewEncoder(context.Background(), io.Discard, f, audio.EncodeOptions{BitDepth: 12}); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("12-bit: %v, want ErrUnsupported", err)
	}
	if _, err := NewEncoder(context.Background(), io.Discard, audio.Format{SampleRate: 48000, Channels: 9}, audio.EncodeOptions{}); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("9 channels: %v, want ErrUnsupported", err)
	}
	e, _ := NewEncoder(context.Background(), io.Discard, f, audio.EncodeOptions{})
	if err := e.Write(audio.NewBuffer(1, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("mono buffer: %v, want ErrFormatMismatch", err)
	}
}

// TestWriteAllocs checks that steady-state encoding allocates nothing.
func TestWriteAllocs(t *testing.T) {
	for _, bits := range []int{16, 24, 32} {
		e, err := NewEncoder(context.Background(), io.Discard, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{BitDepth: bits})
		if err != nil {
			t.Fatal(err)
		}
		block := audiotest.Noise(2, 4096, 0.5, 3)
		if allocs := testing.AllocsPerRun(100, func() {
			if err := e.Write(block); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%d-bit: %v allocations per Write, want 0", bits, allocs)
		}
	}
}
