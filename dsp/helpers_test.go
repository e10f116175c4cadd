package dsp

import (
	"context"
	"io"
	"math"
	"math/cmplx"
	"sort"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
)

// stereo makes a two-channel buffer, the right channel slightly delayed.
func stereo(x []float64) audio.Buffer {
	b := audio.NewBuffer(2, len(x))
	copy(b[0], x)
	copy(b[1][3:], x)
	return b
}

func mono(x []float64) audio.Buffer { return audio.Buffer{x} }

// bandDB returns the power of x between lo and hi Hz, in dB, from one FFT
// of the whole signal (zero-padded to a power of two).
func bandDB(x []float64, fs int, lo, hi float64) float64 {
	n := 1
	for n < len(x) {
		n *= 2
	}
	buf := make([]float64, n)
	copy(buf, x)
	c := fourier.NewFFT(n).Coefficients(nil, buf)
	var s float64
	for i, v := range c {
		f := float64(i) * float64(fs) / float64(n)
		if f >= lo && f < hi {
			a := cmplx.Abs(v)
			s += a * a
		}
	}
	return 10 * math.Log10(s+1e-300)
}

func rmsDB(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return 10 * math.Log10(s/float64(len(x))+1e-300)
}

func analyse(t testing.TB, b audio.Buffer, fs int) *Analysis {
	t.Helper()
	a, err := NewAnalyzer(audio.Format{SampleRate: fs, Channels: len(b)}, AnalyzerOptions{Spectrum: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(b, fs)); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

// loopSource plays a buffer over and over for total frames without
// allocating: the upstream of allocation tests and benchmarks.
type loopSource struct {
	buf   audio.Buffer
	fs    int
	pos   int
	left  int64
	total int64
}

func newLoop(b audio.Buffer, fs int, total int64) *loopSource {
	return &loopSource{buf: b, fs: fs, left: total, total: total}
}

func (l *loopSource) Format() audio.Format {
	return audio.Format{SampleRate: l.fs, Channels: len(l.buf)}
}

func (l *loopSource) Read(dst audio.Buffer) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(dst.Frames()), l.left))
	done := 0
	for done < n {
		m := min(n-done, l.buf.Frames()-l.pos)
		for c := range dst {
			copy(dst[c][done:done+m], l.buf[c][l.pos:l.pos+m])
		}
		done += m
		l.pos = (l.pos + m) % l.buf.Frames()
	}
	l.left -= int64(n)
	return n, nil
}

func sortFloats(x []float64) { sort.Float64s(x) }

// must unwraps a constructor's result in tests, where a bad parameter is a
// bug in the test itself.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
