package spectral

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/fft"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/realaudio"
)

// Every fit of speech isolation's networks learns its speakers
// (isonet.go, isorec.go): more recorded voices moved it within a seed's
// spread. isoAug makes each fitting speaker several instead, on the
// fitting mixes only (TestFitIsolation, TestFitIsoRec set it on the
// part to fit on; the validation speakers, the folds and the held-out
// half are never perturbed): its speech resampled by a factor, which
// moves pitch and formants together and the tempo with them (Kaldi's
// speed perturbation, 0.9/1.0/1.1), the formants moved with the pitch
// kept, and a spectral tilt per utterance; or its recording conditions:
// a telephone channel, a microphone's colouration, a low-rate codec. What
// each did is in isonet.go's doc (session 13): the speed and the codecs
// gained on the validation speakers and not on the pool's folds, beyond
// the seed's spread; none is on by default.
type isoAug struct {
	// speed is the largest relative change of the speed (0.15: factors
	// 0.85 to 1.15 drawn uniformly, on isoSpeed's grid); 0: none.
	speed float64
	// babble is the same of each babble talker, drawn apart; 0: none.
	babble float64
	// tiltDB is the largest tilt: the speech above isoTiltHz raised
	// and below it lowered by a draw of up to half of it each way.
	tiltDB float64
	// formant is the largest relative shift of the formants with the
	// pitch kept (isoWarp; 0.1: 0.9 to 1.1), drawn apart from the speed,
	// so that pitch and vocal tract vary independently; 0: none.
	formant float64
	// phone is the share of the target utterances sent through a
	// telephone channel (isoPhone), drawn per utterance; 0: none.
	phone float64
	// eqDB is the largest gain of a microphone's colouration (isoMicEQ)
	// put on every target utterance; 0: none.
	eqDB float64
	// codec is the share of the target utterances sent through a
	// speech or music codec at a low rate (isoCodecs, through ffmpeg, the
	// program's path), drawn per utterance; 0: none.
	codec  float64
	ffmpeg string
}

var (
	fitSpeed       = flag.Float64("fitspeed", 0, "TestFitIsolation, TestFitIsoRec: perturb the speed of the fitting mixes' target speech by factors 1-x to 1+x (0: none; isoAug)")
	fitSpeedBabble = flag.Float64("fitspeedbabble", 0, "TestFitIsolation, TestFitIsoRec: perturb the speed of each babble talker of the fitting mixes by factors 1-x to 1+x (0: none)")
	fitTilt        = flag.Float64("fittilt", 0, "TestFitIsolation, TestFitIsoRec: tilt the fitting mixes' target speech by up to this many dB, high against low (0: none)")
	fitFormant     = flag.Float64("fitformant", 0, "TestFitIsolation, TestFitIsoRec: shift the formants of the fitting mixes' target speech, pitch kept, by factors 1-x to 1+x (0: none; isoWarp)")
	fitPhone       = flag.Float64("fitphone", 0, "TestFitIsolation, TestFitIsoRec: send this share of the fitting mixes' target utterances through a telephone channel (0: none; isoPhone)")
	fitCodec       = flag.Float64("fitcodec", 0, "TestFitIsolation, TestFitIsoRec: send this share of the fitting mixes' target utterances through a low-rate codec (0: none; isoCodecs, ffmpeg)")
	fitEQ          = flag.Float64("fiteq", 0, "TestFitIsolation, TestFitIsoRec: colour the fitting mixes' target speech as a microphone by up to this many dB (0: none; isoMicEQ)")
)

// isoAugFlags is the perturbation the flags ask for; -fitcodec needs
// ffmpeg (tb is skipped without it).
func isoAugFlags(tb testing.TB) isoAug {
	a := isoAug{speed: *fitSpeed, babble: *fitSpeedBabble, tiltDB: *fitTilt, formant: *fitFormant, phone: *fitPhone, eqDB: *fitEQ, codec: *fitCodec}
	if a.codec > 0 {
		a.ffmpeg = need.Program(tb, "ffmpeg")
	}
	return a
}

func (a isoAug) on() bool {
	return a.speed > 0 || a.babble > 0 || a.tiltDB > 0 || a.formant > 0 || a.phone > 0 || a.eqDB > 0 || a.codec > 0
}

// drawSpeed draws a speed factor of 1-x to 1+x from r.
func drawSpeed(x float64, r *rand.Rand) float64 {
	return 1 + x*(2*r.Float64()-1)
}

// target perturbs a clip of the target speech with r's draws.
func (a isoAug) target(x []float64, r *rand.Rand) []float64 {
	if a.speed > 0 {
		x = isoSpeed(x, drawSpeed(a.speed, r))
	}
	if a.tiltDB > 0 {
		x = isoTilt(x, a.tiltDB*(r.Float64()-0.5))
	}
	if a.formant > 0 {
		x = isoWarp(x, 1+a.formant*(2*r.Float64()-1))
	}
	if a.eqDB > 0 {
		x = isoMicEQ(x, a.eqDB, r)
	}
	if a.phone > 0 && r.Float64() < a.phone {
		x = isoPhone(x, isoChannel(r.IntN(3)), -30+15*r.Float64())
	}
	if a.codec > 0 && r.Float64() < a.codec {
		x = isoCodec(x, a.ffmpeg, isoCodecs[r.IntN(len(isoCodecs))])
	}
	return x
}

// talker is n samples of a babble talker's speech x from sample at on,
// its speed perturbed if a.babble is not 0.
func (a isoAug) talker(x []float64, n, at int, r *rand.Rand) []float64 {
	if a.babble <= 0 {
		return realaudio.Loop(x, n, at)
	}
	f := drawSpeed(a.babble, r)
	y := isoSpeed(realaudio.Loop(x, int(math.Ceil(float64(n)*f))+64, at), f)
	if len(y) < n {
		y = append(y, make([]float64, n-len(y))...)
	}
	return y[:n]
}

// isoSpeed returns x played f times as fast: resampled (dsp.Resampler)
// from fs to fs/f Hz and taken at fs, so that its pitch and formants are
// f times as high and it lasts 1/f as long. The rate is rounded to 100
// Hz, which keeps the resampler's tables exact and few.
func isoSpeed(x []float64, f float64) []float64 {
	rate := int(math.Round(fs/f/100)) * 100
	if rate == fs {
		return x
	}
	r, err := dsp.NewResampler(audio.NewBufferSource(audio.Buffer{x}, fs), rate, dsp.ResampleOptions{Quality: dsp.ResampleMedium})
	if err != nil {
		panic(err) // rates near fs are always valid
	}
	y, err := audio.ReadAll(context.Background(), r)
	if err != nil {
		panic(err) // a buffer source does not fail
	}
	return y[0]
}

// isoTiltHz is the corner of isoTilt's shelf: about where the long-term
// spectrum of speech turns down.
const isoTiltHz = 1000

// isoTilt returns x with its content above isoTiltHz raised by dB/2 and
// below it lowered by dB/2 (a one-pole split into low and high, each
// scaled: 200 Hz against 4 kHz move by 0.8 of dB), at x's active speech
// level.
func isoTilt(x []float64, dB float64) []float64 {
	lo, hi := math.Pow(10, -dB/40), math.Pow(10, dB/40)
	c := math.Exp(-2 * math.Pi * isoTiltHz / fs)
	y := make([]float64, len(x))
	var s float64
	for i, v := range x {
		s = (1-c)*v + c*s
		y[i] = lo*s + hi*(v-s)
	}
	return likeInput(y, x)
}

// likeInput returns y, a perturbation of x, cut or padded with zeros to
// x's length and scaled to x's active speech level (ActiveLevel), so
// that a perturbation changes the voice or the channel and not the level
// the mixes are made at.
func likeInput(y, x []float64) []float64 {
	if len(y) > len(x) {
		y = y[:len(x)]
	}
	for len(y) < len(x) {
		y = append(y, 0)
	}
	if a, b := realaudio.ActiveLevel(x), realaudio.ActiveLevel(y); a > 0 && b > 0 {
		g := math.Sqrt(a / b)
		for i := range y {
			y[i] *= g
		}
	}
	return y
}

// String describes the perturbation for the models' headers.
func (a isoAug) String() string {
	if !a.on() {
		return "none"
	}
	return fmt.Sprintf("speed 1+-%g, babble talkers' 1+-%g, tilt up to %g dB, formants 1+-%g, telephone channel %g of the utterances, microphone colouration up to %g dB, codecs %g of the utterances (isoaug_test.go)", a.speed, a.babble, a.tiltDB, a.formant, a.phone, a.eqDB, a.codec)
}

// isoWarpLifter is the quefrency (samples at fs) under which a frame's
// cepstrum is its envelope: 2 ms, under the period of the highest voice
// (400 Hz, 2.5 ms), so that the harmonics stay out of it; at 0.83 ms the
// envelope was too smooth to move a formant by a harmonic.
const isoWarpLifter = 96

// isoWarp returns x with its formants moved by f, its pitch kept (a
// vocal tract f times shorter): every frame of the isolator's STFT is
// multiplied by its own spectral envelope (the liftered cepstrum of its
// log magnitude) read at k/f over the same read at k, at most 20 dB
// either way, its phase kept, and the frames overlap-added; the result
// at x's active speech level.
func isoWarp(x []float64, f float64) []float64 {
	n := FFTSize(fs)
	hop := n / 4
	win := sqrtHann(n)
	ft := fft.NewReal(n)
	bins := n/2 + 1
	spec, cep := make([]complex128, bins), make([]complex128, bins)
	frame, q := make([]float64, n), make([]float64, n)
	env := make([]float64, bins)
	y := make([]float64, len(x)+n)
	for start := hop - n; start < len(x); start += hop {
		for i := range frame {
			frame[i] = 0
			if j := start + i; j >= 0 && j < len(x) {
				frame[i] = x[j] * win[i]
			}
		}
		ft.Coefficients(spec, frame)
		for k, c := range spec {
			cep[k] = complex(0.5*math.Log(real(c)*real(c)+imag(c)*imag(c)+1e-20), 0)
		}
		ft.Sequence(q, cep) // n times the real cepstrum
		for i := isoWarpLifter; i <= n-isoWarpLifter; i++ {
			q[i] = 0
		}
		ft.Coefficients(cep, q)
		for k := range env {
			env[k] = real(cep[k]) / float64(n)
		}
		for k := range spec {
			src := min(float64(k)/f, float64(bins-1))
			i := int(src)
			u := src - float64(i)
			e := env[i]
			if i+1 < bins {
				e = (1-u)*env[i] + u*env[i+1]
			}
			g := math.Exp(min(2.3, max(-2.3, e-env[k]))) // +-20 dB
			spec[k] *= complex(g, 0)
		}
		ft.Sequence(frame, spec)
		// sqrt-Hann in and out at 75% overlap sum to 2.
		for i, v := range frame {
			if j := start + i; j >= 0 {
				y[j] += v * win[i] / float64(2*n)
			}
		}
	}
	return likeInput(y, x)
}

// TestIsoWarpMovesFormants checks isoWarp on a 200 Hz pulse train
// through a resonance at 1 kHz (200 Hz wide): warped by 1.2 and 0.8 the
// centroid of its harmonics' power under 3 kHz moves by at least half
// the warp (a ratio of liftered envelopes moves a sharp formant only
// partly: at 1.2 the 1 and 1.2 kHz harmonics come out equal, at 0.8 the
// 800 Hz one is 4 dB over 1 kHz), what lies between the harmonics stays
// 20 dB under them (the pitch kept), and unwarped it returns its input
// within -40 dB.
func TestIsoWarpMovesFormants(t *testing.T) {
	x := make([]float64, fs)
	// A two-pole resonance at 1 kHz, 200 Hz wide.
	rr := math.Exp(-math.Pi * 200 / fs)
	a1, a2 := 2*rr*math.Cos(2*math.Pi*1000/fs), -rr*rr
	var y1, y2 float64
	for i := range x {
		v := 0.0
		if i%(fs/200) == 0 {
			v = 1
		}
		y := v + a1*y1 + a2*y2
		x[i], y1, y2 = 0.01*y, y, y1
	}
	amp := func(x []float64, hz float64) float64 { return toneAmp(x[fs/4:3*fs/4], hz) }
	// centroid is the power-weighted mean frequency of the harmonics
	// under 3 kHz, peak the strongest one's amplitude.
	centroid := func(x []float64) (c, peak float64) {
		var s, w float64
		for h := 200.0; h <= 3000; h += 200 {
			a := amp(x, h)
			s += h * a * a
			w += a * a
			peak = max(peak, a)
		}
		return s / w, peak
	}
	c0, _ := centroid(x)
	for _, f := range []float64{1.2, 0.8} {
		w := isoWarp(x, f)
		c, peak := centroid(w)
		between := max(amp(w, 900), amp(w, 1100), amp(w, 1300))
		if r := c / c0; math.Abs(r-1) < math.Abs(f-1)/2 || (r-1)*(f-1) < 0 {
			t.Errorf("warped by %g: the harmonics' centroid moved by %.3f", f, r)
		}
		if d := 20 * math.Log10(between/peak); d > -20 {
			t.Errorf("warped by %g: %.1f dB between the harmonics, want under -20", f, d)
		}
		t.Logf("warped by %g: centroid %.0f -> %.0f Hz, between the harmonics %.1f dB", f, c0, c, 20*math.Log10(between/peak))
	}
	same := isoWarp(x, 1)
	var e, p float64
	for i := fs / 4; i < 3*fs/4; i++ {
		e += (same[i] - x[i]) * (same[i] - x[i])
		p += x[i] * x[i]
	}
	if d := 10 * math.Log10(e/p); d > -40 {
		t.Errorf("unwarped: error %.1f dB", d)
	}
}

// TestIsoSpeedMovesPitch checks isoSpeed on a 500 Hz tone: at 1.1 it
// lasts 1/1.1 as long and its peak moves to 550 Hz, its level kept within
// 0.1 dB; and isoTilt of 12 dB on two tones, 200 Hz and 4 kHz, moves
// them apart by 9.5 dB within 0.5 (a one-pole shelf reaches its whole
// tilt only towards 0 Hz and the Nyquist frequency).
func TestIsoSpeedMovesPitch(t *testing.T) {
	x := make([]float64, fs)
	for i := range x {
		x[i] = 0.1 * math.Sin(2*math.Pi*500*float64(i)/fs)
	}
	y := isoSpeed(x, 1.1)
	if want := int(math.Round(fs / 1.1)); math.Abs(float64(len(y)-want)) > 0.001*fs {
		t.Errorf("length %d, want %d", len(y), want)
	}
	// The tone's frequency from its zero crossings in the middle.
	mid := y[len(y)/4 : 3*len(y)/4]
	cross := 0
	for i := 1; i < len(mid); i++ {
		if (mid[i-1] < 0) != (mid[i] < 0) {
			cross++
		}
	}
	if hz := float64(cross) / 2 / (float64(len(mid)) / fs); math.Abs(hz-550) > 2 {
		t.Errorf("tone at %.1f Hz, want 550", hz)
	}
	if d := 10 * math.Log10(meanPower(mid)/meanPower(x)); math.Abs(d) > 0.1 {
		t.Errorf("level changed by %.2f dB", d)
	}
	tone := func(x []float64, hz float64) float64 { return toneAmp(x[fs/4:], hz) }
	two := make([]float64, fs)
	for i := range two {
		two[i] = 0.1*math.Sin(2*math.Pi*200*float64(i)/fs) + 0.1*math.Sin(2*math.Pi*4000*float64(i)/fs)
	}
	z := isoTilt(two, 12)
	got := 20 * math.Log10(tone(z, 4000)/tone(z, 200)/(tone(two, 4000)/tone(two, 200)))
	if math.Abs(got-9.5) > 0.5 {
		t.Errorf("tilt of 12 dB moved 4 kHz against 200 Hz by %.2f dB", got)
	}
	t.Logf("speed 1.1: %d -> %d samples; tilt 12 dB: %.2f dB between 200 Hz and 4 kHz", len(x), len(y), got)
}

// isoChannel is a telephone channel of isoPhone.
type isoChannel int

const (
	// isoMuLaw is the narrow band (300 to 3400 Hz at 8 kHz) in G.711's
	// mu-law, isoALaw the same in its A-law, isoWide the wide band of
	// G.722 (16 kHz, 50 to 6800 Hz) without its ADPCM.
	isoMuLaw isoChannel = iota
	isoALaw
	isoWide
)

// isoPhone returns x sent through channel c and taken back at fs: band
// limited by the resampler to the channel's rate (ResampleMedium's pass
// band ends at 0.85 of its Nyquist frequency: 3.4 kHz at 8 kHz, which is
// the telephone band's edge), high-passed (second-order Butterworth, 300
// Hz narrow, 50 Hz wide), and companded to 8 bits with its active speech
// level at levelDB dB under full scale (the G.711 laws' quantization
// noise follows the level, their overload does not); the result at x's
// active speech level.
func isoPhone(x []float64, c isoChannel, levelDB float64) []float64 {
	rate, corner := 8000, 300.0
	if c == isoWide {
		rate, corner = 16000, 50
	}
	y := isoResample(x, fs, rate)
	y = isoFilter(y, rate, dsp.ButterworthHighPass(float64(rate), corner, 2)...)
	if c != isoWide {
		a := realaudio.ActiveLevel(y)
		if a <= 0 {
			return x
		}
		g := math.Pow(10, levelDB/20) / math.Sqrt(a)
		for i, v := range y {
			y[i] = g711(v*g, c) / g
		}
	}
	y = isoResample(y, rate, fs)
	return likeInput(y, x)
}

// g711 returns v (full scale 1) compressed by c's law, quantized to its
// 128 steps each way and expanded: the companding's error without its
// bit layout (the segment laws of G.711 are these curves' piecewise-linear
// approximations).
func g711(v float64, c isoChannel) float64 {
	m := min(math.Abs(v), 1)
	const mu, A = 255.0, 87.6
	var y float64
	if c == isoMuLaw {
		y = math.Log1p(mu*m) / math.Log1p(mu)
	} else if m < 1/A {
		y = A * m / (1 + math.Log(A))
	} else {
		y = (1 + math.Log(A*m)) / (1 + math.Log(A))
	}
	y = (math.Min(math.Floor(y*128), 127) + 0.5) / 128
	if c == isoMuLaw {
		m = math.Expm1(y*math.Log1p(mu)) / mu
	} else if y < 1/(1+math.Log(A)) {
		m = y * (1 + math.Log(A)) / A
	} else {
		m = math.Exp(y*(1+math.Log(A))-1) / A
	}
	return math.Copysign(m, v)
}

// isoMicEQ returns x coloured as by a microphone and its place: a low
// cut (second-order, log-uniform 40 to 200 Hz), a peak or dip of up to
// dB either way (log-uniform 150 Hz to 8 kHz, Q 0.7 to 3) and a high
// shelf of up to dB/2 either way at 4 to 10 kHz (presence or a
// darkening grille), drawn from r; the result at x's active speech level.
func isoMicEQ(x []float64, dB float64, r *rand.Rand) []float64 {
	logU := func(lo, hi float64) float64 { return lo * math.Pow(hi/lo, r.Float64()) }
	y := isoFilter(x, fs,
		dsp.HighPassCoeffs(fs, logU(40, 200), 0.7071),
		dsp.PeakingCoeffs(fs, logU(150, 8000), 0.7+2.3*r.Float64(), dB*(2*r.Float64()-1)),
		dsp.HighShelfCoeffs(fs, 4000+6000*r.Float64(), dB/2*(2*r.Float64()-1)))
	return likeInput(y, x)
}

// isoResample returns x at rate Hz taken from from Hz (dsp.Resampler).
func isoResample(x []float64, from, rate int) []float64 {
	r, err := dsp.NewResampler(audio.NewBufferSource(audio.Buffer{x}, from), rate, dsp.ResampleOptions{Quality: dsp.ResampleMedium})
	if err != nil {
		panic(err) // 8, 16 and 48 kHz are valid rates
	}
	y, err := audio.ReadAll(context.Background(), r)
	if err != nil {
		panic(err) // a buffer source does not fail
	}
	return y[0]
}

// isoFilter returns x at rate Hz through the biquad sections (dsp.Biquad).
func isoFilter(x []float64, rate int, sections ...dsp.Coeffs) []float64 {
	b, err := dsp.NewBiquad(audio.NewBufferSource(audio.Buffer{x}, rate), sections...)
	if err != nil {
		panic(err) // the designs are stable
	}
	y, err := audio.ReadAll(context.Background(), b)
	if err != nil {
		panic(err) // a buffer source does not fail
	}
	return y[0]
}

// TestIsoPhoneBand checks isoPhone on tones: through the narrow band a 1
// kHz tone is 30 dB over the companding's noise (what is not the tone
// fitted to it), a tone at 100 Hz loses 15 dB against it (a second-order
// high-pass at 300 Hz: 19) and one at 5 kHz 40; through the wide band 5
// kHz is kept within 1 dB against 1 kHz and 10 kHz loses 40. And
// isoMicEQ keeps the active level.
func TestIsoPhoneBand(t *testing.T) {
	tones := func(hz ...float64) []float64 {
		x := make([]float64, fs)
		for i := range x {
			for _, h := range hz {
				x[i] += 0.05 * math.Sin(2*math.Pi*h*float64(i)/fs)
			}
		}
		return x
	}
	amp := func(x []float64, hz float64) float64 { return toneAmp(x[fs/4:3*fs/4], hz) }
	db := func(a, b float64) float64 { return 20 * math.Log10(a/b) }
	x := tones(100, 1000, 5000)
	for _, c := range []isoChannel{isoMuLaw, isoALaw} {
		y := isoPhone(x, c, -20)
		lo, hi := db(amp(y, 100), amp(y, 1000)), db(amp(y, 5000), amp(y, 1000))
		// A 1 kHz tone alone through the channel less the tone fitted
		// to it (amplitude and phase: the high-pass turns it) is the
		// companding's noise.
		z := isoPhone(tones(1000), c, -20)[fs/4 : 3*fs/4]
		var sc, ss float64
		for i, v := range z {
			sc += v * math.Cos(2*math.Pi*1000*float64(i+fs/4)/fs)
			ss += v * math.Sin(2*math.Pi*1000*float64(i+fs/4)/fs)
		}
		sc, ss = 2*sc/float64(len(z)), 2*ss/float64(len(z))
		var e, p float64
		for i, v := range z {
			f := sc*math.Cos(2*math.Pi*1000*float64(i+fs/4)/fs) + ss*math.Sin(2*math.Pi*1000*float64(i+fs/4)/fs)
			e += (v - f) * (v - f)
			p += f * f
		}
		snr := 10 * math.Log10(p/e)
		t.Logf("channel %d: 100 Hz %.1f dB, 5 kHz %.1f dB against 1 kHz, companded 1 kHz SNR %.1f dB", c, lo, hi, snr)
		if lo > -15 || hi > -40 {
			t.Errorf("channel %d: 100 Hz %.1f dB, 5 kHz %.1f dB against 1 kHz, want under -15 and -40", c, lo, hi)
		}
		if snr < 30 {
			t.Errorf("channel %d: companded 1 kHz SNR %.1f dB, want 30", c, snr)
		}
	}
	w := isoPhone(tones(1000, 5000, 10000), isoWide, -20)
	if d := db(amp(w, 5000), amp(w, 1000)); math.Abs(d) > 1 {
		t.Errorf("wide band: 5 kHz %.2f dB against 1 kHz", d)
	}
	if d := db(amp(w, 10000), amp(w, 1000)); d > -40 {
		t.Errorf("wide band: 10 kHz %.1f dB against 1 kHz, want under -40", d)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		e := isoMicEQ(x, 6, r)
		if d := 10 * math.Log10(realaudio.ActiveLevel(e)/realaudio.ActiveLevel(x)); math.Abs(d) > 0.01 {
			t.Errorf("microphone colouration moved the level by %.3f dB", d)
		}
	}
}

// isoCodecs are the codecs of -fitcodec: what telephones, VoIP and the
// web's low rates do to speech that isoPhone's bands alone do not (a
// vocoder's, ADPCM's and perceptual coders' errors).
var isoCodecs = []isoCodecSpec{
	{"GSM 06.10", 8000, []string{"-c:a", "libgsm"}, "gsm"},
	{"G.722", 16000, []string{"-c:a", "g722"}, "g722"},
	{"Opus 12 kbit/s", 16000, []string{"-c:a", "libopus", "-b:a", "12k"}, "ogg"},
	{"MP3 24 kbit/s", 16000, []string{"-c:a", "libmp3lame", "-b:a", "24k"}, "mp3"},
}

// isoCodecSpec is a codec of isoCodecs: its rate, ffmpeg's encoder
// options and the container it is piped in.
type isoCodecSpec struct {
	name   string
	rate   int
	enc    []string
	format string
}

// isoCodec returns x resampled to c's rate, encoded and decoded by ffmpeg
// (two processes piped, no file) and taken back at fs, its length kept
// (the codecs' delay of a few ms is the target's, as it would be), at x's
// active speech level.
func isoCodec(x []float64, ffmpeg string, c isoCodecSpec) []float64 {
	y := isoResample(x, fs, c.rate)
	raw := make([]byte, 4*len(y))
	for i, v := range y {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
	}
	rate := strconv.Itoa(c.rate)
	enc := exec.Command(ffmpeg, append(append([]string{"-v", "error", "-f", "f32le", "-ar", rate, "-ac", "1", "-i", "pipe:0"}, c.enc...), "-f", c.format, "pipe:1")...)
	dec := exec.Command(ffmpeg, "-v", "error", "-f", c.format, "-i", "pipe:0", "-f", "f32le", "-ar", rate, "-ac", "1", "pipe:1")
	enc.Stdin = bytes.NewReader(raw)
	pipe, err := enc.StdoutPipe()
	if err != nil {
		panic(err)
	}
	var out, msg bytes.Buffer
	dec.Stdin, dec.Stdout, dec.Stderr, enc.Stderr = pipe, &out, &msg, &msg
	if err := dec.Start(); err != nil {
		panic(err)
	}
	if err := enc.Run(); err != nil {
		panic(fmt.Sprintf("%s: %v: %s", c.name, err, msg.String()))
	}
	if err := dec.Wait(); err != nil {
		panic(fmt.Sprintf("%s: %v: %s", c.name, err, msg.String()))
	}
	b := out.Bytes()
	y = make([]float64, len(b)/4)
	for i := range y {
		y[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	y = isoResample(y, c.rate, fs)
	return likeInput(y, x)
}

// TestIsoCodecs checks isoCodec on a 500 Hz tone under a 6 kHz one (20
// dB weaker) through every codec of isoCodecs: the 500 Hz tone comes out
// within 3 dB of its level (the codecs keep a voiced band; the output is
// at the input's active level), and the 6 kHz tone 30 dB weaker than in
// the input against it through GSM's 8 kHz rate.
func TestIsoCodecs(t *testing.T) {
	ff := need.Program(t, "ffmpeg")
	x := make([]float64, fs)
	for i := range x {
		x[i] = 0.1*math.Sin(2*math.Pi*500*float64(i)/fs) + 0.01*math.Sin(2*math.Pi*6000*float64(i)/fs)
	}
	amp := func(x []float64, hz float64) float64 { return toneAmp(x[fs/4:3*fs/4], hz) }
	for _, c := range isoCodecs {
		y := isoCodec(x, ff, c)
		if len(y) != len(x) {
			t.Fatalf("%s: %d samples of %d", c.name, len(y), len(x))
		}
		low := 20 * math.Log10(amp(y, 500)/amp(x, 500))
		high := 20*math.Log10(amp(y, 6000)/amp(y, 500)) + 20
		t.Logf("%s: 500 Hz %+.2f dB, 6 kHz %+.1f dB against it", c.name, low, high)
		if math.Abs(low) > 3 {
			t.Errorf("%s: 500 Hz tone %+.2f dB", c.name, low)
		}
		if c.rate == 8000 && high > -30 {
			t.Errorf("%s: 6 kHz tone %+.1f dB against 500 Hz, want under -30", c.name, high)
		}
	}
}
