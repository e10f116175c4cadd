package dsp_test

import (
	"errors"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

func gtMix(t testing.TB, opts dsp.MixOptions, ins ...dsp.MixInput) *dsp.Mix {
	t.Helper()
	m, err := dsp.NewMix(ins, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gtMixInputs are three inputs that overlap, start late and leave a gap:
// mono panned left of centre from 0, stereo 6 dB down from 1000, mono
// again from 9000, after the others have ended.
func gtMixInputs(open func(b audio.Buffer, seed uint64) audio.Source) []dsp.MixInput {
	return []dsp.MixInput{
		{Source: open(audiotest.Noise(1, 5000, 0.5, 1), 1), Pan: -0.4},
		{Source: open(audiotest.Noise(2, 6000, 0.5, 2), 2), GainDB: -6, Offset: 1000},
		{Source: open(audiotest.Sine(1, 48000, 440, 0.5, 3001), 3), GainDB: 3, Pan: 1, Offset: 9000},
	}
}

// gtMixRef computes the mix of gtMixInputs sample by sample from the
// rules in Mix's documentation.
func gtMixRef() audio.Buffer {
	a := audiotest.Noise(1, 5000, 0.5, 1)
	b := audiotest.Noise(2, 6000, 0.5, 2)
	c := audiotest.Sine(1, 48000, 440, 0.5, 3001)
	out := audio.NewBuffer(2, 12001)
	th := (-0.4 + 1) * math.Pi / 4
	for i := range a[0] {
		out[0][i] += math.Cos(th) * a[0][i]
		out[1][i] += math.Sin(th) * a[0][i]
	}
	g := math.Pow(10, -6.0/20)
	for i := range b[0] {
		out[0][1000+i] += g * b[0][i]
		out[1][1000+i] += g * b[1][i]
	}
	g = math.Pow(10, 3.0/20)
	for i := range c[0] {
		out[1][9000+i] += g * c[0][i]
	}
	return out
}

func TestMixContract(t *testing.T) {
	ref := gtMixRef()
	plain := func(b audio.Buffer, _ uint64) audio.Source { return audio.NewBufferSource(b, 48000) }
	got := audiotest.CheckSource(t, func() audio.Source { return gtMix(t, dsp.MixOptions{}, gtMixInputs(plain)...) })
	irregular := func(b audio.Buffer, seed uint64) audio.Source { return gtIrregularSource(b, 48000, seed) }
	irr := gtReadAll(t, gtMix(t, dsp.MixOptions{}, gtMixInputs(irregular)...))
	if got.Frames() != ref.Frames() || irr.Frames() != ref.Frames() {
		t.Fatalf("mix has %d frames (%d with irregular reads), want %d", got.Frames(), irr.Frames(), ref.Frames())
	}
	for c := range ref {
		for i := range ref[c] {
			if math.Abs(got[c][i]-ref[c][i]) > 1e-15 {
				t.Fatalf("channel %d frame %d: %v, want %v", c, i, got[c][i], ref[c][i])
			}
			if irr[c][i] != got[c][i] {
				t.Fatalf("irregular upstream reads change channel %d frame %d", c, i)
			}
		}
	}
	for i := 8000; i < 9000; i++ { // the gap between the inputs
		if got[0][i] != 0 || got[1][i] != 0 {
			t.Fatalf("frame %d of the gap is not silent", i)
		}
	}
}

// The pan law keeps a mono input's power at every position, puts -3 dB on
// each side at the centre, and the stereo-to-mono downmix keeps the
// loudness of a dual-mono recording.
func TestMixPanLaw(t *testing.T) {
	x := audiotest.Sine(1, 48000, 1000, 0.5, 48000)
	p := gtRMS(x[0]) * gtRMS(x[0])
	for _, pan := range []float64{-1, -0.5, 0, 0.3, 1} {
		y := gtReadAll(t, gtMix(t, dsp.MixOptions{Channels: 2}, dsp.MixInput{Source: audio.NewBufferSource(x, 48000), Pan: pan}))
		l, r := gtRMS(y[0])*gtRMS(y[0]), gtRMS(y[1])*gtRMS(y[1])
		if math.Abs(10*math.Log10((l+r)/p)) > 1e-9 {
			t.Errorf("pan %v: power changes by %.2g dB", pan, 10*math.Log10((l+r)/p))
		}
		wantL := math.Pow(math.Cos((pan+1)*math.Pi/4), 2)
		if math.Abs(l/p-wantL) > 1e-9 {
			t.Errorf("pan %v: left has %.4f of the power, want %.4f", pan, l/p, wantL)
		}
		if pan == 0 && (y[0][123] != y[1][123] || math.Abs(gtDB(y[0][123]/x[0][123])+3.0103) > 1e-4) {
			t.Errorf("centre: left %v right %v, want both -3 dB", y[0][123], y[1][123])
		}
	}
	// Stereo balance: unity at the centre, one side silent at the edge.
	st := audiotest.Noise(2, 4800, 0.5, 7)
	y := gtReadAll(t, gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: audio.NewBufferSource(st, 48000)}))
	if gtSNR(st[0], y[0]) < 300 || gtSNR(st[1], y[1]) < 300 {
		t.Error("a stereo input at the centre is not passed unchanged")
	}
	y = gtReadAll(t, gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: audio.NewBufferSource(st, 48000), Pan: 1}))
	if gtRMS(y[0]) != 0 || math.Abs(gtDB(gtRMS(y[1])/gtRMS(st[1]))-3.0103) > 1e-4 {
		t.Errorf("balance fully right: left %v, right %+.3f dB", gtRMS(y[0]), gtDB(gtRMS(y[1])/gtRMS(st[1])))
	}
	// Dual mono into mono keeps the BS.1770 loudness.
	speech := audiotest.Sine(1, 48000, 700, 0.3, 3*48000)
	dual := audio.Buffer{speech[0], speech[0]}
	y = gtReadAll(t, gtMix(t, dsp.MixOptions{Channels: 1}, dsp.MixInput{Source: audio.NewBufferSource(dual, 48000)}))
	a, _ := loudness.MeasureBuffer(dual, 48000, loudness.Options{Mode: loudness.ModeI})
	b, _ := loudness.MeasureBuffer(y, 48000, loudness.Options{Mode: loudness.ModeI})
	if math.Abs(a.Integrated-b.Integrated) > 0.01 {
		t.Errorf("dual mono %.2f LUFS, downmixed %.2f LUFS", a.Integrated, b.Integrated)
	}
}

func TestMixChannels(t *testing.T) {
	mono := audio.NewBufferSource(audiotest.Noise(1, 100, 0.5, 1), 48000)
	st := audiotest.Noise(2, 100, 0.5, 2)
	six := audiotest.Noise(6, 100, 0.5, 3)
	m := gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: mono}, dsp.MixInput{Source: audio.NewBufferSource(st, 48000)},
		dsp.MixInput{Source: audio.NewBufferSource(six, 48000)})
	if f := m.Format(); f.Channels != 6 || f.SampleRate != 48000 {
		t.Fatalf("format %+v, want the largest channel count, 6", f)
	}
	y := gtReadAll(t, m)
	for i := 0; i < 100; i++ { // stereo into 5.1: channels 0 and 1
		if y[4][i] != six[4][i] || math.Abs(y[0][i]-(six[0][i]+st[0][i]+math.Sqrt2/2*audiotest.Noise(1, 100, 0.5, 1)[0][i])) > 1e-15 {
			t.Fatalf("frame %d maps wrongly", i)
		}
	}
	if _, err := dsp.NewMix([]dsp.MixInput{{Source: audio.NewBufferSource(six, 48000)}}, dsp.MixOptions{Channels: 2}); !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Errorf("5.1 into stereo: %v, want ErrInvalidParameter", err)
	}
}

func TestMixEnds(t *testing.T) {
	empty := func() audio.Source { return audio.NewBufferSource(audio.NewBuffer(1, 0), 8000) }
	y := gtReadAll(t, gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: empty()}, dsp.MixInput{Source: empty()}))
	if y.Frames() != 0 {
		t.Errorf("mix of empty inputs has %d frames", y.Frames())
	}
	// An empty input with an offset still reaches its offset.
	y = gtReadAll(t, gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: audio.NewBufferSource(audiotest.Noise(1, 10, 0.5, 1), 8000)},
		dsp.MixInput{Source: empty(), Offset: 777}))
	if y.Frames() != 777 {
		t.Errorf("mix has %d frames, want 777", y.Frames())
	}
}

func TestMixErrors(t *testing.T) {
	src := func(fs int) audio.Source { return audio.NewBufferSource(audiotest.Noise(1, 100, 0.5, 1), fs) }
	for name, c := range map[string]struct {
		ins  []dsp.MixInput
		opts dsp.MixOptions
	}{
		"none":           {nil, dsp.MixOptions{}},
		"nil source":     {[]dsp.MixInput{{}}, dsp.MixOptions{}},
		"rates differ":   {[]dsp.MixInput{{Source: src(48000)}, {Source: src(44100)}}, dsp.MixOptions{}},
		"rate not mix's": {[]dsp.MixInput{{Source: src(48000)}}, dsp.MixOptions{SampleRate: 44100}},
		"pan":            {[]dsp.MixInput{{Source: src(48000), Pan: 1.5}}, dsp.MixOptions{}},
		"pan NaN":        {[]dsp.MixInput{{Source: src(48000), Pan: math.NaN()}}, dsp.MixOptions{}},
		"gain":           {[]dsp.MixInput{{Source: src(48000), GainDB: math.NaN()}}, dsp.MixOptions{}},
		"offset":         {[]dsp.MixInput{{Source: src(48000), Offset: -1}}, dsp.MixOptions{}},
		"channels":       {[]dsp.MixInput{{Source: src(48000)}}, dsp.MixOptions{Channels: 9}},
	} {
		if _, err := dsp.NewMix(c.ins, c.opts); !errors.Is(err, dsp.ErrInvalidParameter) {
			t.Errorf("%s: %v, want ErrInvalidParameter", name, err)
		}
	}
	m := gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: src(48000)})
	if _, err := m.Read(audio.NewBuffer(2, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("stereo buffer for a mono mix: %v", err)
	}
	// An input's error ends the mix after the frames before it.
	bad := gtIrregularSource(audiotest.Noise(1, 3000, 0.5, 2), 48000, 1)
	bad.fail = errGT
	m = gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: src(48000)}, dsp.MixInput{Source: bad, Offset: 50})
	buf := audio.NewBuffer(1, 512)
	total := 0
	var err error
	for err == nil {
		var n int
		n, err = m.Read(buf)
		total += n
	}
	if !errors.Is(err, errGT) || total != 3050 {
		t.Fatalf("after %d frames: %v; want the input's error after 3050", total, err)
	}
	if n, err := m.Read(buf); n != 0 || !errors.Is(err, errGT) {
		t.Fatalf("read after the error: %d, %v", n, err)
	}
	// Close closes every input.
	a, b := &gtCloser{Source: src(48000)}, &gtCloser{Source: src(48000), err: errGT}
	if err := gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: a}, dsp.MixInput{Source: b}).Close(); !errors.Is(err, errGT) || a.closed != 1 || b.closed != 1 {
		t.Fatalf("Close: %v; inputs closed %d and %d times", err, a.closed, b.closed)
	}
}

// An input can be any node: here a resampled input beside a native one,
// ducked by a test node that lowers its gain from a given frame on (what
// a ducking node does, on its own timeline).
func TestMixInputsAreNodes(t *testing.T) {
	voice := audiotest.Sine(1, 48000, 300, 0.5, 48000)
	bed := audiotest.Sine(2, 44100, 100, 0.5, 44100)
	duck := &gtDuck{src: gtResample(t, audio.NewBufferSource(bed, 44100), 48000, dsp.ResampleHigh), from: 4800, gain: 0.25}
	out := gtReadAll(t, gtMix(t, dsp.MixOptions{}, dsp.MixInput{Source: audio.NewBufferSource(voice, 48000)}, dsp.MixInput{Source: duck}))
	bedAt48 := gtReadAll(t, gtResample(t, audio.NewBufferSource(bed, 44100), 48000, dsp.ResampleHigh))
	if out.Frames() != 48000 || bedAt48.Frames() != 48000 {
		t.Fatalf("%d frames, want 48000", out.Frames())
	}
	for c := range out {
		for i := range out[c] {
			g := 1.0
			if i >= 4800 {
				g = 0.25
			}
			if want := math.Sqrt2/2*voice[0][i] + g*bedAt48[c][i]; math.Abs(out[c][i]-want) > 1e-15 {
				t.Fatalf("channel %d frame %d: %v, want %v", c, i, out[c][i], want)
			}
		}
	}
}

// gtDuck multiplies its source by gain from frame from on.
type gtDuck struct {
	src  audio.Source
	pos  int64
	from int64
	gain float64
}

func (d *gtDuck) Format() audio.Format { return d.src.Format() }
func (d *gtDuck) Read(dst audio.Buffer) (int, error) {
	n, err := d.src.Read(dst)
	for i := 0; i < n; i++ {
		if d.pos+int64(i) >= d.from {
			for c := range dst {
				dst[c][i] *= d.gain
			}
		}
	}
	d.pos += int64(n)
	return n, err
}

func TestMixZeroAllocs(t *testing.T) {
	m := gtMix(t, dsp.MixOptions{},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(1, 3000, 0.5, 1), fs: 48000}, Pan: -0.5},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(2, 5000, 0.5, 2), fs: 48000}, Offset: 777},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(1, 7000, 0.5, 3), fs: 48000}, Offset: 10000})
	buf := audio.NewBuffer(2, 4096)
	for range 4 {
		m.Read(buf)
	}
	if a := testing.AllocsPerRun(50, func() {
		if _, err := m.Read(buf); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per Read", a)
	}
}
