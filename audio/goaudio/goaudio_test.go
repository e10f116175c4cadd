package goaudio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	gaudio "github.com/go-audio/audio"
	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// interleave returns b as go-audio integer samples of the bit depth.
func interleave(b audio.Buffer, bits int) []int {
	out := make([]int, 0, len(b)*b.Frames())
	for i := range b.Frames() {
		for c := range b {
			v, _ := audio.FloatToInt(b[c][i], bits)
			if bits == 8 {
				v += 128
			}
			out = append(out, int(v))
		}
	}
	return out
}

func TestSourceContract(t *testing.T) {
	const rate, frames = 44100, 5000
	for _, channels := range []int{1, 2, 3} {
		for _, bits := range []int{8, 16, 24, 32} {
			t.Run(fmt.Sprintf("int%d/%dch", bits, channels), func(t *testing.T) {
				want := quantized(channels, frames, bits)
				ib := &gaudio.IntBuffer{
					Format:         &gaudio.Format{NumChannels: channels, SampleRate: rate},
					Data:           interleave(want, bits),
					SourceBitDepth: bits,
				}
				got := audiotest.CheckSource(t, func() audio.Source {
					s, err := NewSource(ib)
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
				if ok, diff := equal(got, want); !ok {
					t.Error(diff)
				}
			})
		}
		t.Run(fmt.Sprintf("float/%dch", channels), func(t *testing.T) {
			want := audiotest.Noise(channels, frames, 1, 7)
			fb := &gaudio.FloatBuffer{Format: &gaudio.Format{NumChannels: channels, SampleRate: rate}}
			f32 := &gaudio.Float32Buffer{Format: fb.Format}
			for i := range frames {
				for c := range want {
					want[c][i] = float64(float32(want[c][i]))
					fb.Data = append(fb.Data, want[c][i])
					f32.Data = append(f32.Data, float32(want[c][i]))
				}
			}
			for _, b := range []gaudio.Buffer{fb, f32} {
				got := audiotest.CheckSource(t, func() audio.Source {
					s, err := NewSource(b)
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
				if ok, diff := equal(got, want); !ok {
					t.Errorf("%T: %s", b, diff)
				}
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	f := &gaudio.Format{NumChannels: 2, SampleRate: 48000}
	for _, tc := range []struct {
		name string
		b    gaudio.Buffer
	}{
		{"nil", nil},
		{"no format", &gaudio.IntBuffer{SourceBitDepth: 16}},
		{"no bit depth", &gaudio.IntBuffer{Format: f}},
		{"12 bits", &gaudio.IntBuffer{Format: f, SourceBitDepth: 12}},
		{"9 channels", &gaudio.FloatBuffer{Format: &gaudio.Format{NumChannels: 9, SampleRate: 48000}}},
		{"rate 0", &gaudio.FloatBuffer{Format: &gaudio.Format{NumChannels: 1}}},
		{"PCMBuffer", &gaudio.PCMBuffer{Format: f}},
	} {
		if _, err := NewSource(tc.b); !errors.Is(err, audio.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", tc.name, err)
		}
	}
	s, _ := NewSource(&gaudio.IntBuffer{Format: f, SourceBitDepth: 16, Data: make([]int, 5)})
	if _, err := s.Read(audio.NewBuffer(1, 4)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("Read with 1 channel: %v", err)
	}
	// 5 samples of a stereo stream: 2 whole frames.
	if n, err := s.Read(audio.NewBuffer(2, 4)); n != 2 || err != nil {
		t.Errorf("Read = %d, %v; want 2 whole frames", n, err)
	}
}

// TestWAVSourceContract decodes files written by audiopost's encoder
// through go-audio's decoder and checks them against audiopost's decoder.
func TestWAVSourceContract(t *testing.T) {
	for _, tc := range []struct {
		channels, bits int
	}{{1, 16}, {2, 16}, {2, 24}, {6, 24}, {2, 32}} {
		t.Run(fmt.Sprintf("%dch-%dbit", tc.channels, tc.bits), func(t *testing.T) {
			in := quantized(tc.channels, 9001, min(tc.bits, 24))
			file := testaudio.EncodeWAV(t, in, 48000, tc.bits)
			want := testaudio.DecodeWAV(t, file)
			var bitDepth int
			got := audiotest.CheckSource(t, func() audio.Source {
				s, err := NewWAVSource(bytes.NewReader(file))
				if err != nil {
					t.Fatal(err)
				}
				bitDepth = s.BitDepth()
				if s.Frames() != int64(in.Frames()) {
					t.Errorf("Frames() = %d, want %d", s.Frames(), in.Frames())
				}
				return s
			})
			if bitDepth != tc.bits {
				t.Errorf("BitDepth() = %d, want %d", bitDepth, tc.bits)
			}
			if ok, diff := equal(got, want); !ok {
				t.Error(diff)
			}
		})
	}
}

// TestWAVSourceUnknownSize reads a file whose data chunk states 0xFFFFFFFF
// (as ffmpeg writes to a pipe) to its end; go-audio alone reads it as empty.
func TestWAVSourceUnknownSize(t *testing.T) {
	in := quantized(2, 3000, 16)
	var pipe bytes.Buffer // not seekable: the encoder states "unknown"
	e, err := wav.NewEncoder(context.Background(), &pipe, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(in)
	e.Close()
	s, err := NewWAVSource(bytes.NewReader(pipe.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if s.Frames() != -1 {
		t.Errorf("Frames() = %d, want -1", s.Frames())
	}
	got, err := audio.ReadAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ok, diff := equal(got, in); !ok {
		t.Error(diff)
	}
}

func TestWAVSourceTruncated(t *testing.T) {
	file := testaudio.EncodeWAV(t, quantized(2, 1000, 16), 48000, 16)
	file = file[:len(file)-401] // 100 frames and one byte short
	s, err := NewWAVSource(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got, err := audio.ReadAll(context.Background(), s)
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, audio.ErrMalformed) {
		t.Errorf("err = %v, want ErrTruncated", err)
	}
	if got.Frames() != 899 {
		t.Errorf("%d frames before the cut, want 899", got.Frames())
	}
	if _, err2 := s.Read(audio.NewBuffer(2, 10)); err2 != err {
		t.Errorf("error not sticky: %v", err2)
	}
}

// TestRoundTrip: audiopost WAV -> go-audio decoder -> audiopost Source ->
// go-audio encoder -> audiopost decoder gives the samples back bit for bit,
// and go-audio's own decoder reads back the same integers.
func TestRoundTrip(t *testing.T) {
	for _, bits := range []int{16, 24} {
		for _, channels := range []int{1, 2} {
			t.Run(fmt.Sprintf("%dbit-%dch", bits, channels), func(t *testing.T) {
				in := quantized(channels, 20000, bits)
				src, err := NewWAVSource(bytes.NewReader(testaudio.EncodeWAV(t, in, 44100, bits)))
				if err != nil {
					t.Fatal(err)
				}
				out := &testaudio.MemFile{}
				sink, err := NewWAVSink(out, src.Format(), src.BitDepth())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := audio.Copy(context.Background(), sink, src); err != nil {
					t.Fatal(err)
				}
				if err := sink.Close(); err != nil {
					t.Fatal(err)
				}
				if sink.Clipped() != 0 {
					t.Errorf("%d samples clipped", sink.Clipped())
				}
				if ok, diff := equal(testaudio.DecodeWAV(t, out.B), in); !ok {
					t.Errorf("audiopost decoder: %s", diff)
				}
				// go-audio as an independent reader of its own output.
				ib, err := gwav.NewDecoder(bytes.NewReader(out.B)).FullPCMBuffer()
				if err != nil {
					t.Fatal(err)
				}
				want := interleave(in, bits)
				if len(ib.Data) != len(want) {
					t.Fatalf("go-audio decodes %d samples, want %d", len(ib.Data), len(want))
				}
				for i := range want {
					if ib.Data[i] != want[i] {
						t.Fatalf("go-audio decodes sample %d as %d, want %d", i, ib.Data[i], want[i])
					}
				}
			})
		}
	}
}

// TestSink8Bit checks the unsigned 8-bit convention both ways.
func TestSink8Bit(t *testing.T) {
	in := quantized(1, 500, 8)
	out := &testaudio.MemFile{}
	sink, err := NewWAVSink(out, audio.Format{SampleRate: 8000, Channels: 1}, 8)
	if err != nil {
		t.Fatal(err)
	}
	sink.Write(in)
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, diff := equal(testaudio.DecodeWAV(t, out.B), in); !ok {
		t.Errorf("audiopost decoder: %s", diff)
	}
	s, err := NewWAVSource(bytes.NewReader(out.B))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := audio.ReadAll(context.Background(), s)
	if ok, diff := equal(got, in); !ok {
		t.Errorf("WAVSource: %s", diff)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(*gaudio.IntBuffer) error {
	if f.n++; f.n > 1 {
		return io.ErrShortWrite
	}
	return nil
}

func TestSinkErrors(t *testing.T) {
	f := audio.Format{SampleRate: 48000, Channels: 2}
	if _, err := NewSink(&failWriter{}, f, 20); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("20 bits: %v", err)
	}
	if _, err := NewWAVSink(&testaudio.MemFile{}, audio.Format{SampleRate: 48000, Channels: 9}, 16); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("9 channels: %v", err)
	}
	s, err := NewSink(&failWriter{}, f, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(audio.NewBuffer(1, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("1 channel: %v", err)
	}
	// 5000 frames make two blocks: the second write fails, and stays failed.
	if err := s.Write(audio.NewBuffer(2, 5000)); err != io.ErrShortWrite {
		t.Errorf("Write = %v, want the writer's error", err)
	}
	if err := s.Write(audio.NewBuffer(2, 1)); err != io.ErrShortWrite {
		t.Errorf("Write after failure = %v", err)
	}
	clip := audio.Buffer{{2, -2, 0.5}, {0, 0, 0}}
	s2, _ := NewSink(&failWriter{}, f, 16)
	s2.Write(clip)
	if s2.Clipped() != 2 {
		t.Errorf("Clipped() = %d, want 2", s2.Clipped())
	}
}

// TestEmptyWAVSink: a stream without frames still makes a valid file.
func TestEmptyWAVSink(t *testing.T) {
	out := &testaudio.MemFile{}
	s, err := NewWAVSink(out, audio.Format{SampleRate: 48000, Channels: 2}, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := testaudio.DecodeWAV(t, out.B); got.Frames() != 0 || len(got) != 2 {
		t.Errorf("decoded %d channels, %d frames", len(got), got.Frames())
	}
}

type discard struct{}

func (discard) Write(*gaudio.IntBuffer) error { return nil }

// TestZeroAllocs: in steady state no adapter allocates per block.
func TestZeroAllocs(t *testing.T) {
	const block = 1024
	in := quantized(2, 300*block, 16)
	ib := &gaudio.IntBuffer{Format: &gaudio.Format{NumChannels: 2, SampleRate: 48000}, Data: interleave(in, 16), SourceBitDepth: 16}
	src, _ := NewSource(ib)
	ws, err := NewWAVSource(bytes.NewReader(testaudio.EncodeWAV(t, in, 48000, 24)))
	if err != nil {
		t.Fatal(err)
	}
	sink, _ := NewSink(discard{}, audio.Format{SampleRate: 48000, Channels: 2}, 24)
	buf := audio.NewBuffer(2, block)
	for name, f := range map[string]func(){
		"Source.Read":    func() { src.Read(buf) },
		"WAVSource.Read": func() { ws.Read(buf) },
		"Sink.Write":     func() { sink.Write(buf) },
	} {
		f() // warm up
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s: %v allocations per block, want 0", name, a)
		}
	}
}

// TestWAVSinkMetadata: go-audio writes its LIST chunk after the samples,
// without the pad byte of an odd size; CheckWAV accepts such a file and
// go-audio reads the tags back.
func TestWAVSinkMetadata(t *testing.T) {
	out := &testaudio.MemFile{}
	s, err := NewWAVSink(out, audio.Format{SampleRate: 48000, Channels: 1}, 16)
	if err != nil {
		t.Fatal(err)
	}
	s.Encoder().Metadata = &gwav.Metadata{Title: "odd", Artist: "someone"}
	s.Write(quantized(1, 100, 16))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckWAV(bytes.NewReader(out.B)); err != nil {
		t.Fatal(err)
	}
	d := gwav.NewDecoder(bytes.NewReader(out.B))
	d.ReadMetadata()
	if d.Metadata == nil || d.Metadata.Title != "odd" || d.Metadata.Artist != "someone" {
		t.Errorf("metadata %+v", d.Metadata)
	}
}
