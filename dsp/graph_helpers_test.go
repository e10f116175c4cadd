package dsp_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os/exec"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/audiopost/audiopost/audio"
)

// Helpers of the Mix, Tee, Normalize and Resampler tests. Their names
// start with gt so they cannot collide with the helpers of other tests.

// gtIrregular plays a buffer in reads of irregular length (1 frame, a few
// frames, a whole request), as decoders and network sources do: a node
// must never take a short read for the end.
type gtIrregular struct {
	buf    audio.Buffer
	fs     int
	pos    int
	seed   uint64
	fail   error // returned instead of io.EOF when not nil
	closed int
}

func gtIrregularSource(b audio.Buffer, fs int, seed uint64) *gtIrregular {
	return &gtIrregular{buf: b, fs: fs, seed: seed*2862933555777941757 + 1}
}

func (s *gtIrregular) Format() audio.Format {
	return audio.Format{SampleRate: s.fs, Channels: len(s.buf)}
}

func (s *gtIrregular) Read(dst audio.Buffer) (int, error) {
	if s.pos >= s.buf.Frames() {
		if s.fail != nil {
			return 0, s.fail
		}
		return 0, io.EOF
	}
	want := dst.Frames()
	if want == 0 {
		return 0, nil
	}
	s.seed ^= s.seed << 13
	s.seed ^= s.seed >> 7
	s.seed ^= s.seed << 17
	var n int
	switch s.seed % 4 {
	case 0:
		n = 1
	case 1:
		n = 1 + int(s.seed>>8)%7
	case 2:
		n = 1 + int(s.seed>>8)%want
	default:
		n = want
	}
	n = min(n, want, s.buf.Frames()-s.pos)
	for c := range dst {
		copy(dst[c][:n], s.buf[c][s.pos:s.pos+n])
	}
	s.pos += n
	return n, nil
}

func (s *gtIrregular) Close() error {
	s.closed++
	return nil
}

// gtLoop plays a buffer over and over without allocating: the upstream
// of allocation tests and benchmarks.
type gtLoop struct {
	buf audio.Buffer
	fs  int
	pos int
}

func (l *gtLoop) Format() audio.Format { return audio.Format{SampleRate: l.fs, Channels: len(l.buf)} }

func (l *gtLoop) Read(dst audio.Buffer) (int, error) {
	n := min(dst.Frames(), l.buf.Frames()-l.pos)
	for c := range dst {
		copy(dst[c][:n], l.buf[c][l.pos:l.pos+n])
	}
	l.pos = (l.pos + n) % l.buf.Frames()
	return n, nil
}

// gtCloser counts Close calls on a source.
type gtCloser struct {
	audio.Source
	closed int
	err    error
}

func (c *gtCloser) Close() error {
	c.closed++
	return c.err
}

func gtReadAll(t testing.TB, s audio.Source) audio.Buffer {
	t.Helper()
	b, err := audio.ReadAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gtTones returns the sum of sines amps[k]*sin(2*pi*freqs[k]*i/fs + ph[k]).
func gtTones(fs float64, freqs, amps, ph []float64, n int) []float64 {
	x := make([]float64, n)
	for k, f := range freqs {
		w := 2 * math.Pi * f / fs
		for i := range x {
			x[i] += amps[k] * math.Sin(w*float64(i)+ph[k])
		}
	}
	return x
}

// gtFit fits a sum of sines at freqs to y, whose first sample is frame i0
// of a stream at fs, by least squares. It returns each sine's amplitude
// and phase (in the form of gtTones) and the RMS of what is left.
func gtFit(y []float64, i0 int, fs float64, freqs []float64) (amp, ph []float64, resid float64) {
	n := len(y)
	a := mat.NewDense(n, 2*len(freqs), nil)
	for i := 0; i < n; i++ {
		t := float64(i0 + i)
		for k, f := range freqs {
			w := 2 * math.Pi * f / fs
			a.Set(i, 2*k, math.Sin(w*t))
			a.Set(i, 2*k+1, math.Cos(w*t))
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var sol, fit mat.VecDense
	if err := qr.SolveVecTo(&sol, false, mat.NewVecDense(n, append([]float64(nil), y...))); err != nil {
		panic(err)
	}
	fit.MulVec(a, &sol)
	var s float64
	for i := 0; i < n; i++ {
		d := y[i] - fit.AtVec(i)
		s += d * d
	}
	for k := range freqs {
		sc, cc := sol.AtVec(2*k), sol.AtVec(2*k+1)
		amp = append(amp, math.Hypot(sc, cc))
		ph = append(ph, math.Atan2(cc, sc))
	}
	return amp, ph, math.Sqrt(s / float64(n))
}

func gtDB(x float64) float64 { return 20 * math.Log10(x) }

func gtRMS(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// gtSNR returns 10*log10(|ref|^2 / |ref-x|^2) over their common length.
func gtSNR(ref, x []float64) float64 {
	var s, e float64
	for i := range min(len(ref), len(x)) {
		s += ref[i] * ref[i]
		d := ref[i] - x[i]
		e += d * d
	}
	return 10 * math.Log10(s/e)
}

// gtSox runs sox on mono float64 samples: sox -D -t f64 -r in -c 1 - -t
// f64 - args...
func gtSox(t testing.TB, sox string, x []float64, in int, args ...string) []float64 {
	t.Helper()
	raw := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	cmd := exec.Command(sox, append([]string{"-D", "-t", "f64", "-r", strconv.Itoa(in), "-c", "1", "-", "-t", "f64", "-"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(raw), &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sox %v: %v: %s", args, err, stderr.Bytes())
	}
	y := make([]float64, out.Len()/8)
	for i := range y {
		y[i] = math.Float64frombits(binary.LittleEndian.Uint64(out.Bytes()[8*i:]))
	}
	return y
}

var errGT = errors.New("gt: upstream failed")
