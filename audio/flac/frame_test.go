package flac

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	mflac "github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// TestFramesMatchLibrary: the frames the encoder builds itself are the
// bytes the mewkiz/flac encoder writes for the same block, channel
// assignment and sample size (its prediction analysis picks constant,
// verbatim or fixed order 0-4 with one Rice partition by the same
// estimate), for every assignment, both sample sizes, odd block sizes and
// frame numbers that take one to four bytes.
func TestFramesMatchLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type block struct {
		name string
		ch   [][]int32
	}
	gen := func(bits, n int, f func(i int) (float64, float64)) [][]int32 {
		full := float64(int64(1) << (bits - 1))
		l, r := make([]int32, n), make([]int32, n)
		for i := range n {
			a, b := f(i)
			l[i] = int32(max(-full, min(full-1, math.Round(a*full))))
			r[i] = int32(max(-full, min(full-1, math.Round(b*full))))
		}
		return [][]int32{l, r}
	}
	for _, bits := range []int{16, 24} {
		blocks := []block{
			{"sine+noise", gen(bits, BlockSize, func(i int) (float64, float64) {
				s := 0.5 * math.Sin(float64(i)*0.03)
				return s + 0.01*rng.NormFloat64(), 0.8*s + 0.01*rng.NormFloat64()
			})},
			{"noise", gen(bits, BlockSize, func(int) (float64, float64) { return rng.Float64()*2 - 1, rng.Float64()*2 - 1 })},
			{"extremes", gen(bits, 1000, func(i int) (float64, float64) { return float64(i%2*2 - 1), float64(1 - i%2*2) })},
			{"constant", gen(bits, 577, func(int) (float64, float64) { return 0.25, -0.5 })},
			{"silence", gen(bits, 192, func(int) (float64, float64) { return 0, 0 })},
			{"short", gen(bits, 2, func(i int) (float64, float64) { return 0.1 * float64(i), 0.3 })},
			{"one", gen(bits, 1, func(int) (float64, float64) { return 0.1, 0.2 })},
			{"quiet", gen(bits, 4095, func(i int) (float64, float64) {
				return 1e-4 * rng.NormFloat64(), 1e-4 * math.Sin(float64(i))
			})},
		}
		for _, b := range blocks {
			n := len(b.ch[0])
			for _, assign := range []uint8{1, chanLeftSide, chanSideRight, chanMidSide} {
				for _, num := range []uint64{0, 200} {
					for _, rate := range []int{48000, 44100, 22000, 12345} {
						got := newFrameWriter(BlockSize)
						got.num = num
						mine := got.encode(b.ch, n, uint(bits), assign, newFrameHeader(headerRate(rate), bits))
						want := libraryFrame(t, b.ch, n, bits, frame.Channels(assign), num, rate)
						if !bytes.Equal(mine, want) {
							t.Fatalf("%d-bit %s, assignment %d, frame %d, %d Hz: %d bytes, the library's %d\n% x\n% x",
								bits, b.name, assign, num, rate, len(mine), len(want), head(mine), head(want))
						}
					}
				}
			}
		}
	}
}

func head(p []byte) []byte { return p[:min(len(p), 48)] }

// libraryFrame is frame number num as mewkiz/flac encodes it.
func libraryFrame(t *testing.T, ch [][]int32, n, bits int, assign frame.Channels, num uint64, rate int) []byte {
	t.Helper()
	var buf bytes.Buffer
	info := meta.StreamInfo{BlockSizeMin: 16, BlockSizeMax: BlockSize, SampleRate: uint32(rate), NChannels: 2, BitsPerSample: uint8(bits)}
	enc, err := mflac.NewEncoder(&buf, &info)
	if err != nil {
		t.Fatal(err)
	}
	subs := make([]*frame.Subframe, len(ch))
	for c := range ch {
		samples := append([]int32(nil), ch[c][:n]...)
		subs[c] = &frame.Subframe{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, Samples: samples, NSamples: n}
	}
	fr := &frame.Frame{Header: frame.Header{HasFixedBlockSize: true, BlockSize: uint16(n), SampleRate: headerRate(rate),
		Channels: assign, BitsPerSample: uint8(bits)}, Subframes: subs}
	// The library numbers the frames it writes: its counter is reached
	// by writing num one-sample frames first.
	for range num {
		tiny := &frame.Frame{Header: frame.Header{HasFixedBlockSize: true, BlockSize: 1, SampleRate: headerRate(rate),
			Channels: frame.ChannelsLR, BitsPerSample: uint8(bits)},
			Subframes: []*frame.Subframe{{Samples: []int32{0}, NSamples: 1}, {Samples: []int32{0}, NSamples: 1}}}
		if err := enc.WriteFrame(tiny); err != nil {
			t.Fatal(err)
		}
	}
	skip := buf.Len()
	if err := enc.WriteFrame(fr); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()[skip:]
}

// TestFrameNumberCoding: frame numbers are coded as FLAC's extended
// UTF-8, which is UTF-8 for the code points UTF-8 covers; beyond, the
// lead byte's ones count the bytes up to seven (36 bits).
func TestFrameNumberCoding(t *testing.T) {
	var w frameWriter
	code := func(x uint64) []byte {
		w.buf, w.acc, w.nacc = w.buf[:0], 0, 0
		w.utf8(x)
		w.flush()
		return w.buf
	}
	for _, x := range []rune{0, 1, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff} {
		if got, want := code(uint64(x)), utf8.AppendRune(nil, x); !bytes.Equal(got, want) {
			t.Errorf("%#x: % x, want % x", x, got, want)
		}
	}
	for _, c := range []struct {
		x    uint64
		want []byte
	}{
		{1<<21 - 1, []byte{0xf7, 0xbf, 0xbf, 0xbf}},
		{1 << 21, []byte{0xf8, 0x88, 0x80, 0x80, 0x80}},
		{1<<31 - 1, []byte{0xfd, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf}},
		{1<<36 - 1, []byte{0xfe, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf}},
	} {
		if got := code(c.x); !bytes.Equal(got, c.want) {
			t.Errorf("%#x: % x, want % x", c.x, got, c.want)
		}
	}
}

// TestRiceParamIsBest: the downhill search finds the parameter an
// exhaustive search finds, the smallest of the cheapest, for residuals
// of every scale, constant and mixed.
func TestRiceParamIsBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		n := 1 + rng.IntN(300)
		scale := math.Exp2(rng.Float64() * 26)
		res := make([]uint32, n)
		for i := range res {
			switch trial % 3 {
			case 0:
				res[i] = fold(int32(rng.NormFloat64() * scale))
			case 1:
				res[i] = uint32(scale)
			default:
				if rng.IntN(10) == 0 {
					res[i] = uint32(rng.Float64() * scale * 100)
				} else {
					res[i] = uint32(rng.Float64() * scale)
				}
			}
		}
		bestK, bestCost := uint(0), riceCost(res, 0)
		for k := uint(1); k <= maxRiceParam; k++ {
			if c := riceCost(res, k); c < bestCost {
				bestK, bestCost = k, c
			}
		}
		if k, cost := riceParam(res); k != bestK || cost != bestCost {
			t.Fatalf("trial %d (%d values, scale %g): k %d cost %d, exhaustive k %d cost %d", trial, n, scale, k, cost, bestK, bestCost)
		}
	}
}

// TestEncodeAllocs: once running, encoding allocates nothing per frame.
func TestEncodeAllocs(t *testing.T) {
	e, err := NewEncoder(context.Background(), io.Discard, audio.Format{SampleRate: 48000, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block := audiotest.Noise(2, 3*BlockSize, 0.1, 9)
	if err := e.Write(block); err != nil { // the output buffer grows to its size
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(20, func() {
		if err := e.Write(block); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per %d frames", allocs, 3)
	}
}
