// Package audiotest checks audio.Source implementations against the
// streaming contract and makes the plain test signals whose properties are
// known: a sine, uniform noise, and the deterministic generator they draw
// from. It imports only package audio, so that the tests of every codec
// (audio/wav's own among them) and the examples of the module's
// documentation can use it. The module's richer test material (speech,
// noise of other colours, hum, rooms, music), its quality measures and its
// test files are in internal/testaudio, which builds on this package.
package audiotest

import (
	"errors"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// BlockSizes are the block sizes every node is tested with: results must not
// depend on them.
var BlockSizes = []int{1, 17, 4096}

// CheckSource runs the Source contract against sources made by open, once per
// block size, and checks that every block size yields the same samples. It
// returns the samples read with the largest block size. open must return a
// fresh Source positioned at the start each time it is called.
func CheckSource(t testing.TB, open func() audio.Source) audio.Buffer {
	t.Helper()
	var ref audio.Buffer
	for _, bs := range BlockSizes {
		src := open()
		got := readContract(t, src, bs)
		if ref == nil {
			ref = got
			continue
		}
		if diff := firstDifference(ref, got); diff != "" {
			t.Errorf("block size %d gives other samples than block size %d: %s", bs, BlockSizes[0], diff)
		}
		ref = got
	}
	return ref
}

// readContract reads src to the end with blocks of block frames and checks
// every rule of the audio.Source documentation on the way: an error if and
// only if no frames; io.EOF at the end and then (0, io.EOF) forever; no
// more frames than asked for and every counted frame written; a stable
// Format; and zero-length reads, made before the first read and between
// blocks, that return (0, nil) before the end and (0, io.EOF) after it. A
// zero-length read may report the end early only if the stream has indeed
// ended: no frame may follow it.
func readContract(t testing.TB, src audio.Source, block int) audio.Buffer {
	t.Helper()
	f := src.Format()
	if f.Channels < 1 || f.SampleRate <= 0 {
		t.Fatalf("Format() = %+v, want positive channels and sample rate", f)
	}
	buf := audio.NewBuffer(f.Channels, block)
	empty := audio.NewBuffer(f.Channels, 0)
	endSeen := false // an empty read reported io.EOF
	emptyRead := func(at int) {
		n, err := src.Read(empty)
		switch {
		case n != 0:
			t.Fatalf("Read(empty) after %d frames returned n=%d", at, n)
		case errors.Is(err, io.EOF):
			endSeen = true
		case err != nil:
			t.Fatalf("Read(empty) after %d frames = 0, %v; want 0, nil", at, err)
		}
	}
	emptyRead(0)
	out := make(audio.Buffer, f.Channels)
	for reads := 0; ; reads++ {
		if reads > 1<<26 {
			t.Fatalf("no EOF after %d reads", reads)
		}
		if reads%7 == 3 {
			emptyRead(len(out[0]))
		}
		for c := range buf {
			for i := range buf[c] {
				buf[c][i] = math.NaN() // catch frames reported but not written
			}
		}
		n, err := src.Read(buf)
		if n < 0 || n > block {
			t.Fatalf("Read returned n=%d for a %d-frame buffer", n, block)
		}
		if (err != nil) != (n == 0) {
			t.Fatalf("Read returned n=%d, err=%v: an error must come if and only if n == 0", n, err)
		}
		if n > 0 && endSeen {
			t.Fatalf("Read returned %d frames after a zero-length Read reported io.EOF (at frame %d)", n, len(out[0]))
		}
		if f2 := src.Format(); f2 != f {
			t.Fatalf("Format changed from %+v to %+v while reading", f, f2)
		}
		for c := range buf {
			for i := 0; i < n; i++ {
				if math.IsNaN(buf[c][i]) {
					t.Fatalf("frame %d channel %d not written though counted (block %d)", len(out[c])+i, c, block)
				}
			}
			out[c] = append(out[c], buf[c][:n]...)
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Read failed after %d frames with block size %d: %v", len(out[0]), block, err)
		}
		for i := 0; i < 3; i++ {
			if n, err := src.Read(buf); n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("Read after EOF = %d, %v; want 0, io.EOF", n, err)
			}
			if n, err := src.Read(empty); n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("Read(empty) after EOF = %d, %v; want 0, io.EOF", n, err)
			}
		}
		return out
	}
}

func firstDifference(a, b audio.Buffer) string {
	if len(a) != len(b) {
		return "channel counts differ"
	}
	for c := range a {
		if len(a[c]) != len(b[c]) {
			return "lengths differ: " + itoa(len(a[c])) + " vs " + itoa(len(b[c])) + " frames"
		}
		for i := range a[c] {
			if a[c][i] != b[c][i] && !(math.IsNaN(a[c][i]) && math.IsNaN(b[c][i])) {
				return "first at channel " + itoa(c) + " frame " + itoa(i)
			}
		}
	}
	return ""
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}

// Sine returns a buffer of a sine at freq Hz with peak amplitude amp on every
// channel.
func Sine(channels, sampleRate int, freq, amp float64, frames int) audio.Buffer {
	b := audio.NewBuffer(channels, frames)
	for i := 0; i < frames; i++ {
		v := amp * math.Sin(2*math.Pi*freq*float64(i)/float64(sampleRate))
		for c := range b {
			b[c][i] = v
		}
	}
	return b
}

// Noise returns deterministic white noise, uniform in [-amp, amp), different
// on every channel: the channels in turn from one NewRand(seed).
func Noise(channels, frames int, amp float64, seed uint64) audio.Buffer {
	b := audio.NewBuffer(channels, frames)
	r := NewRand(seed)
	for c := range b {
		for i := range b[c] {
			b[c][i] = amp * r.Float()
		}
	}
	return b
}

// Rand is a small deterministic generator (xorshift64*) of test signals:
// the same seed gives the same signal on every machine. Its value is the
// generator's state.
type Rand uint64

// NewRand returns a generator for seed (any value, 0 included).
func NewRand(seed uint64) *Rand {
	r := Rand(seed*2862933555777941757 + 3037000493)
	return &r
}

// Uniform returns a uniform value in [0, 1).
func (r *Rand) Uniform() float64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return float64(uint64(*r)>>11) / float64(1<<53)
}

// Float returns a uniform value in [-1, 1).
func (r *Rand) Float() float64 { return r.Uniform()*2 - 1 }

// Gauss returns a standard normal value.
func (r *Rand) Gauss() float64 {
	for {
		u, v := r.Float(), r.Float()
		s := u*u + v*v
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*math.Log(s)/s)
		}
	}
}
