package spectral

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// breathCase is speech with labelled breaths and the word onsets after
// them, as realaudio.Breathy gives them.
type breathCase struct {
	id      string
	input   []float64
	breaths []audio.Span
	words   []audio.Span
}

// debreathFigures runs Debreath at amount over every case and returns the
// mean, least and greatest reduction of the breaths (each one's level
// before less after over its span), the largest change of a word onset's
// level, the largest change of the level of everything but the breaths
// (the speech, 100 ms clear of each breath) in a piece, and how many
// breaths the node reported.
func debreathFigures(t testing.TB, cases []breathCase, amount float64) (mean, lo, hi, word, rest float64, found, n int) {
	t.Helper()
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range cases {
		d, err := NewDebreath(audio.NewBufferSource(audio.Buffer{c.input}, fs), DebreathOptions{AmountDB: amount})
		if err != nil {
			t.Fatal(err)
		}
		y := testaudio.ReadAll(t, d)[0]
		found += len(d.Breaths())
		for i, br := range c.breaths {
			sp := []audio.Span{br}
			red := testaudio.SpanDB(c.input, sp) - testaudio.SpanDB(y, sp)
			mean += red
			lo, hi = min(lo, red), max(hi, red)
			w := []audio.Span{c.words[i]}
			word = max(word, math.Abs(testaudio.SpanDB(c.input, w)-testaudio.SpanDB(y, w)))
			n++
		}
		var near []audio.Span
		for _, br := range c.breaths {
			near = append(near, audio.Span{Start: max(0, br.Start-fs/10), End: min(int64(len(y)), br.End+fs/10)})
		}
		others := testaudio.Complement(near, len(y), 0)
		rest = max(rest, math.Abs(testaudio.SpanDB(c.input, others)-testaudio.SpanDB(y, others)))
	}
	return mean / float64(max(n, 1)), lo, hi, word, rest, found, n
}

// Issue 30: the real inhalations labelled in the held-out half
// (realaudio.Breathy: a radio amateur's conversation, the one recording
// of the corpus's packages that breathes audibly) are reduced by the
// amount asked within 3 dB on average, for 6, 12 and 24 dB, and the 200 ms
// after each (the word onset) and the rest of each piece (the speech, 100 ms
// clear of the breaths) change by 1 dB at most. The tuning half has
// no breathing speaker: with -realhalf tuning the test runs on
// tuningBreaths instead.
func TestRealDebreath(t *testing.T) {
	c := realCorpus(t)
	var cases []breathCase
	bs, err := c.Breathy()
	switch {
	case errors.Is(err, realaudio.ErrNoMaterial):
		cases = tuningBreaths(t, c)
	case err != nil:
		t.Fatal(err)
	default:
		for _, b := range bs {
			bc := breathCase{id: b.ID, input: b.Input}
			for i, br := range b.Breaths {
				bc.breaths = append(bc.breaths, audio.Span{Start: br.Start, End: br.End})
				bc.words = append(bc.words, audio.Span{Start: b.Words[i].Start, End: b.Words[i].End})
			}
			cases = append(cases, bc)
		}
	}
	for _, amount := range []float64{6, 12, 24} {
		mean, lo, hi, word, rest, found, n := debreathFigures(t, cases, amount)
		t.Logf("%s half, %d breaths in %d pieces, %2.0f dB asked: breaths reduced %.2f dB (%.1f to %.1f), word onsets changed %.2f dB at most, the rest %.2f dB, %d breaths found by the node",
			c.Half, n, len(cases), amount, mean, lo, hi, word, rest, found)
		if math.Abs(mean-amount) > 3 {
			t.Errorf("%.0f dB asked: breaths reduced %.1f dB on average, want within 3 dB", amount, mean)
		}
		if word > 1 || rest > 1 {
			t.Errorf("%.0f dB asked: a word onset changed by %.2f dB, the rest of a piece by %.2f dB, want 1 dB at most", amount, word, rest)
		}
	}
}

// tuningBreaths is the tuning half's stand-in for breathing speech: its
// real speech (the French and Italian prompts, five to a piece; the
// English of codec2-examples; klettres's Danish and English words) joined
// by pauses of 0.5 to 1.2 s, over a pink noise floor 25 to 60 dB under the
// speech, with a synthesized inhalation in every pause: noise through the
// resonances of an open vocal tract (about 600, 1400 and 2500 Hz) over a
// rise from 200 Hz, 200 to 800 ms long, rising in 30% of it and fading in
// 40%, its loudest 10 ms 10 to 30 dB under the speech (speechDB of the
// phrases) and 8 dB or more over the floor, ending 80 to 300 ms before the
// next phrase (every third 20 to 80 ms before it); every other one starts
// within 50 ms of the end of the phrase before. The labels are the
// breath's span; the word onset is the 200 ms from the first 10 ms frame
// of the phrase within 25 dB of its loudest.
func tuningBreaths(t testing.TB, c *realaudio.Corpus) []breathCase {
	t.Helper()
	r := audiotest.NewRand(30)
	var groups [][][]float64
	for _, us := range c.Speakers {
		var g [][]float64
		switch sp := us[0].Speaker; {
		case sp == "asterisk/june" || sp == "asterisk/carlo":
			for i := 0; i < 10; i++ {
				g = append(g, us[i].Samples)
				if len(g) == 5 {
					groups = append(groups, g)
					g = nil
				}
			}
		case sp == "klettres/da" || sp == "klettres/en":
			for i := 0; i < 6 && i < len(us); i++ {
				g = append(g, us[i].Samples)
			}
			groups = append(groups, g)
		}
	}
	var cg [][]float64
	for _, us := range c.Speakers {
		if sp := us[0].Speaker; len(sp) > 7 && sp[:7] == "codec2/" && len(us[0].Samples) > 2*fs {
			cg = append(cg, us[0].Samples)
		}
	}
	if len(cg) > 1 {
		groups = append(groups, cg)
	}
	var out []breathCase
	for gi, g := range groups {
		bc := breathCase{id: fmt.Sprintf("%s/breaths%d", c.Half, gi)}
		var x []float64
		var phrases []audio.Span
		for i, u := range g {
			if i > 0 {
				x = append(x, make([]float64, int((0.5+0.7*r.Uniform())*fs))...)
			}
			phrases = append(phrases, audio.Span{Start: int64(len(x)), End: int64(len(x) + len(u))})
			x = append(x, u...)
		}
		var said []float64
		for _, ph := range phrases {
			said = append(said, x[ph.Start:ph.End]...)
		}
		speech := speechDB(said)
		floorDB := speech - 25 - 35*r.Uniform()
		floor := testaudio.PinkNoise(len(x), math.Pow(10, floorDB/20), uint64(gi+1))
		for i := range x {
			x[i] += floor[i]
		}
		for i := 1; i < len(phrases); i++ {
			// Half the breaths follow the phrase before at once (its last
			// frame within 40 dB of its loudest), as in conversation.
			prev := x[phrases[i-1].Start:phrases[i-1].End]
			last := int(phrases[i-1].Start) + lastActive(prev)
			gap := int((0.08 + 0.22*r.Uniform()) * fs)
			if i%3 == 0 {
				// The phrase follows closely: its first sounds, a
				// consonant or the rise of a vowel, right after the breath.
				gap = int((0.02 + 0.06*r.Uniform()) * fs)
			}
			n := int((0.2 + 0.6*r.Uniform()) * fs)
			end := int(phrases[i].Start) - gap
			start := max(end-n, int(phrases[i-1].End)+fs/20)
			if i%2 == 0 {
				start = last + int(0.05*r.Uniform()*fs)
				end = min(end, start+n)
			}
			if end-start < fs/5 {
				continue
			}
			b := breathNoise(r, end-start)
			under := min(10+20*r.Uniform(), speech-floorDB-8)
			testaudio.Scale(b, math.Pow(10, (speech-under-percentileDB(b, 1))/20))
			for j, v := range b {
				x[start+j] += v
			}
			bc.breaths = append(bc.breaths, audio.Span{Start: int64(start), End: int64(end)})
			ph := x[phrases[i].Start:phrases[i].End]
			top := percentileDB(ph, 1)
			w := int(phrases[i].Start)
			for j := 0; j+fs/100 <= len(ph); j += fs / 100 {
				if testaudio.DB(ph[j:j+fs/100]) > top-25 {
					w += j
					break
				}
			}
			bc.words = append(bc.words, audio.Span{Start: int64(w), End: int64(w + fs/5)})
		}
		bc.input = x
		if len(bc.breaths) > 0 {
			out = append(out, bc)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s half: no speech to put breaths in", c.Half)
	}
	return out
}

// breathNoise returns n samples of inhalation-like noise (see
// tuningBreaths).
func breathNoise(r *audiotest.Rand, n int) []float64 {
	type bq struct{ b0, b2, a1, a2, x1, x2, y1, y2 float64 }
	res := func(f, q float64) *bq {
		w := 2 * math.Pi * f / fs
		al := math.Sin(w) / (2 * q)
		a0 := 1 + al
		return &bq{b0: al / a0, b2: -al / a0, a1: -2 * math.Cos(w) / a0, a2: (1 - al) / a0}
	}
	bands := []*bq{res(600, 2), res(1400, 3), res(2500, 3)}
	gains := []float64{1, 0.8, 0.5}
	x := make([]float64, n)
	var hp, prev float64
	ah := math.Exp(-2 * math.Pi * 200 / fs)
	rise, fall := int(0.3*float64(n)), int(0.4*float64(n))
	for i := range x {
		w := r.Gauss()
		var v float64
		for k, f := range bands {
			y := f.b0*w + f.b2*f.x2 - f.a1*f.y1 - f.a2*f.y2
			f.x2, f.x1 = f.x1, w
			f.y2, f.y1 = f.y1, y
			v += gains[k] * y
		}
		hp = ah * (hp + v - prev)
		prev = v
		e := 1.0
		switch {
		case i < rise:
			e = math.Sin(0.5 * math.Pi * float64(i) / float64(rise))
		case i >= n-fall:
			e = math.Sin(0.5 * math.Pi * float64(n-i) / float64(fall))
		}
		x[i] = hp * e * e
	}
	return x
}

// percentileDB returns the q-quantile of x's 10 ms levels, dBFS.
func percentileDB(x []float64, q float64) float64 {
	const w = fs / 100
	var lv []float64
	for i := 0; i+w <= len(x); i += w {
		lv = append(lv, testaudio.DB(x[i:i+w]))
	}
	if len(lv) == 0 {
		return math.Inf(-1)
	}
	sort.Float64s(lv)
	return lv[min(len(lv)-1, int(q*float64(len(lv))))]
}

// speechDB is the 90th percentile of the 10 ms levels of x within 40 dB of
// its loudest: the level realaudio labels breaths against, without the
// silences of isolated words.
func speechDB(x []float64) float64 {
	const w = fs / 100
	top := percentileDB(x, 1)
	var act []float64
	for i := 0; i+w <= len(x); i += w {
		if testaudio.DB(x[i:i+w]) > top-40 {
			act = append(act, x[i:i+w]...)
		}
	}
	return percentileDB(act, 0.9)
}

// lastActive returns the end of the last 10 ms frame of x within 40 dB of
// its loudest.
func lastActive(x []float64) int {
	const w = fs / 100
	top := percentileDB(x, 1)
	end := 0
	for i := 0; i+w <= len(x); i += w {
		if testaudio.DB(x[i:i+w]) > top-40 {
			end = i + w
		}
	}
	return end
}

// Real speech without audible breaths (the half's clean clips, every
// sixth in the plain run, all with -realfull) through Debreath at 24 dB:
// its level changes by 1 dB at most, and by 0.1 dB at most on average.
func TestRealDebreathSpares(t *testing.T) {
	c := realCorpus(t)
	clips := c.Clips()
	step := 6
	if *realFull {
		step = 1
	}
	var worst, sum float64
	n, found := 0, 0
	for i := 0; i < len(clips); i += step {
		x := clips[i].Samples
		d, err := NewDebreath(audio.NewBufferSource(audio.Buffer{x}, fs), DebreathOptions{AmountDB: 24})
		if err != nil {
			t.Fatal(err)
		}
		y := testaudio.ReadAll(t, d)[0]
		ch := math.Abs(testaudio.DB(x) - testaudio.DB(y))
		if testing.Verbose() && len(d.Breaths()) > 0 {
			t.Logf("%-24s %d stretches lowered, level %.3f dB", clips[i].ID, len(d.Breaths()), ch)
		}
		worst, sum = max(worst, ch), sum+ch
		found += len(d.Breaths())
		n++
	}
	t.Logf("%s half, %d clean clips, 24 dB asked: %d stretches lowered, level changed %.3f dB on average, %.3f dB at most", c.Half, n, found, sum/float64(n), worst)
	if worst > 1 || sum/float64(n) > 0.1 {
		t.Errorf("clean speech through debreath: level changed %.3f dB at most, %.3f dB on average; want 1 and 0.1 at most", worst, sum/float64(n))
	}
}
