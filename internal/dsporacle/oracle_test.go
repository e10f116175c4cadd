package dsporacle

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	dspfft "github.com/mjibson/go-dsp/fft"
	"github.com/mjibson/go-dsp/spectral"
	"github.com/mjibson/go-dsp/window"
	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
)

// periodicHann is the L-point periodic Hann window (the DFT-even one used
// for spectral analysis) built from go-dsp's symmetric L+1-point window.
func periodicHann(l int) []float64 { return window.Hann(l + 1)[:l] }

// TestFFTAgainstGoDSP: gonum's real FFT, as dsp.Analyzer calls it, gives
// go-dsp's coefficients for the sizes the analysis uses (1024 at 16 kHz up
// to 8192 at 96 kHz and above) and for a size that is not a power of two.
func TestFFTAgainstGoDSP(t *testing.T) {
	for _, n := range []int{1024, 2048, 4096, 8192, 1000} {
		x := audiotest.Noise(1, n, 1, uint64(n))[0]
		got := fourier.NewFFT(n).Coefficients(nil, x)
		want := dspfft.FFTReal(x)
		var worst, scale float64
		for k := range got {
			worst = math.Max(worst, cmplx.Abs(got[k]-want[k]))
			scale = math.Max(scale, cmplx.Abs(want[k]))
		}
		// Rounding error of an FFT grows like log2(n) * epsilon.
		if worst/scale > 1e-13 {
			t.Errorf("n=%d: largest difference %.3g of the largest coefficient, want < 1e-13", n, worst/scale)
		}
	}
}

// analyse runs dsp.Analyzer with spectrum analysis over a mono signal.
func analyse(t *testing.T, x []float64, rate int) (db []float64, binHz float64) {
	t.Helper()
	a, err := dsp.NewAnalyzer(audio.Format{SampleRate: rate, Channels: 1}, dsp.AnalyzerOptions{Spectrum: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(audio.Buffer{x}); err != nil {
		t.Fatal(err)
	}
	db, binHz = a.Finish().FineSpectrum()
	if db == nil {
		t.Fatal("no spectrum")
	}
	return db, binHz
}

// tones returns bin-centred sines for an n-point FFT at the given bins and
// amplitudes. With a Hann window each leaks into its two neighbour bins
// only, so tones three or more bins apart do not interact and every
// windowed segment has the same power spectrum wherever it starts.
func tones(frames, n int, bins []int, amps []float64) []float64 {
	x := make([]float64, frames)
	for j, k := range bins {
		for i := range x {
			x[i] += amps[j] * math.Cos(2*math.Pi*float64(k)*float64(i)/float64(n)+float64(j))
		}
	}
	return x
}

// TestWindowAgainstGoDSP: the spectrum the Analyzer accumulates around a
// tone has the leakage of go-dsp's periodic Hann window: the neighbour
// bins at a quarter of the power (-6.02 dB), the next ones empty. A
// symmetric Hann window, or none, would show otherwise.
func TestWindowAgainstGoDSP(t *testing.T) {
	const rate, n, bin = 48000, 4096, 100 // 48 kHz blocks: 4096-point FFTs
	x := tones(rate, n, []int{bin}, []float64{0.5})
	db, _ := analyse(t, x, rate)

	// go-dsp's periodogram of one segment with its own window and FFT.
	seg := append([]float64(nil), x[:n]...)
	window.Apply(seg, periodicHann)
	ref := dspfft.FFTReal(seg)
	refDB := func(k int) float64 {
		return 10 * math.Log10(real(ref[k])*real(ref[k])+imag(ref[k])*imag(ref[k])+1e-30)
	}
	for k := bin - 3; k <= bin+3; k++ {
		got, want := db[k]-db[bin], refDB(k)-refDB(bin)
		if want < -150 {
			if got > -150 {
				t.Errorf("bin %+d: %.1f dB, want nothing (below -150 dB)", k-bin, got)
			}
			continue
		}
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("bin %+d: %.6f dB, go-dsp's Hann window gives %.6f dB", k-bin, got, want)
		}
	}
	if d := db[bin+1] - db[bin]; math.Abs(d-20*math.Log10(0.5)) > 1e-6 {
		t.Errorf("first neighbour at %.4f dB, want -6.0206 dB", d)
	}
	// The symmetric window leaks further: the test tells them apart.
	sym := append([]float64(nil), x[:n]...)
	window.Apply(sym, window.Hann)
	s := dspfft.FFTReal(sym)
	if l := 20 * math.Log10(cmplx.Abs(s[bin+2])/cmplx.Abs(s[bin])); l < -150 {
		t.Errorf("symmetric Hann leaks %.1f dB two bins away; the test cannot tell the windows apart", l)
	}
}

// TestFineSpectrumAgainstPwelch compares the Analyzer's long-term spectrum
// with go-dsp's Welch estimate (4096-point segments, no overlap, periodic
// Hann window) of the same signal. The two differ by a constant factor
// (Welch normalises to a density, FineSpectrum sums powers); after removing
// it:
//   - bin-centred tones of 0 to -40 dB: every bin within 80 dB of the
//     largest agrees within 0.01 dB;
//   - 30 s of low-passed noise: the mean over each third-octave band from
//     250 Hz to 20 kHz agrees within 0.5 dB (the two average different segments of a
//     random signal).
func TestFineSpectrumAgainstPwelch(t *testing.T) {
	const rate, n = 48000, 4096
	opts := &spectral.PwelchOptions{NFFT: n, Window: periodicHann}

	t.Run("tones", func(t *testing.T) {
		bins := []int{20, 85, 170, 400, 1000, 1700}
		amps := []float64{0.3, 0.1, 0.03, 0.01, 0.003, 0.3}
		x := tones(6*rate, n, bins, amps)
		db, binHz := analyse(t, x, rate)
		pxx, freqs := spectral.Pwelch(x, rate, opts)
		if len(pxx) != len(db) || math.Abs(freqs[1]-binHz) > 1e-9 {
			t.Fatalf("%d bins of %.4f Hz, go-dsp %d of %.4f Hz", len(db), binHz, len(pxx), freqs[1])
		}
		offset := db[bins[0]] - 10*math.Log10(pxx[bins[0]])
		top := db[bins[0]]
		checked := 0
		for k := 1; k < len(db)-1; k++ {
			if db[k] < top-80 {
				continue
			}
			checked++
			if d := db[k] - 10*math.Log10(pxx[k]) - offset; math.Abs(d) > 0.01 {
				t.Errorf("bin %d (%.0f Hz): %.4f dB off go-dsp", k, float64(k)*binHz, d)
			}
		}
		if checked != 3*len(bins) {
			t.Errorf("checked %d bins, want the %d bins of the tones and their neighbours", checked, 3*len(bins))
		}
	})

	t.Run("low-passed noise", func(t *testing.T) {
		x := audiotest.Noise(1, 30*rate, 0.5, 11)[0]
		y := 0.0
		for i, v := range x { // one-pole low-pass, -3 dB near 1.6 kHz
			y += 0.2 * (v - y)
			x[i] = y
		}
		db, binHz := analyse(t, x, rate)
		pxx, _ := spectral.Pwelch(x, rate, opts)
		var diffs []float64
		var bands []string
		for k := -6; k <= 13; k++ { // third octaves from 250 Hz to 20 kHz
			fc := 1000 * math.Pow(2, float64(k)/3)
			lo, hi := int(math.Ceil(fc*math.Pow(2, -1.0/6)/binHz)), int(fc*math.Pow(2, 1.0/6)/binHz)
			if fc < 250 || hi >= len(db)-1 {
				continue
			}
			var a, b float64
			for i := lo; i <= hi; i++ {
				a += math.Pow(10, db[i]/10)
				b += pxx[i]
			}
			diffs = append(diffs, 10*math.Log10(a/b))
			bands = append(bands, fmt.Sprintf("%.0f Hz", fc))
		}
		var mean float64
		for _, d := range diffs {
			mean += d / float64(len(diffs))
		}
		worst := 0.0
		for i, d := range diffs {
			worst = math.Max(worst, math.Abs(d-mean))
			if math.Abs(d-mean) > 0.5 {
				t.Errorf("band %s: %.2f dB off go-dsp's Welch estimate", bands[i], d-mean)
			}
		}
		if len(diffs) < 19 {
			t.Errorf("only %d bands compared", len(diffs))
		}
		t.Logf("%d bands, largest difference %.2f dB", len(diffs), worst)
	})
}

// BenchmarkFFT measures a 1024-point (and a 4096-point) real FFT with gonum,
// as dsp.Analyzer calls it (plan and output reused), and with go-dsp's
// FFTReal, which allocates its output and work space and spreads each
// transform over GOMAXPROCS goroutines (and with one worker):
//
//	go test -run '^$' -bench FFT -benchmem ./internal/dsporacle
func BenchmarkFFT(b *testing.B) {
	for _, n := range []int{1024, 4096} {
		x := audiotest.Noise(1, n, 1, 1)[0]
		b.Run(fmt.Sprintf("gonum/%d", n), func(b *testing.B) {
			f := fourier.NewFFT(n)
			out := make([]complex128, n/2+1)
			b.ReportAllocs()
			for b.Loop() {
				f.Coefficients(out, x)
			}
		})
		b.Run(fmt.Sprintf("go-dsp/%d", n), func(b *testing.B) {
			dspfft.EnsureRadix2Factors(n)
			b.ReportAllocs()
			for b.Loop() {
				dspfft.FFTReal(x)
			}
		})
		b.Run(fmt.Sprintf("go-dsp-1worker/%d", n), func(b *testing.B) {
			dspfft.EnsureRadix2Factors(n)
			dspfft.SetWorkerPoolSize(1)
			defer dspfft.SetWorkerPoolSize(0)
			b.ReportAllocs()
			for b.Loop() {
				dspfft.FFTReal(x)
			}
		})
	}
}
