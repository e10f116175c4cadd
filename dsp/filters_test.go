package dsp

import (
	"errors"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

func TestBiquadDesignsMeasured(t *testing.T) {
	for _, fs := range []int{16000, 44100, 48000, 96000} {
		f := float64(fs)
		cases := []struct {
			name string
			c    []Coeffs
			freq float64
			want float64
		}{
			{"peaking +6 at 1k", []Coeffs{PeakingCoeffs(f, 1000, 1, 6)}, 1000, 6},
			{"peaking -4 at 2k", []Coeffs{PeakingCoeffs(f, 2000, 2, -4)}, 2000, -4},
			{"low shelf +5", []Coeffs{LowShelfCoeffs(f, 300, 5)}, 40, 5},
			{"high shelf -3", []Coeffs{HighShelfCoeffs(f, 2000, -3)}, 0.45 * f, -3},
			{"butterworth HP corner", ButterworthHighPass(f, 100, 4), 100, -3.01},
			{"butterworth LP corner", ButterworthLowPass(f, 3000, 8), 3000, -3.01},
			{"butterworth HP stopband", ButterworthHighPass(f, 100, 4), 50, -24.1},
		}
		for _, tc := range cases {
			// Measure with a sine through the node, after the transient.
			n := fs * 2
			src := audio.NewBufferSource(audiotest.Sine(1, fs, tc.freq, 0.5, n), fs)
			b, err := NewBiquad(src, tc.c...)
			if err != nil {
				t.Fatal(err)
			}
			out := testaudio.ReadAll(t, b)
			got := rmsDB(out[0][n/2:]) - rmsDB(audiotest.Sine(1, fs, tc.freq, 0.5, n)[0][n/2:])
			tol := 0.1
			if tc.freq > 0.4*f {
				tol = 0.3 // shelf not fully settled near Nyquist
			}
			if math.Abs(got-tc.want) > tol {
				t.Errorf("%d Hz: %s: measured %.2f dB at %.0f Hz, want %.2f", fs, tc.name, got, tc.freq, tc.want)
			}
		}
	}
}

func TestNewBiquadRejectsUnstable(t *testing.T) {
	src := audio.NewBufferSource(audio.NewBuffer(1, 10), 48000)
	if _, err := NewBiquad(src, Coeffs{B0: 1, A1: 0, A2: 1.5}); err == nil {
		t.Fatal("unstable section accepted")
	}
	if _, err := NewBiquad(src, HighPassCoeffs(48000, 30000, 0.7)); err == nil {
		t.Fatal("cutoff above Nyquist accepted")
	}
}

// rumble adds a 30 Hz rumble 6 dB below the speech RMS to x.
func withRumble(x []float64, fs int) []float64 {
	out := append([]float64(nil), x...)
	a := math.Pow(10, (-20-6)/20.0) * math.Sqrt2
	for i := range out {
		out[i] += a * math.Sin(2*math.Pi*30*float64(i)/float64(fs))
	}
	return out
}

func TestHighPassRemovesRumbleKeepsVoice(t *testing.T) {
	for _, f0 := range []float64{95, 130, 210} { // low male to female voice
		x := testaudio.SynthVoice(testFS, 8, f0, 4)
		in := withRumble(x, testFS)
		an := analyse(t, mono(in), testFS)
		hp, err := NewHighPass(audio.NewBufferSource(mono(in), testFS), an)
		if err != nil {
			t.Fatal(err)
		}
		out := testaudio.ReadAll(t, hp)[0]
		rumbleDrop := bandDB(in, testFS, 25, 35) - bandDB(out, testFS, 25, 35)
		voiceChange := bandDB(out, testFS, 200, 4000) - bandDB(in, testFS, 200, 4000)
		t.Logf("f0 %.0f Hz: corner %.0f Hz (voice starts %.0f Hz), 30 Hz rumble -%.1f dB, 200 Hz-4 kHz %+.3f dB",
			f0, hp.Corner(), an.VoiceStart(), rumbleDrop, voiceChange)
		if rumbleDrop < 20 {
			t.Errorf("f0 %.0f: rumble dropped by %.1f dB, want >= 20", f0, rumbleDrop)
		}
		if math.Abs(voiceChange) > 0.5 {
			t.Errorf("f0 %.0f: 200 Hz-4 kHz band changed by %.2f dB, want within 0.5", f0, voiceChange)
		}
	}
}

func TestAutoEQCorrectsTowardSpeechTarget(t *testing.T) {
	bump := func(f float64) float64 { // +8 dB resonance at 1 kHz, about an octave wide
		return 8 * math.Exp(-math.Pow(math.Log2(f/1000)/0.5, 2))
	}
	x := shapedNoise(testFS, 10, func(f float64) float64 { return targetDensity(f) + bump(f) })
	an := analyse(t, mono(x), testFS)
	eq, err := NewAutoEQ(audio.NewBufferSource(mono(x), testFS), an)
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, eq)[0]
	an2 := analyse(t, mono(out), testFS)
	// Deviation from the target in a band, relative to the median
	// deviation of the core speech bands.
	dev := func(a *Analysis, lo, hi float64) float64 {
		var s float64
		var n int
		var core []float64
		for _, b := range a.Spectrum(true) {
			d := b.Level - speechTarget(b.Centre)
			if b.Centre >= lo && b.Centre < hi {
				s += d
				n++
			}
			if b.Centre >= 250 && b.Centre < 4000 {
				core = append(core, d)
			}
		}
		sort.Float64s(core)
		return s/float64(n) - core[len(core)/2]
	}
	before, after := dev(an, 710, 1420), dev(an2, 710, 1420)
	t.Logf("bands %+v; 1 kHz deviation from target %.1f dB -> %.1f dB", eq.Bands(), before, after)
	if before-after < 0.5*before {
		t.Errorf("1 kHz deviation only reduced from %.1f to %.1f dB, want at least halved", before, after)
	}
	for _, b := range eq.Bands() {
		if math.Abs(b.GainDB) > autoEQMaxPeak {
			t.Errorf("band %+v exceeds the %.0f dB bound", b, autoEQMaxPeak)
		}
	}
	// A recording already on target is left nearly alone.
	flat := shapedNoise(testFS, 10, targetDensity)
	for _, b := range AutoEQBands(analyse(t, mono(flat), testFS)) {
		if math.Abs(b.GainDB) > 1 {
			t.Errorf("on-target input got band %+v, want |gain| <= 1 dB", b)
		}
	}
}

// targetDensity is the speech target as a power density in dB: band power
// per third octave grows with the bandwidth, which is proportional to f.
func targetDensity(f float64) float64 { return speechTarget(f) - 10*math.Log10(f/1000) }

// shapedNoise is random-phase noise whose power density follows densityDB
// (from 60 Hz up), switched on 300 ms / off 200 ms with a -70 dB floor in
// the gaps so that voice activity can be found.
func shapedNoise(fs int, seconds float64, densityDB func(f float64) float64) []float64 {
	n := 1
	for n < int(seconds*float64(fs)) {
		n *= 2
	}
	r := audiotest.Rand(99)
	coef := make([]complex128, n/2+1)
	for i := range coef {
		f := float64(i) * float64(fs) / float64(n)
		if f < 60 {
			continue
		}
		a := math.Pow(10, densityDB(f)/20)
		ph := 2 * math.Pi * r.Uniform()
		coef[i] = complex(a*math.Cos(ph), a*math.Sin(ph))
	}
	x := fourier.NewFFT(n).Sequence(nil, coef)
	for i := range x {
		if math.Mod(float64(i)/float64(fs), 0.5) > 0.3 {
			x[i] *= 0.0003
		}
	}
	testaudio.ScaleTo(x, -20)
	return x
}

func TestBWEExtendsTelephoneBand(t *testing.T) {
	full := testaudio.SynthVoice(testFS, 8, 140, 5)
	// Telephone-like: a steep low-pass (16th-order Butterworth at 3.8 kHz).
	lp, _ := NewBiquad(audio.NewBufferSource(mono(full), testFS), ButterworthLowPass(testFS, 3800, 16)...)
	in := testaudio.ReadAll(t, lp)[0]
	an := analyse(t, mono(in), testFS)
	if !an.BandLimited() {
		t.Fatalf("4 kHz low-passed input not detected as band-limited (bandwidth %.0f Hz)", an.Bandwidth())
	}
	if bw := analyse(t, mono(full), testFS); bw.BandLimited() {
		t.Fatalf("full-band input detected as band-limited at %.0f Hz", bw.Bandwidth())
	}
	b, err := NewBWE(audio.NewBufferSource(mono(in), testFS), an)
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, b)[0]
	gain := bandDB(out, testFS, 4500, 8000) - bandDB(in, testFS, 4500, 8000)
	slope := bandDB(out, testFS, 4500, 8000) - bandDB(out, testFS, 2000, 4000)
	low := bandDB(out, testFS, 50, 3000) - bandDB(in, testFS, 50, 3000)
	// Artefact criteria: the new band must follow the voice (its 20 ms
	// envelope correlates with the octave below) and stay silent in pauses.
	hi := bandSignal(t, out, testFS, 4500, 8000)
	mid := bandSignal(t, out, testFS, 2000, 3800)
	corr := testaudio.Correlation(envelope(hi, testFS/50), envelope(mid, testFS/50))
	var act, pause []float64
	for i, v := range hi {
		if math.Mod(float64(i)/testFS, 2.6) > 2.1 && math.Mod(float64(i)/testFS, 2.6) < 2.55 {
			pause = append(pause, v)
		} else {
			act = append(act, v)
		}
	}
	leak := rmsDB(act) - rmsDB(pause)
	t.Logf("cutoff %.0f Hz: 4.5-8 kHz %+.1f dB, level vs 2-4 kHz %.1f dB, 0-3 kHz %+.2f dB, envelope correlation %.2f, pause %.0f dB below speech",
		b.Cutoff(), gain, slope, low, corr, leak)
	if gain < 15 {
		t.Errorf("4.5-8 kHz band gained %.1f dB, want >= 15", gain)
	}
	if slope > -3 || slope < -25 {
		t.Errorf("new band %.1f dB relative to 2-4 kHz, want a natural -3..-25 dB", slope)
	}
	if math.Abs(low) > 0.5 {
		t.Errorf("band below the cutoff changed by %.2f dB, want within 0.5", low)
	}
	if corr < 0.8 {
		t.Errorf("new band envelope correlation %.2f with the band below, want >= 0.8", corr)
	}
	if leak < 40 {
		t.Errorf("new band only %.1f dB quieter in pauses, want >= 40", leak)
	}
}

func bandSignal(t *testing.T, x []float64, fs int, lo, hi float64) []float64 {
	sec := append(ButterworthHighPass(float64(fs), lo, 8), ButterworthLowPass(float64(fs), hi, 8)...)
	b, err := NewBiquad(audio.NewBufferSource(mono(x), fs), sec...)
	if err != nil {
		t.Fatal(err)
	}
	return testaudio.ReadAll(t, b)[0]
}

func envelope(x []float64, win int) []float64 {
	var out []float64
	for i := 0; i+win <= len(x); i += win {
		var s float64
		for _, v := range x[i : i+win] {
			s += v * v
		}
		out = append(out, math.Sqrt(s/float64(win)))
	}
	return out
}

// onePoleLowPass is a first-order low-pass (6 dB/octave) as a section.
func onePoleLowPass(fs, f0 float64) Coeffs {
	k := math.Tan(math.Pi * f0 / fs)
	return Coeffs{B0: k / (1 + k), B1: k / (1 + k), A1: (k - 1) / (1 + k)}
}

// The fused loops (sections in pairs, stereo channels together) must give
// exactly what one section after another on one channel gives, for any
// number of sections, whatever the block boundaries.
func TestCascadeFusedLoopsExact(t *testing.T) {
	const fs = 48000.0
	designs := []Coeffs{
		PeakingCoeffs(fs, 300, 1, 4), LowShelfCoeffs(fs, 120, -3), HighShelfCoeffs(fs, 6000, 2),
		PeakingCoeffs(fs, 2500, 1, -5), PeakingCoeffs(fs, 900, 1, 1.5),
	}
	designs = append(ButterworthHighPass(fs, 80, 4), designs...)
	x := make([]float64, 5000)
	for i := range x {
		x[i] = math.Sin(float64(i)*0.013) + 0.3*math.Sin(float64(i)*0.71)
	}
	for ns := 1; ns <= len(designs); ns++ {
		sec := designs[:ns]
		// Reference: one section at a time over the whole signal.
		want := append([]float64(nil), x...)
		for _, c := range sec {
			one, _ := newCascade([]Coeffs{c}, 1)
			one.run(0, want)
		}
		// The stereo path with the platform's kernels (SSE2 on amd64)
		// and with the Go loops.
		for _, scalar := range []bool{false, true} {
			mono, _ := newCascade(sec, 1)
			stereo, _ := newCascade(sec, 2)
			stereo.scalar = scalar
			gotM := append([]float64(nil), x...)
			gotL := append([]float64(nil), x...)
			gotR := append([]float64(nil), x...)
			for off, blk := 0, 1; off < len(x); off, blk = off+blk, blk*3%509+1 {
				end := min(off+blk, len(x))
				mono.run(0, gotM[off:end])
				stereo.run2(gotL[off:end], gotR[off:end])
			}
			for i := range want {
				if gotM[i] != want[i] || gotL[i] != want[i] || gotR[i] != want[i] {
					t.Fatalf("%d sections, scalar %v, sample %d: mono %v stereo %v/%v, want %v", ns, scalar, i, gotM[i], gotL[i], gotR[i], want[i])
				}
			}
		}
	}
}

// BenchmarkCascadeStereo runs the default autoeq's shape (high-pass plus
// five EQ bands: seven sections) over stereo blocks.
// TestCascadeStereoChannelsIndependent feeds different signals to the two
// lanes of the stereo kernels and checks each against the mono loop.
func TestCascadeStereoChannelsIndependent(t *testing.T) {
	const fs = 44100.0
	sec := append(ButterworthHighPass(fs, 100, 4), PeakingCoeffs(fs, 1000, 1, 6), HighShelfCoeffs(fs, 8000, -4))
	l, r := make([]float64, 3000), make([]float64, 3000)
	for i := range l {
		l[i] = math.Sin(float64(i) * 0.05)
		r[i] = 0.5*math.Cos(float64(i)*0.31) + 1e-3*float64(i%7)
	}
	wantL, wantR := append([]float64(nil), l...), append([]float64(nil), r...)
	mono, _ := newCascade(sec, 2)
	mono.run(0, wantL)
	mono.run(1, wantR)
	stereo, _ := newCascade(sec, 2)
	stereo.run2(l[:1234], r[:1234])
	stereo.run2(l[1234:], r[1234:])
	for i := range l {
		if l[i] != wantL[i] || r[i] != wantR[i] {
			t.Fatalf("sample %d: got %v/%v, want %v/%v", i, l[i], r[i], wantL[i], wantR[i])
		}
	}
}

// BenchmarkCascadeStereo runs the stereo kernels on the default filter
// (a 4th-order high-pass: two sections, bound by the latency of their
// recurrences) and on an 8-section EQ (bound by throughput).
func BenchmarkCascadeStereo(b *testing.B) {
	const fs = 48000.0
	for _, c := range []struct {
		name string
		sec  []Coeffs
	}{
		{"highpass", ButterworthHighPass(fs, 60, 4)},
		{"eq", append(ButterworthHighPass(fs, 80, 4),
			PeakingCoeffs(fs, 300, 1, 4), LowShelfCoeffs(fs, 120, -3), HighShelfCoeffs(fs, 6000, 2),
			PeakingCoeffs(fs, 2500, 1, -5), PeakingCoeffs(fs, 900, 1, 1.5))},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, _ := newCascade(c.sec, 2)
			l, r := make([]float64, audio.DefaultBlock), make([]float64, audio.DefaultBlock)
			for i := range l {
				l[i] = math.Sin(float64(i) * 0.013)
				r[i] = math.Cos(float64(i) * 0.017)
			}
			b.SetBytes(int64(len(l)) * 16)
			for b.Loop() {
				f.run2(l, r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(l)*len(c.sec)), "ns/section-frame")
		})
	}
}

// NewFilter builds every method: each removes the rumble under the voice
// and keeps the frame count; off is the source itself; an unknown method
// is refused.
func TestNewFilter(t *testing.T) {
	in := withRumble(testaudio.SynthVoice(testFS, 6, 130, 5), testFS)
	an := analyse(t, mono(in), testFS)
	for m := FilterHighPass; m <= FilterStudioVoice; m++ {
		f, err := NewFilter(audio.NewBufferSource(mono(in), testFS), an, m)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		out := testaudio.ReadAll(t, f)[0]
		drop := bandDB(in, testFS, 25, 35) - bandDB(out, testFS, 25, 35)
		if len(out) != len(in) || drop < 20 {
			t.Errorf("%v: %d frames of %d, rumble down %.1f dB (want at least 20)", m, len(out), len(in), drop)
		}
	}
	src := audio.NewBufferSource(mono(in), testFS)
	if f, err := NewFilter(src, an, FilterOff); err != nil || f != audio.Source(src) {
		t.Errorf("FilterOff: %v, %v; want the source itself", f, err)
	}
	if _, err := NewFilter(src, an, FilterStudioVoice+1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("unknown method: %v, want ErrInvalidParameter", err)
	}
}
