package chain

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
)

const fs = 48000

// skipUnderRace skips a test of numbers alone under the race detector,
// where CI's race run checks the goroutines of the staged passes
// (TestStagesAreBitIdentical, TestSpillStagesAreBitIdentical, the split
// pass) and the plain run checks the numbers.
func skipUnderRace(t *testing.T) {
	t.Helper()
	testsize.SkipRace(t, "numbers only, checked by the plain run; the race run checks the staged passes")
}

type xorshift uint64

func (r *xorshift) next() float64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return float64(uint64(*r)>>11)/float64(1<<53)*2 - 1
}

// voice synthesizes speech-like material: a pulse train with a gliding
// fundamental through formant resonators, syllables, and a pause every
// 2.6 s. sectionDB, if set, changes the level every 8 s to make the
// programme dynamic. Each signal is synthesized once per test binary
// (several tests share one; under the race detector a 12 s signal takes
// seconds) and returned as a copy the caller may change.
func voice(seconds, f0 float64, seed uint64, sectionDB []float64) []float64 {
	key := fmt.Sprint(seconds, f0, seed, sectionDB)
	x, _ := voices.LoadOrStore(key, sync.OnceValue(func() []float64 { return synthVoice(seconds, f0, seed, sectionDB) }))
	return slices.Clone(x.(func() []float64)())
}

var voices sync.Map // voice's arguments -> func() []float64

func synthVoice(seconds, f0 float64, seed uint64, sectionDB []float64) []float64 {
	n := int(seconds * fs)
	x := make([]float64, n)
	form := []dsp.Coeffs{dsp.BandPassCoeffs(fs, 600, 4), dsp.BandPassCoeffs(fs, 1400, 5), dsp.BandPassCoeffs(fs, 2600, 6)}
	z := make([][2]float64, len(form))
	r := xorshift(seed*2654435761 + 1)
	var ph, syl, glot float64
	rate := 4.0
	for i := range x {
		t := float64(i) / fs
		ph += f0 * (1 + 0.15*math.Sin(2*math.Pi*0.7*t)) / fs
		pulse := 0.0
		if ph >= 1 {
			ph--
			pulse = 1
		}
		// A smoothed glottal pulse (not a bare impulse, whose peaks no
		// real voice has) excites the formants.
		glot += (pulse*40 - glot) * 0.04
		v := glot * 0.05
		for k, c := range form {
			y := c.B0*glot + z[k][0]
			z[k][0] = c.B1*glot - c.A1*y + z[k][1]
			z[k][1] = c.B2*glot - c.A2*y
			v += y / float64(k+1)
		}
		syl += rate / fs
		if syl >= 1 {
			syl--
			rate = 3 + 2*(r.next()+1)/2
		}
		env := math.Pow(math.Sin(math.Pi*syl), 2)
		if math.Mod(t, 2.6) > 2.0 {
			env = 0
		}
		g := 0.1
		if sectionDB != nil {
			g *= math.Pow(10, sectionDB[int(t/8)%len(sectionDB)]/20)
		}
		x[i] = g*env*v + 0.0003*r.next()
	}
	// Overall RMS -20 dBFS, a typical recording level.
	var e float64
	for _, v := range x {
		e += v * v
	}
	k := 0.1 / math.Sqrt(e/float64(n))
	for i := range x {
		x[i] *= k
	}
	return x
}

// music synthesizes sustained chords with harmonics and slow swells.
func music(seconds float64) []float64 {
	n := int(seconds * fs)
	x := make([]float64, n)
	chords := [][3]float64{{220, 277, 330}, {196, 247, 294}, {175, 220, 262}, {247, 311, 370}}
	for i := range x {
		t := float64(i) / fs
		k := int(t/0.5) % len(chords)
		for _, f := range chords[k] {
			for h := 1.0; h <= 5; h++ {
				x[i] += 0.03 * math.Sin(2*math.Pi*f*h*t) / h
			}
		}
		x[i] *= 1 + 0.5*math.Sin(2*math.Pi*0.2*t)
	}
	return x
}

func stereoOf(x []float64) audio.Buffer {
	b := audio.NewBuffer(2, len(x))
	copy(b[0], x)
	copy(b[1][5:], x)
	return b
}

func bufferOpener(b audio.Buffer) audio.Opener {
	return func(ctx context.Context) (audio.Source, error) { return audio.NewBufferSource(b, fs), nil }
}

// render runs the pipeline and writes its output to path in format.
func render(t testing.TB, open audio.Opener, cfg Config, format, path string) Stats {
	t.Helper()
	ctx := context.Background()
	p, err := New(ctx, open, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := audio.NewEncoder(ctx, format, f, p.Format(), audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(ctx, enc, p); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return p.Stats()
}

// ebur128 is the independent measurement: ffmpeg's ebur128 filter.
type ebur128 struct{ I, LRA, TruePeak float64 }

var (
	reI    = regexp.MustCompile(`^\s*I:\s+(-?[\d.]+|-inf) LUFS`)
	reLRA  = regexp.MustCompile(`^\s*LRA:\s+(-?[\d.]+) LU`)
	rePeak = regexp.MustCompile(`^\s*Peak:\s+(-?[\d.]+|-inf) dBFS`)
)

func measureFFmpeg(t testing.TB, path string) ebur128 {
	t.Helper()
	ff := need.Program(t, "ffmpeg")
	cmd := exec.Command(ff, "-nostats", "-hide_banner", "-i", path, "-filter_complex", "ebur128=peak=true", "-f", "null", "-")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg ebur128 %s: %v\n%s", path, err, out)
	}
	var m ebur128
	summary := false
	sc := bufio.NewScanner(bytesReader(out))
	for sc.Scan() {
		line := sc.Text()
		if regexp.MustCompile(`Summary:`).MatchString(line) {
			summary = true
		}
		if !summary {
			continue
		}
		if g := reI.FindStringSubmatch(line); g != nil {
			m.I = parseF(g[1])
		}
		if g := reLRA.FindStringSubmatch(line); g != nil {
			m.LRA = parseF(g[1])
		}
		if g := rePeak.FindStringSubmatch(line); g != nil {
			m.TruePeak = parseF(g[1])
		}
	}
	return m
}

func parseF(s string) float64 {
	if s == "-inf" {
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func tmp(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name) }

func bytesReader(b []byte) *bytesR { return &bytesR{b: b} }

type bytesR struct{ b []byte }

func (r *bytesR) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// renderCounting renders cfg over b and returns the output, the
// statistics and how many times the input was opened.
func renderCounting(t *testing.T, b audio.Buffer, cfg Config) (audio.Buffer, Stats, int) {
	t.Helper()
	return renderWrapped(t, b, cfg, func(s audio.Source) audio.Source { return s })
}

// renderWrapped is renderCounting over the sources wrap makes of b's.
func renderWrapped(t *testing.T, b audio.Buffer, cfg Config, wrap func(audio.Source) audio.Source) (audio.Buffer, Stats, int) {
	t.Helper()
	var opens atomic.Int32
	open := func(ctx context.Context) (audio.Source, error) {
		opens.Add(1)
		return wrap(audio.NewBufferSource(b, fs)), nil
	}
	p, err := New(context.Background(), open, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, err := audio.ReadAll(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return out, p.Stats(), int(opens.Load())
}
