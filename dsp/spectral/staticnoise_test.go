package spectral

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// swelling is pink noise whose level swells and fades by 12 dB every few
// seconds, with bursts of a 1 kHz tone that come and go (a voice's
// stand-in for the network: something over the noise).
func swelling(n int) []float64 {
	x := testaudio.PinkNoise(n, 0.05, 11)
	for i := range x {
		tt := float64(i) / fs
		x[i] *= 1.5 + math.Sin(2*math.Pi*tt/3.7)
		if math.Sin(2*math.Pi*tt/1.3) > 0.3 {
			x[i] += 0.1 * math.Sin(2*math.Pi*1000*tt)
		}
	}
	return x
}

// The Profiler's sample of frames enters the frames the network's
// features do not read as silence (skip) and leaves out the harmonicity
// of those whose harmonicity they do not read (pushLevels): its band
// gains must be those of a front that analyses those frames and pushes
// zero spectra for the others, bit for bit.
func TestStaticNoiseSampleIsExact(t *testing.T) {
	x := swelling(8 * fs)
	s := newStaticNoise(fs)
	ref := newIsoFront(fs, s.n, s.hop, s.win)
	f := newRFFT(s.n)
	spec := make([]complex128, s.n/2+1)
	pow := make([]float64, s.n/2+1)
	zero := make([]float64, s.n/2+1)
	got, want := make([]float64, isoBands), make([]float64, isoBands)
	evals := 0
	for t0, fr := 0, int64(0); t0+s.n <= len(x); t0, fr = t0+s.hop, fr+1 {
		at := int(fr % staticEvery)
		if s.ctx[at] {
			clear(pow)
			f.forwardPow(spec, pow, x[t0:t0+s.n], s.win)
			s.front.pushLevels(pow, s.harm[at])
			ref.push(pow)
		} else {
			s.front.skip()
			ref.push(zero)
		}
		if o := fr - int64(s.front.W); o >= 0 && o%staticEvery == 0 {
			s.front.gains(o, got)
			ref.gains(o, want)
			for b := range got {
				if got[b] != want[b] {
					t.Fatalf("frame %d, band %d: gain %v, want %v", o, b, got[b], want[b])
				}
			}
			evals++
		}
	}
	if evals < 10 {
		t.Fatalf("%d frames compared", evals)
	}
}

// The estimate does not depend on how the stream is cut into blocks.
func TestStaticNoiseBlocks(t *testing.T) {
	x := swelling(6 * fs)
	prior := make([]float64, FFTSize(fs)/2+1)
	var first []float64
	for _, blk := range []int{len(x), 4096, 1000, 77} {
		s := newStaticNoise(fs)
		for i := 0; i < len(x); i += blk {
			s.write(x[i:min(i+blk, len(x))])
		}
		got := s.result(prior)
		if got == nil {
			t.Fatalf("blocks of %d: no profile after %d frames", blk, s.evals)
		}
		if first == nil {
			first = got
			continue
		}
		for k := range got {
			if got[k] != first[k] {
				t.Fatalf("blocks of %d: bin %d %v, whole stream %v", blk, k, got[k], first[k])
			}
		}
	}
}

// After its first staticDenseSec the profile runs the network in runs
// of passes (staticBurst of every staticPeriod), each pass's gains those
// of the pass on every staticEvery-th frame, bit for bit, and the runs'
// weight times period/burst.
func TestStaticNoiseRunsAreDense(t *testing.T) {
	x := swelling(12 * fs)
	dense, runs := newStaticNoise(fs), newStaticNoise(fs)
	dense.denseEvals = math.MaxInt64
	runs.denseEvals, runs.burst, runs.period = 5, 3, 11
	bins := len(dense.den)
	dPrev, rPrev := make([]float64, bins), make([]float64, bins)
	compared, scaled := 0, 0
	for i := 0; i < len(x); i += dense.hop {
		blk := x[i:min(i+dense.hop, len(x))]
		before := runs.evals
		copy(dPrev, dense.den)
		copy(rPrev, runs.den)
		dense.write(blk)
		runs.write(blk)
		if runs.evals == before {
			continue
		}
		for k, g := range runs.g {
			if g != dense.g[k] {
				t.Fatalf("pass %d, bin %d: gain %v, every frame's %v", dense.evals, k, g, dense.g[k])
			}
		}
		w := 1.0
		if runs.evals > int(runs.denseEvals) {
			w = float64(runs.period) / float64(runs.burst)
			scaled++
		}
		for k := range bins {
			d, r := dense.den[k]-dPrev[k], runs.den[k]-rPrev[k]
			if math.Abs(r-w*d) > 1e-9*max(r, 1e-300) {
				t.Fatalf("pass %d, bin %d: weight %v, every frame's %v times %v", dense.evals, k, r, d, w)
			}
		}
		compared++
	}
	if scaled < 6 || dense.evals-runs.evals < compared/3 {
		t.Fatalf("%d passes compared (%d in runs), %d left out", compared, scaled, dense.evals-runs.evals)
	}
	t.Logf("%d passes compared (%d in runs), %d left out", compared, scaled, dense.evals-runs.evals)
}

// The batched forward pass gives band's gains bit for bit (with the AVX2
// kernel where the CPU has it; TestIsoBatchGoIsBand the Go loops), on a
// front's features and on features scaled up until the tanh saturates.
func TestIsoBatchIsBand(t *testing.T) { checkBatchIsBand(t) }

func checkBatchIsBand(t *testing.T) {
	x := swelling(3 * fs)
	s := newStaticNoise(fs)
	f := newRFFT(s.n)
	spec := make([]complex128, s.n/2+1)
	pow := make([]float64, s.n/2+1)
	want, got := make([]float64, isoBands), make([]float64, isoBands)
	var sc isoScratch
	var bs isoBatch
	compared := 0
	for t0, fr := 0, int64(0); t0+s.n <= len(x); t0, fr = t0+s.hop, fr+1 {
		clear(pow)
		f.forwardPow(spec, pow, x[t0:t0+s.n], s.win)
		s.front.push(pow)
		o := fr - int64(s.front.W)
		if o < 0 || o%7 != 0 {
			continue
		}
		feat := s.front.feat
		s.front.features(o, feat)
		for _, scale := range []float32{1, 8} {
			for i := range feat {
				feat[i] *= scale
			}
			isoModel.forward(feat, &sc, want)
			isoModel.forwardBatch(feat, &bs, got)
			for b := range got {
				if math.Float64bits(got[b]) != math.Float64bits(want[b]) {
					t.Fatalf("frame %d x%g, band %d: %v, band() gives %v", o, scale, b, got[b], want[b])
				}
			}
			compared++
		}
	}
	if compared < 20 {
		t.Fatalf("%d frames compared", compared)
	}
}

// voiced is a voice's stand-in for the harmonicity: harmonics to 4 kHz of
// a pitch gliding between 90 and 300 Hz, falling 6 dB an octave, in pink
// noise that swells from 30 dB under it to 10 dB over it.
func voiced(n int) []float64 {
	x := testaudio.PinkNoise(n, 0.05, 13)
	var ph float64
	for i := range x {
		tt := float64(i) / fs
		f0 := 195 + 105*math.Sin(2*math.Pi*tt/2.3)
		ph += 2 * math.Pi * f0 / fs
		var v float64
		for h := 1; float64(h)*f0 < 4000; h++ {
			v += math.Sin(float64(h)*ph) / float64(h)
		}
		x[i] *= 0.03 + 3*(1+math.Sin(2*math.Pi*tt/1.7))
		x[i] += 0.1 * v
	}
	return x
}

// The fast harmonicity is the front's to rounding on nearly every frame,
// and never far from it, on a voice in noise and on noise alone.
func TestIsoHarmonicityNear(t *testing.T) {
	x := append(voiced(6*fs), swelling(4*fs)...)
	x = append(x, testaudio.WhiteNoise(2*fs, 0.1, 3)...)
	s := newStaticNoise(fs)
	if s.hf == nil {
		t.Fatal("no fast harmonicity at 48 kHz")
	}
	spec := make([]complex128, s.n/2+1)
	pow := make([]float64, s.n/2+1)
	var worst float64
	exact, lags, frames := 0, 0, 0
	for t0 := 0; t0+s.n <= len(x); t0 += s.hop {
		clear(pow)
		s.forwardPow(spec, pow, x[t0:t0+s.n], s.win)
		want, got := s.front.harmonicity(pow), s.hf.of(pow)
		d := math.Abs(got - want)
		worst = max(worst, d)
		if d < 1e-9 {
			exact++
		}
		// The lag the comb shares are taken at (combShares).
		if s.hf.lag == s.front.lag {
			lags++
		}
		frames++
	}
	t.Logf("%d of %d frames within 1e-9, worst %.4f; %d at the front's lag", exact, frames, worst, lags)
	if worst > 0.03 || float64(exact) < 0.99*float64(frames) {
		t.Errorf("%d of %d frames within 1e-9 of the front's harmonicity, worst off by %.4f", exact, frames, worst)
	}
	if float64(lags) < 0.99*float64(frames) {
		t.Errorf("%d of %d frames at the front's peak lag", lags, frames)
	}
}

// Once the voice activity mask has marked a second of pauses, the profile
// is theirs and Static's from speech presence would be discarded: the
// Profiler stops feeding it, and the profile is the one it gives when fed
// to the end.
func TestStaticNoiseStopsAtPauses(t *testing.T) {
	x := swelling(8 * fs)
	vad := make([]bool, len(x)/BlockFrames(fs)+1)
	for i := range vad {
		vad[i] = i%20 >= 8 // pauses of 8 blocks in 20
	}
	a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, ProfilerOptions{VAD: vad})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(audio.Buffer{x}, fs)); err != nil {
		t.Fatal(err)
	}
	fed := a.sn.next
	p := a.Finish()
	if !a.snDone || !p.FromVAD || p.StaticNoise != nil {
		t.Fatalf("stopped %v, profile from the pauses %v, StaticNoise %v", a.snDone, p.FromVAD, p.StaticNoise != nil)
	}
	if all := int64(len(x) / a.sn.hop); fed > all/2 {
		t.Errorf("fed %d of %d frames", fed, all)
	}
}

// Static's presence profile allocates nothing once made: the network's
// passes and the harmonicity work in its own buffers.
func TestStaticNoiseAllocatesNothing(t *testing.T) {
	x := swelling(4 * fs)
	s := newStaticNoise(fs)
	blk := BlockFrames(fs)
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		s.write(x[i : i+blk])
		i = (i + blk) % (len(x) - blk)
	})
	if s.evals == 0 || allocs != 0 {
		t.Fatalf("%v allocations a block (%d network passes)", allocs, s.evals)
	}
}

// On a mono stream the Profiler takes the power of the frames Static's
// presence profile has transformed already: the profile is the one it
// makes transforming them itself (52 frames of 6 s shared, with the
// profile's runs from the second second on; 70 without runs).
func TestProfilerSharedFramesKeepProfile(t *testing.T) {
	x := swelling(6 * fs)
	vad := slices.Repeat([]bool{true}, len(x)/BlockFrames(fs)+1)
	profile := func(share bool) (*Profile, int) {
		defer func(v bool) { profilerSharesFrames = v }(profilerSharesFrames)
		profilerSharesFrames = share
		a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, ProfilerOptions{VAD: vad})
		if err != nil {
			t.Fatal(err)
		}
		// Runs from the 2nd second on: frames between them are not
		// analysed, and the Profiler transforms those itself.
		a.sn.denseEvals, a.sn.burst, a.sn.period = 4, 3, 10
		if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(audio.Buffer{x}, fs)); err != nil {
			t.Fatal(err)
		}
		return a.Finish(), a.sharedFrames
	}
	want, _ := profile(false)
	got, shared := profile(true)
	if shared == 0 {
		t.Fatal("no frame shared")
	}
	t.Logf("%d frames shared", shared)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("profiles differ:\n%+v\n%+v", got, want)
	}
}
