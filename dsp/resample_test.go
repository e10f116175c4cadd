package dsp_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
)

// The usual rates; every pair of them is measured (AUDIOPOST_LONG=1).
var gtRates = []int{8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000}

// gtBand is each quality's pass band edge as a fraction of the lower
// Nyquist frequency, and gtRejectDB the rejection of aliases and images the
// tests require of it.
var (
	gtBand     = map[dsp.ResampleQuality]float64{dsp.ResampleHigh: 0.91, dsp.ResampleMedium: 0.85}
	gtRejectDB = map[dsp.ResampleQuality]float64{dsp.ResampleHigh: 120, dsp.ResampleMedium: 105}
	gtQName    = map[dsp.ResampleQuality]string{dsp.ResampleHigh: "high", dsp.ResampleMedium: "medium"}
)

func gtResample(t testing.TB, src audio.Source, out int, q dsp.ResampleQuality) *dsp.Resampler {
	t.Helper()
	r, err := dsp.NewResampler(src, out, dsp.ResampleOptions{Quality: q})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func gtResampleMono(t testing.TB, x []float64, in, out int, q dsp.ResampleQuality) []float64 {
	t.Helper()
	return gtReadAll(t, gtResample(t, audio.NewBufferSource(audio.Buffer{x}, in), out, q))[0]
}

// gtOutLen is round(n*out/in), halves rounded up.
func gtOutLen(n, in, out int) int { return (2*n*out + in) / (2 * in) }

func TestResamplerContract(t *testing.T) {
	pairs := [][2]int{{44100, 48000}, {48000, 44100}, {8000, 192000}, {192000, 8000}, {22050, 16000}, {44100, 44101}, {48000, 47999}}
	if testing.Short() {
		pairs = pairs[:2]
	}
	for _, pr := range pairs {
		in, out := pr[0], pr[1]
		t.Run(fmt.Sprintf("%d-%d", in, out), func(t *testing.T) {
			x := audiotest.Noise(2, in/5+7, 0.5, uint64(in+out))
			got := audiotest.CheckSource(t, func() audio.Source {
				return gtResample(t, audio.NewBufferSource(x, in), out, dsp.ResampleHigh)
			})
			if want := gtOutLen(x.Frames(), in, out); got.Frames() != want {
				t.Fatalf("%d frames in, %d out, want %d", x.Frames(), got.Frames(), want)
			}
			irr := gtReadAll(t, gtResample(t, gtIrregularSource(x, in, 5), out, dsp.ResampleHigh))
			for c := range got {
				for i := range got[c] {
					if got[c][i] != irr[c][i] {
						t.Fatalf("irregular upstream reads change channel %d frame %d", c, i)
					}
				}
			}
		})
	}
}

// Every input length gives round(n*out/in) frames, the empty input none.
func TestResamplerLength(t *testing.T) {
	pairs := [][2]int{{44100, 48000}, {48000, 44100}, {8000, 44100}, {96000, 8000}, {44100, 44101}, {11025, 8000},
		{audio.MinSampleRate, audio.MaxSampleRate}, {audio.MaxSampleRate, audio.MinSampleRate}, {audio.MaxSampleRate, 44101}}
	if testing.Short() {
		pairs = pairs[:6]
	}
	for _, pr := range pairs {
		in, out := pr[0], pr[1]
		for _, n := range []int{0, 1, 2, 3, 5, 11, 47, 48, 147, 160, 441, 1000, 4095, 4096, 4097, 12345} {
			x := audiotest.Noise(1, n, 0.5, uint64(n))
			y := gtReadAll(t, gtResample(t, audio.NewBufferSource(x, in), out, dsp.ResampleMedium))
			if want := gtOutLen(n, in, out); y.Frames() != want {
				t.Errorf("%d->%d Hz: %d frames in, %d out, want %d", in, out, n, y.Frames(), want)
			}
		}
	}
}

// A constant passes at unity gain (every phase of the filter sums to
// one), and equal rates pass the input through untouched.
func TestResamplerDCAndIdentity(t *testing.T) {
	x := make([]float64, 20000)
	for i := range x {
		x[i] = 0.5
	}
	for _, out := range []int{8000, 44100, 44101, 192000} {
		y := gtResampleMono(t, x, 48000, out, dsp.ResampleHigh)
		mid := y[len(y)/3 : 2*len(y)/3]
		for i, v := range mid {
			if math.Abs(v-0.5) > 1e-12 {
				t.Fatalf("48000->%d: DC 0.5 comes out as %.15f at frame %d", out, v, len(y)/3+i)
			}
		}
	}
	n := audiotest.Noise(2, 1000, 0.5, 9)
	y := gtReadAll(t, gtResample(t, audio.NewBufferSource(n, 44100), 44100, dsp.ResampleHigh))
	if gtSNR(n[0], y[0]) < 300 || y.Frames() != n.Frames() {
		t.Fatal("equal rates do not pass the input through")
	}
}

// gtMeasure resamples tones and measures, over the middle of the output:
// the largest deviation from unity gain of pass-band tones (dB) and of
// their timing (frames), what is left besides them relative to one tone
// (images, distortion; dB), and for downsampling what comes out of tones
// between the two Nyquist frequencies relative to one of them (aliases;
// dB, -Inf when upsampling).
func gtMeasure(t testing.TB, in, out int, q dsp.ResampleQuality) (ripple, align, resid, alias float64) {
	const tones, amp, nOut = 12, 0.05, 4096
	nyq := 0.5 * float64(min(in, out))
	var freqs, amps, ph []float64
	for k := 0; k < tones; k++ {
		freqs = append(freqs, 40*math.Pow(gtBand[q]*nyq/40, float64(k)/(tones-1)))
		amps = append(amps, amp)
		ph = append(ph, float64(k)*1.3)
	}
	margin := 400 * max(1, in/out)
	nIn := (nOut+2*margin)*in/out + 2*margin
	y := gtResampleMono(t, gtTones(float64(in), freqs, amps, ph, nIn), in, out, q)
	s0 := (len(y) - nOut) / 2
	a, p, res := gtFit(y[s0:s0+nOut], s0, float64(out), freqs)
	for k := range a {
		ripple = math.Max(ripple, math.Abs(gtDB(a[k]/amp)))
		d := math.Remainder(p[k]-ph[k], 2*math.Pi)
		align = math.Max(align, math.Abs(d)/(2*math.Pi*freqs[k])*float64(out))
	}
	resid = gtDB(res / (amp / math.Sqrt2))
	alias = math.Inf(-1)
	lo, hi := float64(out)/2*1.001, float64(in)/2*0.999
	if hi-lo > 20 {
		var sf, sa, sp []float64
		for k := 0; k < 6; k++ {
			sf = append(sf, lo+(hi-lo)*float64(k)/5)
			sa = append(sa, 0.1)
			sp = append(sp, float64(k))
		}
		y := gtResampleMono(t, gtTones(float64(in), sf, sa, sp, nIn), in, out, q)
		alias = gtDB(gtRMS(y[s0:s0+nOut]) / (0.1 / math.Sqrt2))
	}
	return ripple, align, resid, alias
}

// Between every pair of the usual rates (and pairs whose filter is
// interpolated), for both qualities: pass band flat within 0.001 dB up
// to its edge, output aligned with the input, images and aliases below
// -120 dB (high) or -105 dB (medium).
func TestResamplerQuality(t *testing.T) {
	// AUDIOPOST_LONG=1 measures every pair of the usual rates; the plain
	// run 22 of the 110, each rate twice as input and twice as output, up
	// and down (its neighbour and the rate five places on); the odd rates
	// always.
	var pairs [][2]int
	for i, in := range gtRates {
		for j, out := range gtRates {
			if d := (j - i + len(gtRates)) % len(gtRates); in != out && (testsize.Long() || d == 1 || d == 5) {
				pairs = append(pairs, [2]int{in, out})
			}
		}
	}
	pairs = append(pairs, [2]int{44100, 44101}, [2]int{44101, 44100}, [2]int{48000, 47999}, [2]int{48000, 44101}, [2]int{192000, 44101}, [2]int{8000, 47999})
	if testing.Short() {
		pairs = [][2]int{{44100, 48000}, {48000, 44100}, {48000, 16000}, {8000, 48000}, {48000, 44101}}
	}
	for _, q := range []dsp.ResampleQuality{dsp.ResampleHigh, dsp.ResampleMedium} {
		var wr, wa float64
		wres, wal := math.Inf(-1), math.Inf(-1)
		for _, pr := range pairs {
			in, out := pr[0], pr[1]
			rip, al, res, alias := gtMeasure(t, in, out, q)
			t.Logf("%s %6d->%6d Hz: ripple %.5f dB, timing %.1g frames, images+distortion %.1f dB, aliases %.1f dB", gtQName[q], in, out, rip, al, res, alias)
			if rip > 0.001 {
				t.Errorf("%s %d->%d: pass band deviates by %.4f dB", gtQName[q], in, out, rip)
			}
			if al > 1e-3 {
				t.Errorf("%s %d->%d: output off by %.2g frames", gtQName[q], in, out, al)
			}
			if res > -gtRejectDB[q] || alias > -gtRejectDB[q] {
				t.Errorf("%s %d->%d: images %.1f dB, aliases %.1f dB, want below -%.0f", gtQName[q], in, out, res, alias, gtRejectDB[q])
			}
			wr, wa, wres, wal = max(wr, rip), max(wa, al), max(wres, res), max(wal, alias)
		}
		t.Logf("%s, worst over %d pairs: ripple %.5f dB up to %.2f of the lower Nyquist, timing %.1g frames, images+distortion %.1f dB, aliases %.1f dB",
			gtQName[q], len(pairs), wr, gtBand[q], wa, wres, wal)
	}
}

// gtTHDN returns the THD+N of a sine of frequency f in y (whose first
// frame is frame i0 at rate fs), in dB.
func gtTHDN(y []float64, i0 int, fs, f float64) float64 {
	a, _, res := gtFit(y, i0, fs, []float64{f})
	return gtDB(res / (a[0] / math.Sqrt2))
}

// THD+N of a 1 kHz sine at -6 dBFS, beside sox's very high quality
// converter when sox is installed.
func TestResamplerTHDN(t *testing.T) {
	for _, pr := range [][2]int{{44100, 48000}, {48000, 44100}} {
		in, out := pr[0], pr[1]
		x := gtTones(float64(in), []float64{1000}, []float64{0.5}, []float64{0}, in)
		s0, n := out/4, out/2
		for _, q := range []dsp.ResampleQuality{dsp.ResampleHigh, dsp.ResampleMedium} {
			y := gtResampleMono(t, x, in, out, q)
			d := gtTHDN(y[s0:s0+n], s0, float64(out), 1000)
			t.Logf("%d->%d Hz, 1 kHz at -6 dBFS, %s: THD+N %.1f dB", in, out, gtQName[q], d)
			if d > -gtRejectDB[q] {
				t.Errorf("%s: THD+N %.1f dB", gtQName[q], d)
			}
		}
		if sox, ok := need.HasProgram(t, "sox"); ok {
			y := gtSox(t, sox, x, in, "rate", "-v", fmt.Sprint(out))
			t.Logf("%d->%d Hz, 1 kHz at -6 dBFS, sox rate -v: THD+N %.1f dB", in, out, gtTHDN(y[s0:s0+n], s0, float64(out), 1000))
		}
	}
}

// The round trip 44.1 -> 48 -> 44.1 kHz keeps everything inside the pass
// band: a sine, and noise made of 400 tones between 20 Hz and 19 kHz.
func TestResamplerRoundTrip(t *testing.T) {
	const fs = 44100
	n := fs
	if testing.Short() {
		n = fs / 4
	}
	r := audiotest.NewRand(3)
	var freqs, amps, ph []float64
	for k := 0; k < 400; k++ {
		freqs = append(freqs, 20+(19000-20)*(r.Float()+1)/2)
		amps = append(amps, 0.01)
		ph = append(ph, math.Pi*r.Float())
	}
	signals := []struct {
		name string
		x    []float64
		min  float64
	}{
		{"1 kHz sine", gtTones(fs, []float64{1000}, []float64{0.5}, []float64{0}, n), 120},
		{"noise to 19 kHz", gtTones(fs, freqs, amps, ph, n), 110},
	}
	sox, haveSox := need.HasProgram(t, "sox")
	edge := fs / 40 // the abrupt start and end are not in the pass band
	if testing.Short() {
		signals = signals[:1]
	}
	for _, s := range signals {
		for _, q := range []dsp.ResampleQuality{dsp.ResampleHigh, dsp.ResampleMedium} {
			mid := gtResampleMono(t, s.x, fs, 48000, q)
			back := gtResampleMono(t, mid, 48000, fs, q)
			if len(back) != len(s.x) {
				t.Fatalf("round trip: %d frames, want %d", len(back), len(s.x))
			}
			snr := gtSNR(s.x[edge:len(s.x)-edge], back[edge:len(s.x)-edge])
			t.Logf("round trip 44.1->48->44.1 kHz, %s, %s: SNR %.1f dB", s.name, gtQName[q], snr)
			if q == dsp.ResampleHigh && snr < s.min {
				t.Errorf("%s: SNR %.1f dB, want at least %.0f", s.name, snr, s.min)
			}
		}
		if haveSox {
			back := gtSox(t, sox, gtSox(t, sox, s.x, fs, "rate", "-v", "48000"), 48000, "rate", "-v", "44100")
			t.Logf("round trip 44.1->48->44.1 kHz, %s, sox rate -v: SNR %.1f dB", s.name, gtSNR(s.x[edge:len(s.x)-edge], back[edge:len(s.x)-edge]))
		}
	}
}

// An independent converter, sox's very high quality "rate -v", gives the
// same output for a signal inside both pass bands (so both are aligned
// the same way and neither colours it), and both reject aliases. sox
// starts rolling off gently above 0.65 of the lower Nyquist frequency
// (-0.0005 dB at 18 kHz, -0.003 dB at 20 kHz between 44.1 and 48 kHz),
// so the signal stays below that.
func TestResamplerAgreesWithSox(t *testing.T) {
	sox := need.Program(t, "sox")
	r := audiotest.NewRand(4)
	var freqs, amps, ph []float64
	for k := 0; k < 200; k++ {
		freqs = append(freqs, 20+(14000-20)*(r.Float()+1)/2)
		amps = append(amps, 0.01)
		ph = append(ph, math.Pi*r.Float())
	}
	pairs := [][2]int{{44100, 48000}, {48000, 44100}, {16000, 48000}, {48000, 16000}}
	if testing.Short() {
		pairs = pairs[:2]
	}
	for _, pr := range pairs {
		in, out := pr[0], pr[1]
		var fs []float64
		for _, f := range freqs {
			fs = append(fs, f*float64(min(in, out))/44100)
		}
		dur := in / 2
		if testing.Short() {
			dur = in / 8
		}
		x := gtTones(float64(in), fs, amps, ph, dur)
		ours := gtResampleMono(t, x, in, out, dsp.ResampleHigh)
		ref := gtSox(t, sox, x, in, "rate", "-v", fmt.Sprint(out))
		// Both round the exact length; sox may round an exact half down.
		if len(ours) != len(ref) && !(2*len(x)*out%in == 0 && 2*len(x)*out/in%2 == 1 && len(ours) == len(ref)+1) {
			t.Errorf("%d->%d Hz: %d frames, sox %d", in, out, len(ours), len(ref))
		}
		e := out / 40
		snr := gtSNR(ref[e:len(ref)-e], ours[e:len(ref)-e]) // sox's length is ours or one less
		t.Logf("%d->%d Hz, 200 tones up to 0.63 of the lower Nyquist: ours and sox rate -v differ by %.1f dB", in, out, -snr)
		if snr < 110 {
			t.Errorf("%d->%d Hz: ours and sox differ by only %.1f dB", in, out, snr)
		}
		if out < in {
			tone := gtTones(float64(in), []float64{float64(out) / 2 * 1.02}, []float64{0.5}, []float64{0}, dur)
			a := gtDB(gtRMS(gtResampleMono(t, tone, in, out, dsp.ResampleHigh)[e:len(ref)-e]) / (0.5 / math.Sqrt2))
			b := gtDB(gtRMS(gtSox(t, sox, tone, in, "rate", "-v", fmt.Sprint(out))[e:len(ref)-e]) / (0.5 / math.Sqrt2))
			t.Logf("%d->%d Hz, a sine 2%% above the output Nyquist frequency: ours %.1f dB, sox rate -v %.1f dB", in, out, a, b)
		}
	}
}

func TestResamplerZeroAllocs(t *testing.T) {
	pairs, chans := [][2]int{{44100, 48000}, {48000, 44100}, {44100, 44101}}, []int{1, 2, 3}
	if testing.Short() {
		pairs, chans = pairs[:1], chans[1:2]
	}
	for _, pr := range pairs {
		for _, ch := range chans {
			r := gtResample(t, &gtLoop{buf: audiotest.Noise(ch, 10000, 0.5, 1), fs: pr[0]}, pr[1], dsp.ResampleHigh)
			buf := audio.NewBuffer(ch, 4096)
			for range 4 {
				r.Read(buf)
			}
			if a := testing.AllocsPerRun(20, func() {
				if _, err := r.Read(buf); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%d->%d Hz, %d channels: %v allocations per Read", pr[0], pr[1], ch, a)
			}
		}
	}
}

func TestResamplerErrors(t *testing.T) {
	src := audio.NewBufferSource(audiotest.Noise(2, 100, 0.5, 1), 44100)
	for _, c := range []struct {
		rate int
		q    dsp.ResampleQuality
	}{{0, dsp.ResampleHigh}, {-48000, dsp.ResampleHigh}, {audio.MaxSampleRate + 1, dsp.ResampleHigh}, {48000, dsp.ResampleQuality(7)}, {48000, -1}} {
		if _, err := dsp.NewResampler(src, c.rate, dsp.ResampleOptions{Quality: c.q}); !errors.Is(err, dsp.ErrInvalidParameter) {
			t.Errorf("rate %d quality %d: err = %v, want ErrInvalidParameter", c.rate, c.q, err)
		}
	}
	r := gtResample(t, src, 48000, dsp.ResampleHigh)
	if _, err := r.Read(audio.NewBuffer(1, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("mono buffer for a stereo stream: %v", err)
	}
	// An upstream error surfaces after the frames before it, and stays.
	bad := gtIrregularSource(audiotest.Noise(1, 5000, 0.5, 2), 48000, 1)
	bad.fail = errGT
	r = gtResample(t, bad, 44100, dsp.ResampleHigh)
	buf := audio.NewBuffer(1, 1000)
	var err error
	total := 0
	for err == nil {
		var n int
		n, err = r.Read(buf)
		total += n
	}
	if !errors.Is(err, errGT) || total == 0 {
		t.Fatalf("after %d frames: %v, want the upstream error", total, err)
	}
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, errGT) {
		t.Fatalf("read after the error: %d, %v", n, err)
	}
	c := &gtCloser{Source: audio.NewBufferSource(audiotest.Noise(1, 10, 0.5, 1), 8000)}
	if err := gtResample(t, c, 16000, dsp.ResampleHigh).Close(); err != nil || c.closed != 1 {
		t.Fatalf("Close: %v, upstream closed %d times", err, c.closed)
	}
}

var _ io.Closer = (*dsp.Resampler)(nil)
