package beepaudio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopxl/beep/v2"
	beepwav "github.com/gopxl/beep/v2/wav"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// frames is a beep.Streamer over stereo frames that keeps beep's contract:
// full reads, one short read at the end, then (0, false); err, if set, is
// reported once the frames are out.
type frames struct {
	f   [][2]float64
	pos int
	err error
}

func (s *frames) Stream(samples [][2]float64) (int, bool) {
	if s.pos >= len(s.f) {
		return 0, false
	}
	n := copy(samples, s.f[s.pos:])
	s.pos += n
	return n, true
}

func (s *frames) Err() error {
	if s.pos >= len(s.f) {
		return s.err
	}
	return nil
}

// stereoFrames returns n frames of noise, different on each side.
func stereoFrames(n int) [][2]float64 {
	b := audiotest.Noise(2, n, 1, 3)
	out := make([][2]float64, n)
	for i := range out {
		out[i] = [2]float64{b[0][i], b[1][i]}
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func TestSourceContract(t *testing.T) {
	in := stereoFrames(9001)
	for _, mode := range []ChannelMode{Stereo, MonoAverage, MonoLeft} {
		t.Run(mode.String(), func(t *testing.T) {
			got := audiotest.CheckSource(t, func() audio.Source {
				s, err := NewSource(&frames{f: in}, 44100, mode)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
			want := make(audio.Buffer, 2)
			for _, f := range in {
				switch mode {
				case Stereo:
					want[0] = append(want[0], f[0])
					want[1] = append(want[1], f[1])
				case MonoAverage:
					want[0] = append(want[0], (f[0]+f[1])/2)
				case MonoLeft:
					want[0] = append(want[0], f[0])
				}
			}
			for c := range got {
				if !sameBits(got[c], want[c]) {
					t.Errorf("channel %d differs", c)
				}
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	if _, err := NewSource(&frames{}, 44100, ChannelMode(7)); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("mode 7: %v", err)
	}
	if _, err := NewSource(&frames{}, 100, Stereo); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("100 Hz: %v", err)
	}
	if _, err := NewSource(nil, 44100, Stereo); err == nil {
		t.Error("nil streamer accepted")
	}
	boom := errors.New("boom")
	s, _ := NewSource(&frames{f: stereoFrames(10), err: boom}, 44100, Stereo)
	buf := audio.NewBuffer(2, 64)
	if n, err := s.Read(buf); n != 10 || err != nil {
		t.Errorf("Read = %d, %v; want the 10 frames", n, err)
	}
	for range 2 {
		if n, err := s.Read(buf); n != 0 || err != boom {
			t.Errorf("Read at the end = %d, %v; want the streamer's error", n, err)
		}
	}
	if _, err := s.Read(audio.NewBuffer(1, 4)); !errors.Is(err, boom) {
		t.Errorf("Read after the error: %v", err)
	}
	// A streamer that keeps returning nothing without ending.
	stuck, _ := NewSource(beep.StreamerFunc(func([][2]float64) (int, bool) { return 0, true }), 44100, Stereo)
	if _, err := stuck.Read(buf); err != io.ErrNoProgress {
		t.Errorf("stuck streamer: %v", err)
	}
}

// streamAll drains st with requests of len block, checking beep's contract,
// and returns the frames.
func streamAll(t *testing.T, st beep.Streamer, block int) [][2]float64 {
	t.Helper()
	var out [][2]float64
	buf := make([][2]float64, block)
	drained := false
	for calls := 0; ; calls++ {
		if calls > 1<<24 {
			t.Fatal("never drained")
		}
		for i := range buf {
			buf[i] = [2]float64{math.NaN(), math.NaN()}
		}
		n, ok := st.Stream(buf)
		switch {
		case !ok && n != 0:
			t.Fatalf("Stream = %d, false", n)
		case !ok:
			for range 3 {
				if n, ok := st.Stream(buf); n != 0 || ok {
					t.Fatalf("Stream after the end = %d, %v", n, ok)
				}
			}
			return out
		case drained:
			t.Fatalf("Stream = %d, true after a short read", n)
		case n < block:
			drained = true
		}
		for _, f := range buf[:n] {
			if math.IsNaN(f[0]) || math.IsNaN(f[1]) {
				t.Fatal("frame counted but not written")
			}
		}
		out = append(out, buf[:n]...)
	}
}

func TestStreamerContract(t *testing.T) {
	for _, channels := range []int{1, 2, 6} {
		t.Run(fmt.Sprintf("%dch", channels), func(t *testing.T) {
			in := audiotest.Noise(channels, 9001, 1, 5)
			var ref [][2]float64
			for _, block := range audiotest.BlockSizes {
				st, err := NewStreamer(audio.NewBufferSource(in, 48000))
				if err != nil {
					t.Fatal(err)
				}
				got := streamAll(t, st, block)
				if st.Err() != nil {
					t.Errorf("Err() = %v", st.Err())
				}
				if len(got) != in.Frames() {
					t.Fatalf("%d frames, want %d", len(got), in.Frames())
				}
				if ref != nil {
					for i := range got {
						if got[i] != ref[i] {
							t.Fatalf("block %d: frame %d differs", block, i)
						}
					}
				}
				ref = got
			}
		})
	}
}

// TestRoundTrip: audiopost -> beep -> audiopost is bit-exact for stereo and
// for mono.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		channels int
		mode     ChannelMode
	}{{2, Stereo}, {1, MonoAverage}, {1, MonoLeft}} {
		in := audiotest.Noise(tc.channels, 10007, 1.5, 9)
		in[0][3], in[0][4] = math.Copysign(0, -1), math.Inf(1)
		got := audiotest.CheckSource(t, func() audio.Source {
			st, err := NewStreamer(audio.NewBufferSource(in, 48000))
			if err != nil {
				t.Fatal(err)
			}
			src, err := NewSource(st, st.Format().SampleRate, ModeFor(st.Format()))
			if tc.mode == MonoLeft {
				src, err = NewSource(st, st.Format().SampleRate, MonoLeft)
			}
			if err != nil {
				t.Fatal(err)
			}
			return src
		})
		for c := range in {
			if !sameBits(got[c], in[c]) {
				t.Errorf("%d channels, %v: channel %d differs", tc.channels, tc.mode, c)
			}
		}
	}
}

func TestDownmix(t *testing.T) {
	g := math.Sqrt2 / 2
	for _, tc := range []struct {
		frame []float64
		l, r  float64
	}{
		{[]float64{1, 2, 4}, 1 + 4*g, 2 + 4*g},                                       // L R C
		{[]float64{1, 2, 4, 8}, 1 + 4*g, 2 + 8*g},                                    // L R BL BR
		{[]float64{1, 2, 4, 8, 16}, 1 + 4*g + 8*g, 2 + 4*g + 16*g},                   // L R C BL BR
		{[]float64{1, 2, 4, 100, 8, 16}, 1 + 4*g + 8*g, 2 + 4*g + 16*g},              // 5.1
		{[]float64{1, 2, 4, 100, 8, 16, 32}, 1 + 4*g + 4 + 16*g, 2 + 4*g + 4 + 32*g}, // 6.1
		{[]float64{1, 2, 4, 100, 8, 16, 32, 64}, 1 + 4*g + 8*g + 32*g, 2 + 4*g + 16*g + 64*g},
	} {
		b := make(audio.Buffer, len(tc.frame))
		for c, v := range tc.frame {
			b[c] = []float64{v}
		}
		st, err := NewStreamer(audio.NewBufferSource(b, 48000))
		if err != nil {
			t.Fatal(err)
		}
		if st.Format().NumChannels != 2 {
			t.Errorf("%d channels: beep format has %d", len(b), st.Format().NumChannels)
		}
		var out [1][2]float64
		st.Stream(out[:])
		if math.Abs(out[0][0]-tc.l) > 1e-12 || math.Abs(out[0][1]-tc.r) > 1e-12 {
			t.Errorf("%d channels: %v, want [%v %v]", len(b), out[0], tc.l, tc.r)
		}
	}
}

// failing fails after its frames.
type failing struct {
	audio.Source
	err error
}

func (f failing) Read(dst audio.Buffer) (int, error) {
	n, err := f.Source.Read(dst)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

func TestStreamerError(t *testing.T) {
	boom := errors.New("boom")
	st, _ := NewStreamer(failing{audio.NewBufferSource(audio.NewBuffer(2, 100), 48000), boom})
	buf := make([][2]float64, 64)
	if n, ok := st.Stream(buf); n != 64 || !ok || st.Err() != nil {
		t.Errorf("Stream = %d, %v, %v", n, ok, st.Err())
	}
	if n, ok := st.Stream(buf); n != 36 || !ok || st.Err() != nil {
		t.Errorf("Stream = %d, %v, %v; want the last 36 frames", n, ok, st.Err())
	}
	if n, ok := st.Stream(buf); n != 0 || ok || st.Err() != boom {
		t.Errorf("Stream = %d, %v, %v; want the error", n, ok, st.Err())
	}
	if _, err := NewStreamer(audio.NewBufferSource(audio.NewBuffer(9, 1), 48000)); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("9 channels: %v", err)
	}
}

// TestBeepWAVRoundTrip: 16 and 24-bit PCM decoded by audiopost, encoded by
// beep through a Streamer, decoded by audiopost again is bit-exact; and a
// file decoded by beep, read through a Source and encoded by audiopost
// holds the same samples as the original.
func TestBeepWAVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, bits := range []int{16, 24} {
		for _, channels := range []int{1, 2} {
			name := fmt.Sprintf("%dbit-%dch", bits, channels)
			in := quantized(channels, 12000, bits)
			orig := testaudio.EncodeWAV(t, in, 44100, bits)

			// audiopost -> beep's encoder.
			d, err := wav.NewDecoder(context.Background(), bytes.NewReader(orig))
			if err != nil {
				t.Fatal(err)
			}
			st, err := NewStreamer(d)
			if err != nil {
				t.Fatal(err)
			}
			format := st.Format()
			format.Precision = bits / 8
			path := filepath.Join(dir, name+".wav")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := beepwav.Encode(f, st, format); err != nil {
				t.Fatal(err)
			}
			f.Close()
			data, _ := os.ReadFile(path)
			got := testaudio.DecodeWAV(t, data)
			for c := range in {
				if !sameBits(got[c], in[c]) {
					t.Errorf("%s: beep's encoder: channel %d differs", name, c)
				}
			}

			// beep's decoder -> audiopost.
			bs, bf, err := beepwav.Decode(bytes.NewReader(orig))
			if err != nil {
				t.Fatal(err)
			}
			src, err := NewSource(bs, bf.SampleRate, ModeFor(bf))
			if err != nil {
				t.Fatal(err)
			}
			back, err := audio.ReadAll(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			for c := range in {
				if !sameBits(back[c], in[c]) {
					t.Errorf("%s: beep's decoder: channel %d differs", name, c)
				}
			}
		}
	}
}

// TestZeroAllocs: in steady state neither adapter allocates per block.
func TestZeroAllocs(t *testing.T) {
	const n = 1 << 20
	in := &frames{f: make([][2]float64, n)}
	src, _ := NewSource(in, 48000, Stereo)
	buf := audio.NewBuffer(2, 1024)
	st, _ := NewStreamer(audio.NewBufferSource(audio.NewBuffer(6, n), 48000))
	samples := make([][2]float64, 1024)
	for name, f := range map[string]func(){
		"Source.Read":     func() { src.Read(buf) },
		"Streamer.Stream": func() { st.Stream(samples) },
	} {
		f()
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s: %v allocations per block, want 0", name, a)
		}
	}
}

// BenchmarkAdapters measures each adapter on 4096-frame blocks:
//
//	go test -run '^$' -bench . -benchmem ./audio/beepaudio
func BenchmarkAdapters(b *testing.B) {
	const blockFrames = 4096
	b.Run("Source.Read/stereo", func(b *testing.B) {
		in := &frames{f: make([][2]float64, blockFrames)}
		src, _ := NewSource(in, 48000, Stereo)
		buf := audio.NewBuffer(2, blockFrames)
		b.SetBytes(blockFrames * 16)
		b.ReportAllocs()
		for b.Loop() {
			in.pos = 0
			src.Read(buf)
		}
	})
	for _, channels := range []int{1, 2, 6} {
		b.Run(fmt.Sprintf("Streamer.Stream/%dch", channels), func(b *testing.B) {
			samples := make([][2]float64, blockFrames)
			b.SetBytes(int64(blockFrames * channels * 8))
			b.ReportAllocs()
			st, _ := NewStreamer(endless{audio.Format{SampleRate: 48000, Channels: channels}})
			for b.Loop() {
				st.Stream(samples)
			}
		})
	}
}

// endless is a Source of silence that never ends.
type endless struct{ f audio.Format }

func (e endless) Format() audio.Format { return e.f }

func (e endless) Read(dst audio.Buffer) (int, error) {
	dst.Zero()
	return dst.Frames(), nil
}
