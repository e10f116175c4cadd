package dsp

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// TestAnalyzerNoClasses checks that leaving the classifier out changes
// nothing but the labels: the levels of a NoClasses pass are those of a
// full pass.
func TestAnalyzerNoClasses(t *testing.T) {
	const fs = 48000
	b := stereo(testaudio.SynthVoice(fs, 6, 140, 3))
	run := func(o AnalyzerOptions) *Analysis {
		an, err := Analyze(context.Background(), audio.NewBufferSource(b, fs), o)
		if err != nil {
			t.Fatal(err)
		}
		return an
	}
	full, lv := run(AnalyzerOptions{}), run(AnalyzerOptions{NoClasses: true})
	if full.Classes == nil || len(full.Voiced) == 0 {
		t.Fatal("a full analysis has no labels")
	}
	if lv.Classes != nil || lv.Voiced != nil || lv.Music != nil {
		t.Errorf("NoClasses analysis has labels: classes %v, %d voiced, %d music", lv.Classes != nil, len(lv.Voiced), len(lv.Music))
	}
	if !slices.Equal(full.Energy, lv.Energy) || !slices.Equal(full.Raw, lv.Raw) || !slices.Equal(full.Peak, lv.Peak) {
		t.Error("NoClasses changed the block levels")
	}
	if full.Loudness.Integrated != lv.Loudness.Integrated || full.Loudness.LRA != lv.Loudness.LRA || full.Frames() != lv.Frames() {
		t.Errorf("NoClasses changed the loudness: %+v, full %+v", lv.Loudness, full.Loudness)
	}
}

// TestAnalyzerClassifyApart checks that an analysis whose classifier the
// caller writes to, here from a goroutine of its own, is the analysis of
// one that writes to it itself.
func TestAnalyzerClassifyApart(t *testing.T) {
	const fs = 48000
	b := stereo(testaudio.SynthVoice(fs, 6, 140, 5))
	full, err := Analyze(context.Background(), audio.NewBufferSource(b, fs), AnalyzerOptions{Spectrum: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAnalyzer(audio.Format{SampleRate: fs, Channels: 2}, AnalyzerOptions{Spectrum: true, ClassifyApart: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Classifier() == nil {
		t.Fatal("no classifier to write to")
	}
	ps := audio.NewParallelSink(a, a.Classifier())
	defer ps.Close()
	if _, err := audio.Copy(context.Background(), ps, audio.NewBufferSource(b, fs)); err != nil {
		t.Fatal(err)
	}
	apart := a.Finish()
	if !slices.Equal(full.Voiced, apart.Voiced) || !slices.Equal(full.Music, apart.Music) || len(full.Classes.Segments) != len(apart.Classes.Segments) {
		t.Error("the labels differ")
	}
	if !slices.Equal(full.Energy, apart.Energy) || !slices.Equal(full.flatness, apart.flatness) || full.Loudness.Integrated != apart.Loudness.Integrated {
		t.Error("the levels differ")
	}
	if n, err := NewAnalyzer(audio.Format{SampleRate: fs, Channels: 2}, AnalyzerOptions{}); err != nil || n.Classifier() != nil {
		t.Errorf("an analyzer that classifies itself offers its classifier: %v", err)
	}
}

// TestAnalyzerHopPeaks checks the hop peaks against the samples, at two
// rates and channel counts and in writes that end anywhere, and that they
// change none of the block levels (Raw's sums by rounding at most).
func TestAnalyzerHopPeaks(t *testing.T) {
	for _, tc := range []struct {
		fs int
		b  func([]float64) audio.Buffer
	}{{48000, stereo}, {44100, mono}} {
		b := tc.b(testaudio.SynthVoice(tc.fs, 2.37, 130, 7))
		f := audio.Format{SampleRate: tc.fs, Channels: len(b)}
		run := func(hops bool, blocks int) (*Analysis, []float64) {
			var peaks []float64
			o := AnalyzerOptions{NoClasses: true, Blocks: blocks}
			if hops {
				o.OnHopPeak = func(pk float64) { peaks = append(peaks, pk) }
			}
			a, err := NewAnalyzer(f, o)
			if err != nil {
				t.Fatal(err)
			}
			for off, k := 0, 0; off < b.Frames(); k++ {
				n := min(b.Frames()-off, []int{1000, 37, 4800, 1, 2205}[k%5])
				if err := a.Write(b.Slice(off, off+n)); err != nil {
					t.Fatal(err)
				}
				off += n
			}
			return a.Finish(), peaks
		}
		plain, _ := run(false, 0)
		an, peaks := run(true, 0)
		// The expected length only sizes the arrays: the same analysis
		// whether it is right, short or long.
		for _, blocks := range []int{b.Frames() / blockLen(tc.fs), 3, 1000} {
			if got, gotPeaks := run(true, blocks); !slices.Equal(gotPeaks, peaks) || !slices.Equal(got.Energy, an.Energy) ||
				!slices.Equal(got.Raw, an.Raw) || !slices.Equal(got.Peak, an.Peak) {
				t.Errorf("%d Hz: Blocks %d changed the analysis", tc.fs, blocks)
			}
		}
		step := loudness.StepFrames(tc.fs)
		var want []float64
		for s := 0; s*step < b.Frames(); s++ {
			for k := range loudness.StepHops {
				lo, hi := s*step+loudness.HopStart(tc.fs, k), s*step+loudness.HopStart(tc.fs, k+1)
				if hi > b.Frames() {
					break
				}
				var pk float64
				for c := range b {
					for _, v := range b[c][lo:hi] {
						pk = max(pk, math.Abs(v))
					}
				}
				want = append(want, pk)
			}
		}
		if !slices.Equal(peaks, want) {
			t.Errorf("%d Hz: %d hop peaks, want %d (or values differ)", tc.fs, len(peaks), len(want))
		}
		if !slices.Equal(plain.Energy, an.Energy) || !slices.Equal(plain.Peak, an.Peak) || len(plain.Raw) != len(an.Raw) {
			t.Errorf("%d Hz: OnHopPeak changed the block levels", tc.fs)
		}
		for i := range plain.Raw {
			if d := math.Abs(an.Raw[i] - plain.Raw[i]); d > 1e-12*plain.Raw[i] {
				t.Errorf("%d Hz: block %d raw %g, without hop peaks %g", tc.fs, i, an.Raw[i], plain.Raw[i])
			}
		}
	}
}

// The voiced/unvoiced split of the level-binned spectra is the one the
// sorted levels give: for every whole-dB bin level, at or above the tenth
// of the voiced levels exactly when the histogram's threshold says so.
func TestVoiceThresholdMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(400)
		an := &Analysis{Energy: make([]float64, n), Voiced: make([]bool, n)}
		var voiced []float64
		for i := range n {
			switch rng.IntN(10) {
			case 0:
				an.Energy[i] = 0 // silent: -Inf, left out
			case 1:
				an.Energy[i] = lufsEnergy(float64(rng.IntN(60)) - 70) // whole dB, on a bin edge
			default:
				an.Energy[i] = lufsEnergy(-130 + 150*rng.Float64()) // beyond both ends of the bins too
			}
			an.Voiced[i] = rng.IntN(3) > 0
			if db := an.BlockDB(i); an.Voiced[i] && !math.IsInf(db, -1) {
				voiced = append(voiced, db)
			}
		}
		thr := an.voiceThreshold()
		if len(voiced) == 0 {
			if !math.IsInf(thr, 1) {
				t.Fatalf("trial %d: no voiced level, threshold %v", trial, thr)
			}
			continue
		}
		slices.Sort(voiced)
		exact := voiced[len(voiced)/10]
		for lb := range levelBins {
			level := float64(lb + levelBinLow)
			if (level >= thr) != (level >= exact) {
				t.Fatalf("trial %d: bin %v dB is voiced %v by the histogram, %v by the sorted levels (%v)", trial, level, level >= thr, level >= exact, exact)
			}
		}
	}
}

func lufsEnergy(db float64) float64 { return math.Pow(10, (db+0.691)/10) }

// levels2 (the browser build's kernel there) returns levels2Go's sums and
// peak bit for bit at every length, with signed zeros, infinities,
// subnormals and NaNs among the samples, and the peak in either channel:
// the kernel fails it when a sum adds the other channel or when the
// maxima compare without the sign cleared.
func TestLevels2IsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, -math.MaxFloat64, 5e-324, -5e-324}
	for trial := range 1000 {
		n := r.IntN(600)
		l, rt := make([]float64, n), make([]float64, n)
		for i := range n {
			l[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-6))
			rt[i] = -r.Float64() * math.Pow(10, float64(r.IntN(8)-6))
			if trial%3 == 0 && r.IntN(50) == 0 {
				l[i] = special[r.IntN(len(special))]
			}
			if trial%3 == 1 && r.IntN(50) == 0 {
				rt[i] = special[r.IntN(len(special))]
			}
		}
		sl, sr, pk := levels2(l, rt)
		wl, wr, wp := levels2Go(l, rt)
		for i, p := range [][2]float64{{sl, wl}, {sr, wr}, {pk, wp}} {
			if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
				t.Fatalf("trial %d, %d frames: result %d is %v (%016x), want %v (%016x)", trial, n, i, p[0], math.Float64bits(p[0]), p[1], math.Float64bits(p[1]))
			}
		}
	}
}
