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

// rng is a small deterministic generator for test signals.
type rng uint64

func (r *rng) float() float64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return float64(uint64(*r)>>11) / float64(1<<53)
}

func (r *rng) norm() float64 { return r.float()*2 - 1 }

// speechLike synthesizes a voice-like signal: a glottal pulse train with a
// gliding fundamental through three formant resonators, syllables at about
// 4 Hz, unvoiced fricative bursts and a pause every few seconds. Its level
// is about -20 dBFS RMS while active. Full band up to about 10 kHz.
func speechLike(fs int, seconds float64, f0 float64, seed uint64) []float64 {
	n := int(seconds * float64(fs))
	out := make([]float64, n)
	r := rng(seed*7919 + 17)
	fsf := float64(fs)
	formants := []Coeffs{
		BandPassCoeffs(fsf, 600, 4), BandPassCoeffs(fsf, 1400, 5), BandPassCoeffs(fsf, 2600, 6),
	}
	gains := []float64{1, 0.6, 0.35}
	fz := make([][2]float64, 3)
	fric := BandPassCoeffs(fsf, 5000, 1.5)
	var frz [2]float64
	glot := struct{ v, a float64 }{a: 1 - math.Exp(-2*math.Pi*300/fsf)}
	phase := 0.0
	syl := 0.0
	sylRate := 4.0 + r.float()
	fricOn := false
	for i := 0; i < n; i++ {
		t := float64(i) / fsf
		f := f0 * (1 + 0.15*math.Sin(2*math.Pi*0.7*t+float64(seed)))
		phase += f / fsf
		pulse := 0.0
		if phase >= 1 {
			phase -= 1
			pulse = 1
		}
		// Pulse train through formants.
		// The glottal source itself carries the fundamental and the low
		// harmonics, as a real voice does.
		glot.v += (pulse*40 - glot.v) * glot.a
		v := glot.v * 0.05
		for k, c := range formants {
			y := c.B0*pulse + fz[k][0]
			fz[k][0] = c.B1*pulse - c.A1*y + fz[k][1]
			fz[k][1] = c.B2*pulse - c.A2*y
			v += gains[k] * y
		}
		syl += sylRate / fsf
		if syl >= 1 {
			syl -= 1
			sylRate = 3 + 2*r.float()
			fricOn = r.float() < 0.3
		}
		env := math.Pow(math.Sin(math.Pi*syl), 2)
		// A pause of 0.6 s every 2.6 s.
		if math.Mod(t, 2.6) > 2.0 {
			env = 0
		}
		nz := 0.0
		if fricOn && syl > 0.6 && env > 0 {
			x := r.norm()
			y := fric.B0*x + frz[0]
			frz[0] = fric.B1*x - fric.A1*y + frz[1]
			frz[1] = fric.B2*x - fric.A2*y
			nz = 0.15 * y
		}
		out[i] = 0.9*env*v + nz
	}
	scaleTo(out, -20)
	return out
}

// scaleTo scales x so its RMS over the non-silent samples is db dBFS.
func scaleTo(x []float64, db float64) {
	var s float64
	n := 0
	for _, v := range x {
		if v != 0 {
			s += v * v
			n++
		}
	}
	if n == 0 {
		return
	}
	g := math.Pow(10, db/20) / math.Sqrt(s/float64(n))
	for i := range x {
		x[i] *= g
	}
}

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

func readAll(t testing.TB, s audio.Source) audio.Buffer {
	t.Helper()
	b, err := audio.ReadAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
