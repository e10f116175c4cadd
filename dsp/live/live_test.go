package live_test

import (
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/conversation"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// readAll reads src to the end in blocks of block frames.
func readAll(t testing.TB, src audio.Source, block int) audio.Buffer {
	t.Helper()
	f := src.Format()
	out := audio.NewBuffer(f.Channels, 0)
	buf := audio.NewBuffer(f.Channels, block)
	for {
		n, err := src.Read(buf)
		for c := range out {
			out[c] = append(out[c], buf[c][:n]...)
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestProcessorContract(t *testing.T) {
	in := audio.Buffer(testaudio.SpeechLike(48000, 4, 0.3))
	// A jump of 12 dB half way, so the gains move.
	for c := range in {
		for i := len(in[c]) / 2; i < len(in[c]); i++ {
			in[c][i] *= 4
		}
	}
	for _, tc := range []struct {
		name string
		c    live.Config
	}{
		{"default", live.DefaultConfig()},
		{"denoise+compressor", func() live.Config {
			c := live.DefaultConfig()
			c.Denoise = &spectral.Settings{Method: spectral.Dynamic, DeverbDB: -1}
			c.Compressor = "medium"
			c.MaxTruePeak = -1
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := audiotest.CheckSource(t, func() audio.Source {
				p, err := live.New(audio.NewBufferSource(in, 48000), tc.c)
				if err != nil {
					t.Fatal(err)
				}
				return p
			})
			if out.Frames() != in.Frames() {
				t.Fatalf("%d frames out of %d", out.Frames(), in.Frames())
			}
		})
	}
}

func TestConfigRefusesLookaheadSettings(t *testing.T) {
	c := live.DefaultConfig()
	c.Denoise = &spectral.Settings{Method: spectral.Dynamic}
	if _, err := live.New(audio.NewBufferSource(audio.NewBuffer(1, 10), 48000), c); err == nil {
		t.Fatal("reverb reduction (DeverbDB 0, full) accepted on a live stream")
	}
	c.Denoise = &spectral.Settings{Method: spectral.Dynamic, DeverbDB: -1, DebreathDB: 12}
	if _, err := live.New(audio.NewBufferSource(audio.NewBuffer(1, 10), 48000), c); err == nil {
		t.Fatal("breath reduction accepted on a live stream")
	}
}

// trickle is a live input: it delivers block frames per Read and counts
// what it delivered.
type trickle struct {
	b     audio.Buffer
	rate  int
	pos   int
	block int
}

func (s *trickle) Format() audio.Format { return audio.Format{SampleRate: s.rate, Channels: len(s.b)} }
func (s *trickle) Read(dst audio.Buffer) (int, error) {
	if s.pos >= s.b.Frames() {
		return 0, io.EOF
	}
	n := min(dst.Frames(), s.block, s.b.Frames()-s.pos)
	for c := range dst {
		copy(dst[c][:n], s.b[c][s.pos:s.pos+n])
	}
	s.pos += n
	return n, nil
}

// TestLatency sends impulses through the whole graph (denoiser included)
// fed 10 ms at a time, as a live input arrives, and measures for each how
// much input had to arrive before the output frame that carries it came
// out: the processing latency, ffmpeg's and the network's buffers apart.
// The output must carry each impulse at its own frame (the delays are
// compensated inside).
func TestLatency(t *testing.T) {
	const rate = 48000
	for _, tc := range []struct {
		name    string
		denoise bool
	}{{"default", false}, {"denoise", true}} {
		t.Run(tc.name, func(t *testing.T) {
			in := audio.NewBuffer(2, 6*rate)
			noise := testaudio.PinkNoise(in.Frames(), 0.01, 3)
			copy(in[0], noise)
			copy(in[1], noise)
			var at []int
			for k := 0; k < 40; k++ {
				i := 2*rate + k*(rate/10+37) // at every phase of the hops
				in[0][i], in[1][i] = 0.5, 0.5
				at = append(at, i)
			}
			c := live.DefaultConfig()
			if tc.denoise {
				c.Denoise = &spectral.Settings{Method: spectral.Dynamic, DeverbDB: -1, ReductionDB: 6}
			}
			src := &trickle{b: in, rate: rate, block: rate / 100}
			p, err := live.New(src, c)
			if err != nil {
				t.Fatal(err)
			}
			// arrived[j] is how much input had arrived when output frame j
			// came out.
			arrived := make([]int, 0, in.Frames())
			out := audio.NewBuffer(2, 0)
			buf := audio.NewBuffer(2, rate/100)
			for {
				n, err := p.Read(buf)
				for i := 0; i < n; i++ {
					arrived = append(arrived, src.pos)
				}
				for ch := range out {
					out[ch] = append(out[ch], buf[ch][:n]...)
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			worst := 0
			for _, i := range at {
				// The impulse stands out of the noise at its own frame.
				if out[0][i] < 0.05 || math.Abs(out[0][i]) < 5*math.Abs(out[0][i-3]) {
					t.Fatalf("impulse at %d not at its frame: %v around it", i, out[0][i-3:i+4])
				}
				worst = max(worst, arrived[i]-(i+1))
			}
			ms := 1000 * float64(worst) / rate
			t.Logf("latency: at most %.1f ms of input before an impulse comes out (graph look-ahead %d frames)", ms, p.Latency())
			if ms > 100 {
				t.Errorf("latency %.1f ms, want at most 100", ms)
			}
		})
	}
}

// turnTaking is the level-jump programme of the acceptance tests.
func turnTaking(t testing.TB, rate int, seconds float64) ([]float64, []audio.Span, []testaudio.Turn) {
	return testaudio.Conversation(t, rate, seconds, 4, 0.4, []float64{0, 12, 0, -12}, -40)
}

// TestLevelJumps is the acceptance test of the leveler and loudness
// control on speech whose level jumps by +12 and -12 dB between speakers
// (espeak-ng voices over pink noise 40 dB down): 5 s after each jump the
// short-term loudness is within 2 LU of the target, the integrated
// loudness within 1 LU, the true peak under maxpeak, and the pauses are
// not raised (the speech-to-pause ratio changes by less than 1 dB). The
// plain run plays 60 s (four jumps, both ways); AUDIOPOST_LIVE_SECONDS=600
// or AUDIOPOST_LONG=1 the ten minutes.
func TestLevelJumps(t *testing.T) {
	const rate = 48000
	seconds := liveSeconds(60)
	in, spans, turns := turnTaking(t, rate, seconds)
	c := live.DefaultConfig()
	c.TargetLUFS, c.MaxTruePeak = -16, -1
	p, err := live.New(audio.NewBufferSource(audio.Buffer{in}, rate), c)
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(t, p, 480)[0]
	f := conversation.Measure(t, in, out, rate, spans, turns, c.TargetLUFS, false)
	// The measure can fail: the input itself, brought to the target as a
	// whole, misses it by the jumps.
	ri, err := loudness.MeasureBuffer(audio.Buffer{in}, rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	plain := testaudio.Scale(append([]float64(nil), in...), math.Pow(10, (c.TargetLUFS-ri.Integrated)/20))
	if fi := conversation.Measure(t, in, plain, rate, spans, turns, c.TargetLUFS, false); fi.WorstJump < 5 {
		t.Fatalf("the unleveled input is only %.2f LU off 5 s after a jump: the test measures nothing", fi.WorstJump)
	}
	t.Logf("%.0f s, %d jumps of 12 dB: short-term 5 s after a jump at most %.2f LU off the target, integrated %.2f LUFS (target %.0f), true peak %.2f dBTP (max %.0f), speech-to-pause ratio changed by %+.2f dB, short-term spread %.2f LU",
		seconds, len(turns)-1, f.WorstJump, f.Integrated, c.TargetLUFS, f.TruePeak, c.MaxTruePeak, f.RatioChange, f.ShortTermSpread)
	if f.WorstJump > 2 {
		t.Errorf("short-term loudness 5 s after a jump %.2f LU off the target, want at most 2", f.WorstJump)
	}
	if math.Abs(f.Integrated-c.TargetLUFS) > 1 {
		t.Errorf("integrated %.2f LUFS, want within 1 LU of %v", f.Integrated, c.TargetLUFS)
	}
	if f.TruePeak > c.MaxTruePeak {
		t.Errorf("true peak %.2f dBTP above %v", f.TruePeak, c.MaxTruePeak)
	}
	if math.Abs(f.RatioChange) > 1 {
		t.Errorf("speech-to-pause ratio changed by %.2f dB, want within 1", f.RatioChange)
	}
}

// TestLevelerPauseMakeup: a voice that pauses 0.6 s between sentences of
// 2 s (testaudio.SynthVoice; codec2's big_dog of the held-out half has
// that pattern) is about 1 dB quieter in every 3 s short-term window than
// in its speech. The leveler gives it that much more gain than the same
// voice with its pauses cut out (1.70 dB; 0.70 without the pause makeup,
// from the level's momentary windows that end in a pause), its pauses
// keep their ratio to the speech, and speech-shaped noise without pauses
// is brought to the target, not above.
func TestLevelerPauseMakeup(t *testing.T) {
	const rate, seconds, target = 48000, 26, -16.0
	voice := testaudio.SynthVoice(rate, seconds, 120, 1)
	// The pauses are digital silence in SynthVoice; cut out, the voice
	// talks on.
	var talk []float64
	for i := 0; i+480 <= len(voice); i += 480 {
		for _, x := range voice[i : i+480] {
			if x != 0 {
				talk = append(talk, voice[i:i+480]...)
				break
			}
		}
	}
	withNoise := func(x []float64, seed uint64) []float64 {
		n := testaudio.PinkNoise(len(x), 0.0003, seed) // about 50 dB under the voice
		y := make([]float64, len(x))
		for i := range y {
			y[i] = x[i] + n[i]
		}
		return y
	}
	level := func(in []float64) []float64 {
		lv, err := live.NewLeveler(audio.NewBufferSource(audio.Buffer{in}, rate), live.LevelerOptions{Strength: 1, Normalize: true, TargetLUFS: target})
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, lv, 480)[0]
	}
	// gain returns the mean gain in dB from 10 s on over the 10 ms frames
	// of speech and over those of the pauses of voice (x's clean speech).
	gain := func(x, in, out []float64) (speech, pause float64) {
		var gs, gp float64
		var ns, np int
		for i := 10 * rate; i+480 <= len(x); i += 480 {
			var v, a, b float64
			for k := i; k < i+480; k++ {
				v += x[k] * x[k]
				a += in[k] * in[k]
				b += out[k] * out[k]
			}
			g := 10 * math.Log10(b/a)
			switch {
			case v == 0:
				gp += g
				np++
			case v/480 > 1e-4:
				gs += g
				ns++
			}
		}
		return gs / float64(max(ns, 1)), gp / float64(max(np, 1))
	}
	in, cut := withNoise(voice, 2), withNoise(talk, 2)
	gv, gp := gain(voice, in, level(in))
	gt, _ := gain(talk, cut, level(cut))
	t.Logf("speech gain %.2f dB with its pauses, %.2f dB with them cut out; pauses %+.2f dB against the speech", gv, gt, gp-gv)
	if d := gv - gt; d < 1.2 || d > 2.2 {
		t.Errorf("the pausing voice got %.2f dB more than without its pauses, want 1.2-2.2 (0.7 without the makeup)", d)
	}
	if math.Abs(gp-gv) > 1 {
		t.Errorf("pauses %.2f dB against the speech's gain, want within 1", gp-gv)
	}
	// Without pauses, the short-term loudness is the target.
	steady := testaudio.PinkNoise(len(voice), 0.03, 3)
	var steps []float64
	m, err := loudness.NewMeter(audio.Format{SampleRate: rate, Channels: 1}, loudness.Options{Mode: loudness.ModeM, OnStep: func(e float64) { steps = append(steps, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(audio.Buffer{level(steady)}); err != nil {
		t.Fatal(err)
	}
	st := loudness.WindowLoudness(steps, loudness.ShortTermSteps)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range st[100:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	t.Logf("steady speech-shaped noise: short-term %.2f to %.2f LUFS from 10 s on", lo, hi)
	if lo < target-0.5 || hi > target+0.5 {
		t.Errorf("steady noise leveled to %.2f..%.2f LUFS, want within 0.5 LU of %v", lo, hi, target)
	}
}
