package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Real speech over six real talkers' babble and over real music at 5, 10
// and 15 dB SNR (the corpus's NoisySpeech whose clean speech is clean,
// cleanRefDB), through speech_isolation as the product runs it (the
// Profiler with the classifier's voice activity on the noisy input, then
// the Denoiser at the automatic amount, reverb reduction off): the SI-SDR
// gain over the input, each interferer on its own. The issue asks +6 dB;
// isolateWant holds what was measured on the held-out half so that it
// cannot slip back. The plain run takes a third of the mixes (two of
// each kind), -realfull all of them.
func TestRealSpeechIsolation(t *testing.T) {
	c := realCorpus(t)
	var mixes []realaudio.Mix
	for i, m := range c.NoisySpeech() {
		if isNoise(m) || realaudio.FloorBelowDB(m.Clean) < cleanRefDB || (!*realFull && i%3 != 0) {
			continue
		}
		mixes = append(mixes, m)
	}
	gains := make([]float64, len(mixes))
	parallel(len(mixes), func(i int) {
		m := mixes[i]
		p := analyse(t, audio.Buffer{m.Input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{m.Input})})
		y, _ := denoise(t, m.Input, DenoiserOptions{Settings: Settings{Method: SpeechIsolation, DeverbDB: -1}, Profile: p})
		in := testaudio.SISDR(m.Clean, m.Input)
		gains[i] = testaudio.SISDR(m.Clean, y) - in
		t.Logf("%-45s in %5.1f dB: %+.2f", m.ID, in, gains[i])
	})
	want := isolateWant
	if !*realFull {
		want = isolatePlainWant
	}
	for _, kind := range []string{"babble", "music"} {
		var sum float64
		n := 0
		for i, m := range mixes {
			if m.Interferer == kind {
				sum += gains[i]
				n++
			}
		}
		if n == 0 {
			t.Fatalf("no %s mix in the %s half", kind, c.Half)
		}
		g := sum / float64(n)
		t.Logf("%s half, speech_isolation on %s (%d mixes): %+.2f dB SI-SDR (the issue asks +6)", c.Half, kind, n, g)
		if g < want[kind] || math.IsNaN(g) {
			t.Errorf("speech_isolation on %s: %+.2f dB, want %+.1f (the issue asks +6)", kind, g, want[kind])
		}
	}
}

// isolateWant and isolatePlainWant are the mean gains TestRealSpeechIsolation
// asks of the held-out half with -realfull and in the plain run: the
// figures measured there, rounded down (the issue's +6 is not reached).
// Measured with the band gains averaged with those of the band network
// with a state (isorec.go, look 1 after the choice): -realfull babble
// +3.89 dB (5 mixes), music +4.46 (6); plain +4.12/+4.85 (2 each); the
// main it was branched from -realfull +3.80/+4.22. Before it, with
// the per-bin stage's +-8 frames (isofine.go) -realfull +3.80/+4.22.
// With the per-bin stage under 2 kHz (isofine.go): -realfull
// babble +3.78 dB (5 mixes), music +3.97 (6); plain +3.86/+4.50 (2
// each); under 1.5 kHz -realfull +3.81/+3.93, plain +3.96/+4.21. Before
// it, with the network that also sees each band's share on the
// pitch's harmonics (isonet.go's combShares): -realfull babble +2.91 dB
// (5 mixes), music +3.46 (6); plain +3.27/+3.91 (2 each). Before it, with
// the network fitted with ktuberling-data's speakers too
// (isoextra_test.go): -realfull babble +2.68 dB (5 mixes), music +2.72
// (6); plain babble +3.24 (2), music +3.11 (2). Before them, on the
// corpus's speakers alone: -realfull +2.52/+2.61, plain +3.17/+3.04.
// At full weight whatever the amount (the first network):
// -realfull +2.50/+2.39, plain +3.13/+3.04.
// With the hand-made percentile mask before it: -realfull +1.31/+2.08,
// plain +1.73/+2.71; before any mask +0.76 on the two together.
var (
	isolateWant      = map[string]float64{"babble": 3.8, "music": 4.4}
	isolatePlainWant = map[string]float64{"babble": 4.1, "music": 4.8}
)

// The isolator's output lines up with its input, whatever the block size
// it is read with, and a stretch without isolation (weight 0) passes
// unchanged.
func TestIsolatorPassesAndAligns(t *testing.T) {
	x := testaudio.PinkNoise(3*fs, 0.1, 5)
	run := func(w float64, block int) []float64 {
		s := newIsolator(1, fs, func(int64) (float64, float64) { return w, 0.1 })
		r := newHopRunner(audio.NewBufferSource(audio.Buffer{x}, fs), s.hop, s.latency(), s.process)
		out := audio.NewBuffer(1, 0)
		buf := audio.NewBuffer(1, block)
		for {
			n, err := r.Read(buf)
			out[0] = append(out[0], buf[0][:n]...)
			if err != nil {
				break
			}
		}
		return out[0]
	}
	y := run(0, 1000)
	if len(y) != len(x) {
		t.Fatalf("%d frames out of %d", len(y), len(x))
	}
	if d := testaudio.SISDR(x, y); d < 100 {
		t.Errorf("weight 0: SI-SDR %.1f dB against the input, want 100 or more", d)
	}
	a, b := run(1, 1000), run(1, 4321)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("frame %d: %g read in blocks of 1000, %g in blocks of 4321", i, a[i], b[i])
		}
	}
	// Steady noise is the background: the mask takes it down.
	if r := testaudio.DB(a[fs:2*fs]) - testaudio.DB(x[fs:2*fs]); r > -6 {
		t.Errorf("steady pink noise through the mask: %+.1f dB, want -6 or less", r)
	}
}

// The isolator's look-ahead is in the Denoiser's latency, and a causal
// Denoiser (a live stream) goes without it.
func TestIsolatorLatency(t *testing.T) {
	x := audio.Buffer{testaudio.PinkNoise(fs, 0.1, 6)}
	lat := func(m Method, causal bool) int {
		d, err := NewDenoiser(audio.NewBufferSource(x, fs), DenoiserOptions{Settings: Settings{Method: m, DeverbDB: -1}, Causal: causal})
		if err != nil {
			t.Fatal(err)
		}
		return d.Latency()
	}
	// Dynamic's own look-ahead (the noise floor's, msAhead, and its
	// speech presence's, presence.go) is off in a causal Denoiser too, so
	// the causal figures are compared.
	iso, causal := lat(SpeechIsolation, false), lat(SpeechIsolation, true)
	if causalDyn := lat(Dynamic, true); causal != causalDyn {
		t.Errorf("causal speech_isolation: latency %d frames, causal Dynamic's %d", causal, causalDyn)
	}
	if iso < causal+fs/2 {
		t.Errorf("speech_isolation: latency %d frames, want the causal one's %d and half a second of look-ahead", iso, causal)
	}
}

// The network's tanh stays within 1e-4 of math.Tanh, which it was fitted
// with.
func TestTanh32(t *testing.T) {
	worst := 0.0
	for x := -8.0; x < 8; x += 1e-3 {
		worst = max(worst, math.Abs(float64(tanh32(float32(x)))-math.Tanh(x)))
	}
	if worst > 1e-4 {
		t.Errorf("tanh32 within %.2g of math.Tanh, want 1e-4", worst)
	}
}
