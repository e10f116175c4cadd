package classify

import (
	"errors"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// shortReader returns at most a few frames per Read, varying, to test
// that a node copes with short upstream reads.
type shortReader struct {
	audio.Source
	k int
}

func (s *shortReader) Read(dst audio.Buffer) (int, error) {
	s.k = (s.k*7 + 3) % 23
	m := min(dst.Frames(), s.k+1)
	v := make(audio.Buffer, len(dst))
	return s.Source.Read(dst.SliceInto(v, 0, m))
}

// referenceCut renders cuts the slow, obvious way, from the whole signal,
// with the Cutter's documented rules; tests compare the streaming node
// with it.
func referenceCut(x []float64, cuts Cuts, fade int, shape FadeShape) []float64 {
	n := int64(len(x))
	g := func(t float64) (float64, float64) {
		if shape == Linear {
			return 1 - t, t
		}
		return math.Cos(math.Pi / 2 * t), math.Sin(math.Pi / 2 * t)
	}
	// Merge touching cuts and give each its half fade.
	var js []join
	for _, c := range cuts {
		if k := len(js); k > 0 && js[k-1].e == c.Start {
			js[k-1].e = c.End
			continue
		}
		js = append(js, join{s: c.Start, e: c.End})
	}
	hmax := int64(fade / 2)
	for i := range js {
		h := hmax
		if js[i].s > 0 {
			h = min(h, (js[i].e-js[i].s)/2)
			if i == 0 {
				h = min(h, js[i].s)
			} else {
				h = min(h, (js[i].s-js[i-1].e)/2)
			}
		}
		if i+1 < len(js) {
			h = min(h, (js[i+1].s-js[i].e)/2)
		}
		js[i].h = h
	}
	var out []float64
	pos := int64(0)
	for _, j := range js {
		h := j.h
		if j.s == 0 {
			for k := int64(0); k < h && j.e+k < n; k++ {
				_, gi := g((float64(k) + 0.5) / float64(h))
				out = append(out, x[j.e+k]*gi)
			}
			pos = j.e + h
			continue
		}
		if n < j.s {
			return append(out, x[pos:n]...)
		}
		out = append(out, x[pos:j.s-h]...)
		if n <= j.e {
			for k := int64(0); k < h; k++ {
				gout, _ := g((float64(k) + 0.5) / float64(h))
				out = append(out, x[j.s-h+k]*gout)
			}
			return out
		}
		for k := int64(0); k < 2*h && j.e-h+k < n; k++ {
			gout, gi := g((float64(k) + 0.5) / float64(2*h))
			out = append(out, x[j.s-h+k]*gout+x[j.e-h+k]*gi)
		}
		pos = j.e + h
	}
	if pos < n {
		out = append(out, x[pos:]...)
	}
	return out
}

func TestCutterMatchesReference(t *testing.T) {
	const n = 20000
	x := testaudio.WhiteNoise(n, 0.3, 1)
	stereo := audio.Buffer{x, testaudio.Scale(append([]float64(nil), x...), -0.5)}
	cases := []struct {
		name string
		cuts Cuts
		fade int
	}{
		{"none", nil, 400},
		{"middle", Cuts{{5000, 9000, CutSilence}}, 400},
		{"several", Cuts{{1000, 1500, CutSilence}, {1700, 1800, CutFiller}, {6000, 12000, CutMusic}}, 400},
		{"touching", Cuts{{3000, 4000, CutSilence}, {4000, 4500, CutCough}}, 400},
		{"short cut", Cuts{{3000, 3010, CutCough}}, 400},
		{"hard", Cuts{{3000, 4000, CutSilence}, {7000, 8000, CutSilence}}, 0},
		{"start", Cuts{{0, 2500, CutTrim}, {8000, 9000, CutSilence}}, 400},
		{"to the end", Cuts{{15000, n, CutTrim}}, 400},
		{"past the end", Cuts{{15000, n + 5000, CutTrim}}, 400},
		{"ends inside fade", Cuts{{15000, n - 50, CutTrim}}, 400},
		{"beyond the end", Cuts{{n + 10, n + 5000, CutTrim}}, 400},
		{"starts in last fade", Cuts{{n - 100, n + 5000, CutTrim}}, 400},
		{"everything", Cuts{{0, n, CutTrim}}, 400},
		{"odd fade", Cuts{{5000, 9000, CutSilence}}, 401},
	}
	for _, tc := range cases {
		for _, shape := range []FadeShape{EqualPower, Linear} {
			t.Run(tc.name, func(t *testing.T) {
				want := referenceCut(x, tc.cuts, tc.fade, shape)
				open := func() audio.Source {
					c, err := NewCutter(&shortReader{Source: audio.NewBufferSource(stereo, testFS)}, tc.cuts,
						CutterOptions{Fade: float64(tc.fade) / testFS, Shape: shape})
					if err != nil {
						t.Fatal(err)
					}
					return c
				}
				got := audiotest.CheckSource(t, open)
				if len(got[0]) != len(want) {
					t.Fatalf("%d frames, want %d", len(got[0]), len(want))
				}
				if wantLen := int64(n) - tc.cuts.Clip(n).Removed(); int64(len(want)) != wantLen {
					t.Errorf("reference has %d frames, Frames-Removed is %d", len(want), wantLen)
				}
				for i := range want {
					if math.Abs(got[0][i]-want[i]) > 1e-12 || math.Abs(got[1][i]+0.5*want[i]) > 1e-12 {
						t.Fatalf("frame %d: %g, want %g", i, got[0][i], want[i])
					}
				}
			})
		}
	}
}

func TestCutterLengths(t *testing.T) {
	const n = 48000
	x := testaudio.WhiteNoise(n, 0.1, 2)
	cuts := Normalize([]Cut{{100, 4000, CutTrim}, {9000, 20000, CutSilence}, {20000, 30000, CutMusic}, {47000, 60000, CutTrim}}, 0)
	for _, mode := range []CutMode{ApplyCuts, SilenceCuts, ExportCuts} {
		c, err := NewCutter(audio.NewBufferSource(audio.Buffer{x}, testFS), cuts, CutterOptions{Mode: mode, Fade: DefaultFade})
		if err != nil {
			t.Fatal(err)
		}
		out := audiotest.CheckSource(t, func() audio.Source {
			c, _ := NewCutter(audio.NewBufferSource(audio.Buffer{x}, testFS), cuts, CutterOptions{Mode: mode, Fade: DefaultFade})
			return c
		})
		_ = c
		want := n
		if mode == ApplyCuts {
			want = n - int(cuts.Clip(n).Removed())
		}
		if len(out[0]) != want {
			t.Errorf("%v: %d frames, want %d", mode, len(out[0]), want)
		}
		switch mode {
		case ExportCuts:
			for i := range x {
				if out[0][i] != x[i] {
					t.Fatalf("export mode changed frame %d", i)
				}
			}
		case SilenceCuts:
			h := int64(DefaultFade * testFS / 2)
			for _, cut := range cuts.Clip(n) {
				lo := cut.Start + h
				if cut.Start == 0 {
					lo = 0
				}
				for i := lo; i < cut.End-h && i < n; i++ {
					if out[0][i] != 0 {
						t.Fatalf("frame %d inside cut %v is %g", i, cut, out[0][i])
					}
				}
			}
			for i := 5200; i < 7800; i++ {
				if out[0][i] != x[i] {
					t.Fatalf("frame %d outside the cuts changed", i)
				}
			}
		}
	}
}

func TestCutterZeroAllocs(t *testing.T) {
	x := testaudio.WhiteNoise(10*testFS, 0.1, 3)
	var cuts Cuts
	for s := int64(1000); s+3000 < int64(len(x)); s += 5000 {
		cuts = append(cuts, Cut{s, s + 3000, CutSilence})
	}
	for _, mode := range []CutMode{ApplyCuts, SilenceCuts} {
		c, err := NewCutter(audio.NewBufferSource(audio.Buffer{x, x}, testFS), cuts, CutterOptions{Mode: mode, Fade: DefaultFade})
		if err != nil {
			t.Fatal(err)
		}
		buf := audio.NewBuffer(2, 512)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := c.Read(buf); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %.1f allocations per Read", mode, allocs)
		}
	}
}

func TestCutterRejects(t *testing.T) {
	src := audio.NewBufferSource(audio.NewBuffer(1, 10), testFS)
	for _, cuts := range []Cuts{{{5, 5, CutSilence}}, {{5, 9, CutSilence}, {8, 12, CutSilence}}, {{-1, 3, CutTrim}}, {{5, 9, 0}, {1, 2, 0}}} {
		if _, err := NewCutter(src, cuts, CutterOptions{}); !errors.Is(err, ErrInvalidCuts) {
			t.Errorf("%v: err %v, want ErrInvalidCuts", cuts, err)
		}
	}
	if _, err := NewCutter(src, nil, CutterOptions{Fade: -1}); err == nil {
		t.Error("negative fade accepted")
	}
	if _, err := NewCutter(src, nil, CutterOptions{Mode: 7}); err == nil {
		t.Error("mode 7 accepted")
	}
	c, _ := NewCutter(src, nil, CutterOptions{})
	if _, err := c.Read(audio.NewBuffer(2, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("two-channel read of a mono cutter: %v", err)
	}
}

// failing is a source that fails after some frames.
type failing struct {
	n   int
	err error
}

func (f *failing) Format() audio.Format { return audio.Format{SampleRate: testFS, Channels: 1} }
func (f *failing) Read(dst audio.Buffer) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	m := min(f.n, dst.Frames())
	clear(dst[0][:m])
	f.n -= m
	return m, nil
}

func TestCutterPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, mode := range []CutMode{ApplyCuts, SilenceCuts, ExportCuts} {
		c, _ := NewCutter(&failing{n: 3000, err: boom}, Cuts{{1000, 2000, CutSilence}, {2500, 5000, CutSilence}}, CutterOptions{Mode: mode, Fade: 0.01})
		buf := audio.NewBuffer(1, 700)
		var err error
		total := 0
		for i := 0; i < 100 && err == nil; i++ {
			var n int
			n, err = c.Read(buf)
			total += n
		}
		if !errors.Is(err, boom) {
			t.Errorf("%v: error %v after %d frames, want boom", mode, err, total)
		}
	}
}
