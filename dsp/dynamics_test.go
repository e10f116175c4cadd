package dsp

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

func TestCompressorStaticCurve(t *testing.T) {
	p := CompressorParams{ThresholdDB: -20, Ratio: 4, Attack: 0.005, Release: 0.05}
	for _, tc := range []struct{ in, want float64 }{
		{-30, -30},                // below threshold: untouched
		{-8, -20 + (-8+20)/4.0},   // 12 dB over: 3 dB over
		{-14, -20 + (-14+20)/4.0}, // 6 dB over: 1.5 dB over
	} {
		amp := math.Pow(10, tc.in/20) * math.Sqrt2 // sine RMS = tc.in dBFS
		x := audiotest.Sine(1, testFS, 1000, amp, testFS)
		c, err := NewCompressor(audio.NewBufferSource(x, testFS), p)
		if err != nil {
			t.Fatal(err)
		}
		out := testaudio.ReadAll(t, c)[0]
		got := rmsDB(out[testFS/2:])
		if math.Abs(got-tc.want) > 0.3 {
			t.Errorf("sine at %.0f dBFS RMS: output %.2f dBFS, want %.2f", tc.in, got, tc.want)
		}
	}
}

// blockSpread is the 95th minus 50th percentile of 100 ms block levels of
// the voiced blocks: how much louder the loud moments are than the median.
func blockSpread(t *testing.T, x []float64) float64 {
	an := analyse(t, mono(x), testFS)
	var lv []float64
	for i, v := range an.Voiced {
		if v {
			lv = append(lv, an.BlockDB(i))
		}
	}
	sortFloats(lv)
	return lv[len(lv)*95/100] - lv[len(lv)/2]
}

func TestCompressorPresetsOrdered(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 10, 130, 7)
	// Make it dynamic: every other second 8 dB louder.
	for i := range x {
		if int(float64(i)/testFS)%2 == 0 {
			x[i] *= 2.5
		}
	}
	an := analyse(t, mono(x), testFS)
	in := blockSpread(t, x)
	prev := in
	for _, k := range []CompressorKind{Soft, Medium, Hard} {
		p, err := CompressorPreset(k, an.SpeechRMS())
		if err != nil {
			t.Fatal(err)
		}
		c, _ := NewCompressor(audio.NewBufferSource(mono(x), testFS), p)
		out := testaudio.ReadAll(t, c)[0]
		s := blockSpread(t, out)
		t.Logf("%s: level spread %.1f dB (input %.1f), max reduction %.1f dB", k, s, in, c.MaxReductionDB())
		if s >= prev-0.3 {
			t.Errorf("%s: spread %.1f dB, want clearly below the previous %.1f dB", k, s, prev)
		}
		prev = s
	}
	if _, err := CompressorPreset("brutal", 0); err == nil {
		t.Error("unknown preset accepted")
	}
}

// truePeakRef measures the true peak with a 16x long windowed-sinc
// interpolation, independent of the limiter's 4x interpolator.
// truePeakRefKernel holds truePeakRef's interpolation coefficients,
// computed once: each is the same product for every sample, and the
// Kaiser window's Bessel series made them most of the reference's cost.
var truePeakRefKernel = sync.OnceValue(func() (k [truePeakRefOver][2 * truePeakRefHalf]float64) {
	for p := 1; p < truePeakRefOver; p++ {
		mu := float64(p) / truePeakRefOver
		for j := -truePeakRefHalf + 1; j <= truePeakRefHalf; j++ {
			d := float64(j) - mu
			k[p][j+truePeakRefHalf-1] = sinc(d) * kaiser(d/truePeakRefHalf, 8)
		}
	}
	return k
})

const truePeakRefOver, truePeakRefHalf = 16, 24

func truePeakRef(x []float64) float64 {
	const over, half = truePeakRefOver, truePeakRefHalf
	kernel := truePeakRefKernel()
	peak := 0.0
	for _, v := range x {
		peak = math.Max(peak, math.Abs(v))
	}
	// Only where the samples come within 6 dB of the sample peak can the
	// waveform between them reach the true peak.
	near := peak / 2
	for i := range x {
		if math.Abs(x[i]) < near && (i+1 >= len(x) || math.Abs(x[i+1]) < near) {
			continue
		}
		for p := 1; p < over; p++ {
			var s float64
			for j := -half + 1; j <= half; j++ {
				k := i + j
				if k < 0 || k >= len(x) {
					continue
				}
				s += x[k] * kernel[p][j+half-1]
			}
			peak = math.Max(peak, math.Abs(s))
		}
	}
	return 20 * math.Log10(peak)
}

func TestLimiterTruePeakCeiling(t *testing.T) {
	const ceiling = -1.0
	n := testFS
	// Worst cases for sample-peak limiters: a tone at fs/4 sampled 45
	// degrees off its peaks (true peak 3 dB above every sample), band-
	// limited noise 10 dB over the ceiling, and a voice 15 dB too loud.
	tone := make([]float64, n/4)
	for i := range tone {
		tone[i] = 1.4 * math.Sin(2*math.Pi*float64(i)/4+math.Pi/4)
	}
	nb := audiotest.Noise(1, n, 1, 3)
	lp, _ := NewBiquad(audio.NewBufferSource(nb, testFS), ButterworthLowPass(testFS, 15000, 8)...)
	noise := testaudio.ReadAll(t, lp)[0]
	testaudio.ScaleTo(noise, -5)
	voice := testaudio.SynthVoice(testFS, 1, 140, 8)
	testaudio.ScaleTo(voice, -6)
	for name, x := range map[string][]float64{"tone": tone, "noise": noise, "voice": voice} {
		t.Run(name, func(t *testing.T) {
			in := truePeakRef(x)
			lim := must(NewLimiter(audio.NewBufferSource(mono(x), testFS), ceiling))
			out := testaudio.ReadAll(t, lim)[0]
			if len(out) != len(x) {
				t.Fatalf("output %d frames, input %d", len(out), len(x))
			}
			got := truePeakRef(out)
			t.Logf("true peak %.2f dBTP in, %.3f dBTP out (ceiling %.1f), max reduction %.1f dB", in, got, ceiling, lim.MaxReductionDB())
			if got > ceiling+0.1 {
				t.Errorf("output true peak %.3f dBTP, want <= %.1f + 0.1", got, ceiling)
			}
			if got < ceiling-1.5 {
				t.Errorf("output true peak %.3f dBTP: limited far more than needed", got)
			}
		})
	}
}

func TestLimiterTransparentBelowCeilingAndAligned(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 3, 120, 9)
	testaudio.ScaleTo(x, -32) // peaks well below 0 dBFS
	lim := must(NewLimiter(audio.NewBufferSource(stereo(x), testFS), 0))
	out := testaudio.ReadAll(t, lim)
	for c := range out {
		in := stereo(x)[c]
		for i := range in {
			if out[c][i] != in[i] {
				t.Fatalf("channel %d frame %d: %g, want the input %g unchanged (latency not compensated?)", c, i, out[c][i], in[i])
			}
		}
	}
	// After a burst the gain recovers: 1 s later (12 release time
	// constants) the quiet part is within 0.001 dB of the input.
	y := append([]float64(nil), x...)
	for i := 0; i < testFS/4; i++ {
		y[i] *= 20
	}
	out = testaudio.ReadAll(t, must(NewLimiter(audio.NewBufferSource(mono(y), testFS), -1)))
	for i := testFS + testFS/4; i < len(y); i++ {
		if math.Abs(out[0][i]-y[i]) > 1e-4*math.Abs(y[i]) {
			t.Fatalf("frame %d still attenuated after the burst: %g vs %g", i, out[0][i], y[i])
		}
	}
}

// dialogue alternates two synthetic speakers, turns of 2.6 s (2 s of
// speech and a 0.6 s pause), the second levelDiff dB quieter, over a
// -65 dBFS noise floor. It returns the signal and each turn's speaker.
func dialogue(turns int, levelDiff float64) ([]float64, []int) {
	turnLen := int(2.6 * testFS)
	a := testaudio.SynthVoice(testFS, 2.6*float64(turns), 110, 21)
	b := testaudio.SynthVoice(testFS, 2.6*float64(turns), 215, 22)
	testaudio.ScaleTo(b, -20-levelDiff)
	x := make([]float64, turns*turnLen)
	who := make([]int, turns)
	for k := 0; k < turns; k++ {
		src := a
		if k%2 == 1 {
			src, who[k] = b, 1
		}
		copy(x[k*turnLen:(k+1)*turnLen], src[k*turnLen:(k+1)*turnLen])
	}
	nz := audiotest.Noise(1, len(x), math.Pow(10, -65.0/20)*math.Sqrt(3), 5)[0]
	for i := range x {
		x[i] += nz[i]
	}
	return x, who
}

// speakerLevels returns the power-mean K-weighted level of each speaker's
// voiced blocks in x.
func speakerLevels(t *testing.T, x []float64, who []int) [2]float64 {
	an := analyse(t, mono(x), testFS)
	turnBlocks := 26
	var e [2]float64
	var n [2]int
	for i := range an.Energy {
		k := i / turnBlocks
		if k >= len(who) || i%turnBlocks >= 20 || !an.Voiced[i] {
			continue
		}
		e[who[k]] += an.Energy[i]
		n[who[k]]++
	}
	return [2]float64{loudness.EnergyLUFS(e[0] / float64(n[0])), loudness.EnergyLUFS(e[1] / float64(n[1]))}
}

func TestLevelerEvensSpeakers(t *testing.T) {
	x, who := dialogue(12, 18)
	in := speakerLevels(t, x, who)
	an := analyse(t, mono(x), testFS)
	inDiff := in[0] - in[1]
	for _, tc := range []struct {
		strength float64
		want     float64 // difference in dB
		tol      float64
	}{{1, 0, 1}, {0.5, inDiff / 2, 1.5}, {0, inDiff, 0.3}, {1.2, -0.2 * inDiff, 1.5}} {
		lev, err := NewLeveler(audio.NewBufferSource(mono(x), testFS), an, LevelerOptions{Strength: tc.strength, MusicStrength: tc.strength})
		if err != nil {
			t.Fatal(err)
		}
		out := testaudio.ReadAll(t, lev)[0]
		lv := speakerLevels(t, out, who)
		diff := lv[0] - lv[1]
		t.Logf("strength %.1f: speakers %.1f/%.1f LUFS in, %.1f/%.1f out: difference %.2f dB", tc.strength, in[0], in[1], lv[0], lv[1], diff)
		if math.Abs(diff-tc.want) > tc.tol {
			t.Errorf("strength %.1f: difference %.2f dB, want %.1f +- %.1f", tc.strength, diff, tc.want, tc.tol)
		}
		// Pauses: the noise floor stays put (measured in the middle of
		// every pause, away from the ramps).
		pin, pout := pauseLevel(x), pauseLevel(out)
		if pout > pin+1 {
			t.Errorf("strength %.1f: pauses %.1f dB in, %.1f dB out: the noise floor was boosted", tc.strength, pin, pout)
		}
	}
}

func pauseLevel(x []float64) float64 {
	var p []float64
	for i, v := range x {
		if m := math.Mod(float64(i)/testFS, 2.6); m > 2.35 && m < 2.45 {
			p = append(p, v)
		}
	}
	return rmsDB(p)
}

func TestVoiceActivityAndMusic(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 26, 130, 10)
	nz := audiotest.Noise(1, len(x), 0.0005, 1)[0]
	for i := range x {
		x[i] += nz[i]
	}
	an := analyse(t, mono(x), testFS)
	var act, actV, pause, pauseV, music int
	for i, v := range an.Voiced {
		m := math.Mod((float64(i)+0.5)*BlockSeconds, 2.6)
		switch {
		case m > 0.2 && m < 1.8:
			act++
			if v {
				actV++
			}
		case m > 2.15 && m < 2.5:
			pause++
			if v {
				pauseV++
			}
		}
		if an.Music[i] {
			music++
		}
	}
	t.Logf("speech: %d/%d active blocks voiced, %d/%d pause blocks voiced, %d music blocks", actV, act, pauseV, pause, music)
	if float64(actV) < 0.95*float64(act) {
		t.Errorf("only %d of %d speech blocks voiced", actV, act)
	}
	if float64(pauseV) > 0.2*float64(pause) {
		t.Errorf("%d of %d pause blocks voiced", pauseV, pause)
	}
	if music > 0 {
		t.Errorf("%d speech blocks labelled music", music)
	}
	m := testaudio.Music(testFS, 30, 1)
	am := analyse(t, mono(m), testFS)
	nm := 0
	for _, v := range am.Music {
		if v {
			nm++
		}
	}
	t.Logf("music: %d/%d blocks labelled music", nm, len(am.Music))
	if float64(nm) < 0.9*float64(len(am.Music)) {
		t.Errorf("only %d of %d music blocks labelled music", nm, len(am.Music))
	}
}

// The shortcuts that skip the interpolation away from the ceiling must not
// change a single sample.
func TestLimiterSkipIsExact(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 4, 150, 12)
	testaudio.ScaleTo(x, -12)
	for i := testFS; i < 2*testFS; i++ {
		x[i] *= 0.1 // a quiet second: all skipped
	}
	in := stereo(x)
	fast := testaudio.ReadAll(t, must(NewLimiter(audio.NewBufferSource(in, testFS), -1)))
	ref := must(NewLimiter(audio.NewBufferSource(in, testFS), -1))
	ref.noSkip = true
	slow := testaudio.ReadAll(t, ref)
	for c := range fast {
		for i := range fast[c] {
			if fast[c][i] != slow[c][i] {
				t.Fatalf("channel %d frame %d: %g with skipping, %g without", c, i, fast[c][i], slow[c][i])
			}
		}
	}
}

// The block-wise steady state must compute exactly what the frame-by-frame
// push and emit compute, whatever the channels, the read sizes and how
// hard the limiter works.
func TestLimiterSteadyIsExact(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 5, 150, 13)
	testaudio.ScaleTo(x, -20)
	for i := range x {
		switch {
		case i > testFS && i < 2*testFS:
			x[i] *= 12 // 20 dB over: hard limiting
		case i > 3*testFS && i < 3*testFS+testFS/3:
			x[i] *= 0.01 // quiet: skipped spans, release to unity
		}
	}
	y := append([]float64(nil), x...)
	for i := range y {
		y[i] = -0.7 * x[(i+4801)%len(x)]
	}
	// NaN and infinities: the required gain of a NaN frame is 1, of an
	// infinite one 0, both ways.
	z := append([]float64(nil), y...)
	for i := testFS / 2; i < len(z); i += testFS / 3 {
		z[i] = math.NaN()
		z[i+7] = math.Inf(-1)
	}
	for _, in := range []audio.Buffer{{x}, {x, y}, {y, x, x}, {z, x}} {
		run := func(noSteady bool, block int) audio.Buffer {
			l := must(NewLimiter(audio.NewBufferSource(in, testFS), -1))
			l.noSteady = noSteady
			out := audio.NewBuffer(len(in), 0)
			buf := audio.NewBuffer(len(in), block)
			for {
				n, err := l.Read(buf)
				for c := range out {
					out[c] = append(out[c], buf[c][:n]...)
				}
				if err != nil {
					break
				}
			}
			return out
		}
		// The frame-by-frame reference once per input: the steady path
		// in every block size must give its bits.
		ref := run(true, 4096)
		for _, block := range []int{1, 7, 1000, 4096, 10000} {
			fast := run(false, block)
			for c := range ref {
				if len(fast[c]) != len(ref[c]) {
					t.Fatalf("%d channels, blocks of %d: %d frames, want %d", len(in), block, len(fast[c]), len(ref[c]))
				}
				for i := range ref[c] {
					if math.Float64bits(fast[c][i]) != math.Float64bits(ref[c][i]) {
						t.Fatalf("%d channels, blocks of %d: channel %d frame %d: %g, frame by frame %g", len(in), block, c, i, fast[c][i], ref[c][i])
					}
				}
			}
		}
	}
}

// envFloor is exact: at and above it adding 1e-30 changes nothing, just
// below it it does.
func TestEnvFloor(t *testing.T) {
	for _, e := range []float64{envFloor, math.Nextafter(envFloor, 1), 1e-9, 0.5, 1, 1e6} {
		if e+1e-30 != e {
			t.Errorf("%g + 1e-30 = %g", e, e+1e-30)
		}
	}
	if e := math.Nextafter(envFloor, 0); e+1e-30 == e {
		t.Errorf("just below the floor, %g + 1e-30 is unchanged: the floor could be lower", e)
	}
}

// AutoCompressor picks by the spread between the median and the 95th
// percentile of the leveled voiced blocks: the kinds chosen on random
// analyses are those the sorted levels give.
func TestAutoCompressorSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := map[CompressorKind]int{}
	for trial := range 300 {
		n := rng.IntN(200)
		an := &Analysis{Energy: make([]float64, n), Voiced: make([]bool, n), Music: make([]bool, n)}
		plan := GainPlan{DB: make([]float64, n-rng.IntN(n+1))}
		width := 2 + 14*rng.Float64()
		var lv []float64
		music := 0
		for i := range n {
			an.Energy[i] = lufsEnergy(-30 + width*rng.Float64())
			if rng.IntN(20) == 0 {
				an.Energy[i] = 0
			}
			an.Voiced[i] = rng.IntN(4) > 0
			an.Music[i] = rng.IntN(8) == 0
			if i < len(plan.DB) {
				plan.DB[i] = 3 * rng.NormFloat64()
			}
			if an.Voiced[i] {
				g := 0.0
				if i < len(plan.DB) {
					g = plan.DB[i]
				}
				lv = append(lv, an.BlockDB(i)+g)
				if an.Music[i] {
					music++
				}
			}
		}
		want := Soft
		if len(lv) >= 10 && 2*music <= len(lv) {
			slices.Sort(lv)
			switch spread := lv[len(lv)*95/100] - lv[len(lv)/2]; {
			case spread >= 8:
				want = Hard
			case spread >= 5:
				want = Medium
			}
		}
		if got := AutoCompressor(an, plan); got != want {
			t.Fatalf("trial %d: %v, the sorted levels give %v", trial, got, want)
		}
		kinds[want]++
	}
	if len(kinds) != 3 {
		t.Errorf("the trials chose only %v: all three kinds should be tried", kinds)
	}
}

// spanMax (the browser build's kernel there) finds spanMaxGo's maxima bit
// for bit, stretch by stretch, with signed zeros, infinities, subnormals
// and NaNs among the values and the maximum in either lane: the kernel
// fails it when it compares the values with their sign.
func TestSpanMaxIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, -math.MaxFloat64, 5e-324, -5e-324}
	for trial := range 300 {
		spans := r.IntN(17)
		x := make([]float64, spans*skipSpan)
		for i := range x {
			x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-6))
			if trial%2 == 0 && r.IntN(40) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		got, want := make([]uint64, spans), make([]uint64, spans)
		spanMax(x, got)
		spanMaxGo(x, want)
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("trial %d, stretch %d of %d: %016x, want %016x", trial, j, spans, got[j], want[j])
			}
		}
	}
}
