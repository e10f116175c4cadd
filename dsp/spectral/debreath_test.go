package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// breathy returns phrases with a breath-like burst in the middle of every
// pause: band-limited noise (300 Hz - 4 kHz), 400 ms with a sin^2
// envelope, 28 dB under the speech, over a -70 dBFS noise floor; and the
// spans of the phrases and of the breaths.
func breathy(t testing.TB) (x []float64, phrases, breaths []audio.Span) {
	clean, spans := speech(t, 5, 1.2)
	x = append([]float64(nil), clean...)
	sp := testaudio.SpanDB(clean, spans)
	r := audiotest.NewRand(77)
	n := int(0.4 * fs)
	for i := 0; i+1 < len(spans); i++ {
		mid := int(spans[i].End+spans[i+1].Start) / 2
		b := make([]float64, n)
		var hp, lp, prev float64
		ah := math.Exp(-2 * math.Pi * 300 / fs)
		al := 1 - math.Exp(-2*math.Pi*4000/fs)
		for j := range b {
			w := r.Gauss()
			hp = ah * (hp + w - prev)
			prev = w
			lp += al * (hp - lp)
			e := math.Sin(math.Pi * float64(j) / float64(n))
			b[j] = lp * e * e
		}
		testaudio.Scale(b, math.Pow(10, (sp-28)/20)/testaudio.RMS(b))
		for j, v := range b {
			x[mid-n/2+j] += v
		}
		breaths = append(breaths, audio.Span{Start: int64(mid - n/2), End: int64(mid + n/2)})
	}
	x = testaudio.Add(x, testaudio.WhiteNoise(len(x), math.Pow(10, -70.0/20), 5))
	return x, spans, breaths
}

// Breaths between phrases are attenuated by the requested amount, the
// speech is left within 1 dB.
func TestDebreath(t *testing.T) {
	x, phrases, breaths := breathy(t)
	// The middle 200 ms of each breath: where it is loud enough to matter.
	core := make([]audio.Span, len(breaths))
	for i, b := range breaths {
		q := (b.End - b.Start) / 4
		core[i] = audio.Span{Start: b.Start + q, End: b.End - q}
	}
	for _, amount := range []float64{6, 12, 24} {
		b, err := NewDebreath(audio.NewBufferSource(audio.Buffer{x}, fs), DebreathOptions{AmountDB: amount})
		if err != nil {
			t.Fatal(err)
		}
		y := testaudio.ReadAll(t, b)[0]
		if len(y) != len(x) {
			t.Fatalf("output %d frames, input %d", len(y), len(x))
		}
		att := testaudio.SpanDB(x, core) - testaudio.SpanDB(y, core)
		sp := testaudio.SpanDB(y, phrases) - testaudio.SpanDB(x, phrases)
		t.Logf("debreath %2.0f dB: %d breaths found of %d, breaths attenuated %.1f dB, speech changed %+.2f dB", amount, len(b.Breaths()), len(breaths), att, sp)
		if math.Abs(att-amount) > 3 {
			t.Errorf("breaths attenuated by %.1f dB, want %.0f±3", att, amount)
		}
		if math.Abs(sp) > 1 {
			t.Errorf("speech level changed by %+.2f dB", sp)
		}
	}
	// Inside the denoiser (Dynamic), measured against the same chain
	// without breath reduction.
	ref, _ := denoise(t, x, DenoiserOptions{Settings: Settings{Method: Dynamic, DeverbDB: -1}})
	y, dn := denoise(t, x, DenoiserOptions{Settings: Settings{Method: Dynamic, DeverbDB: -1, DebreathDB: 12}})
	t.Logf("in the denoiser: %d breaths found; speech level %.1f dBFS", len(dn.brth.Breaths()), dn.brth.speech)
	att := testaudio.SpanDB(ref, core) - testaudio.SpanDB(y, core)
	sp := testaudio.SpanDB(y, phrases) - testaudio.SpanDB(ref, phrases)
	t.Logf("dynamic + debreath 12 dB: breaths attenuated %.1f dB more, speech %+.2f dB", att, sp)
	if math.Abs(att-12) > 3 || math.Abs(sp) > 1 {
		t.Errorf("in the denoiser: breaths %.1f dB (want 12±3), speech %+.2f dB", att, sp)
	}
}

// Speech without breaths loses nothing: fricatives sit against vowels and
// are not taken for breaths.
func TestDebreathSpares(t *testing.T) {
	clean, spans := speech(t, 6, 0.6)
	x := testaudio.Add(clean, testaudio.WhiteNoise(len(clean), 3e-4, 4))
	b, err := NewDebreath(audio.NewBufferSource(audio.Buffer{x}, fs), DebreathOptions{AmountDB: 24})
	if err != nil {
		t.Fatal(err)
	}
	y := testaudio.ReadAll(t, b)[0]
	sd := testaudio.SISDR(x, y)
	t.Logf("%d false breaths, speech level %+.2f dB, SI-SDR %.1f dB", len(b.Breaths()), testaudio.SpanDB(y, spans)-testaudio.SpanDB(x, spans), sd)
	if len(b.Breaths()) > 0 || sd < 40 {
		t.Errorf("breath reduction took %d stretches of breath-free speech (SI-SDR %.1f dB): %v", len(b.Breaths()), sd, b.Breaths())
	}
}

// A breath at the very start of a stream, before any speech, is lowered
// like any other (the attenuation reaching back to frame 0), whatever the
// block size.
func TestDebreathAtStart(t *testing.T) {
	r := audiotest.NewRand(9)
	x := make([]float64, 2*fs)
	n := int(0.3 * fs)
	for i := range n {
		e := math.Sin(math.Pi * float64(i) / float64(n))
		x[i] = 0.003 * r.Gauss() * e * e
	}
	for i := n + fs/5; i < len(x); i++ {
		tt := float64(i) / fs
		for h := 1.0; h <= 5; h++ {
			x[i] += 0.1 / h * math.Sin(2*math.Pi*150*h*tt)
		}
	}
	core := []audio.Span{{Start: int64(n / 4), End: int64(3 * n / 4)}}
	for _, block := range []int{1, 480, 4096} {
		b, err := NewDebreath(audio.NewBufferSource(audio.Buffer{x}, fs), DebreathOptions{AmountDB: 12})
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, 0, len(x))
		buf := audio.NewBuffer(1, block)
		for {
			m, err := b.Read(buf)
			y = append(y, buf[0][:m]...)
			if err != nil {
				break
			}
		}
		if len(y) != len(x) {
			t.Fatalf("block %d: %d frames out, %d in", block, len(y), len(x))
		}
		att := testaudio.SpanDB(x, core) - testaudio.SpanDB(y, core)
		if math.Abs(att-12) > 1 {
			t.Errorf("block %d: breath at the start lowered %.1f dB, want 12 (breaths %v)", block, att, b.Breaths())
		}
	}
}
