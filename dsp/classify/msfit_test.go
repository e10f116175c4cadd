package classify

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// Fitting the speech/music model. msmodel.go is written by
//
//	go test ./dsp/classify -run TestFitSpeechMusic -fit
//
// from the tuning half of the real-recording corpus only: programmes
// that alternate its speech (plain, or over a bed of its music 12 to 20
// dB under the voice) with 10 to 15 s excerpts of its music, a third of
// them two pieces played at once (drums with a band), a third low-passed
// at 3.6 kHz so that the model cannot take a recording's bandwidth for
// its kind, and a third of the programmes under a real noise 25 to 35 dB
// down. Every block at least half a second
// from a change is an example. The network is fitted by Adam on
// mini-batches with a fixed seed, so the same corpus gives the same
// weights. Before the final fit on all of it, the material is split in
// two (speakers alternately, every piece of music by time halves) and a
// model fitted on each half classifies the other's programmes: the
// cross-validated share of seconds the fit logs.

var fitModel = flag.Bool("fit", false, "TestFitSpeechMusic: fit the speech/music model on the tuning half and write msmodel.go")

// fitMaterial is speech and music a set of training programmes is made
// from.
type fitMaterial struct {
	clips []realaudio.Clip
	music []realaudio.Music
	noise []realaudio.Noise
}

// fitHalves splits the tuning half's material in two: speakers
// alternately in sorted order, every piece of music and every noise by
// time halves.
func fitHalves(c *realaudio.Corpus) [2]fitMaterial {
	var out [2]fitMaterial
	var speakers []string
	for _, cl := range c.Clips() {
		if !slices.Contains(speakers, cl.Speaker) {
			speakers = append(speakers, cl.Speaker)
		}
	}
	sort.Strings(speakers)
	for _, cl := range c.Clips() {
		k := slices.Index(speakers, cl.Speaker) % 2
		out[k].clips = append(out[k].clips, cl)
	}
	for _, m := range c.Music {
		h := len(m.Samples) / 2
		a, b := m, m
		a.Samples, b.Samples = m.Samples[:h], m.Samples[h:]
		out[0].music = append(out[0].music, a)
		out[1].music = append(out[1].music, b)
	}
	for _, n := range c.Noises {
		h := len(n.Samples) / 2
		a, b := n, n
		a.Samples, b.Samples = n.Samples[:h], n.Samples[h:]
		out[0].noise = append(out[0].noise, a)
		out[1].noise = append(out[1].noise, b)
	}
	return out
}

// fitProgramme is a training programme: the signal, the truth per block
// (true for music) and per whole second, and the switches in frames.
type fitProgramme struct {
	x        []float64
	music    []bool
	seconds  []bool
	switches []int64
	// parts names the material of each span, where the maker keeps it
	// (bedProgrammes), for switchLines.
	parts []string
	// spans are the parts, in frames, with their labels.
	spans []span
}

// fitProgrammes makes n programmes of ten speech and ten music parts from
// m, with the seed.
func fitProgrammes(m fitMaterial, n int, seed uint64, augment bool) []fitProgramme {
	const fs = realaudio.Rate
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var out []fitProgramme
	for range n {
		var x []float64
		var spans []span
		add := func(part []float64, label string) {
			fadeIO(part, fs/50)
			spans = append(spans, span{len(x), len(x) + len(part), label})
			x = append(x, part...)
		}
		for range 10 {
			cl := m.clips[r.IntN(len(m.clips))]
			sp := slices.Clone(cl.Samples)
			if r.IntN(2) == 0 {
				mu := m.music[r.IntN(len(m.music))]
				bed := loopFrom(mu.Samples, len(sp), r.IntN(len(mu.Samples)))
				under := realaudio.BedBelowDB
				if augment {
					under = 12 + 8*r.Float64()
				}
				g := math.Sqrt(realaudio.ActiveLevel(sp) * math.Pow(10, -under/10) / meanSquare(bed))
				for j := range sp {
					sp[j] += g * bed[j]
				}
			}
			add(sp, "speech")
			mu := m.music[r.IntN(len(m.music))]
			part := loopFrom(mu.Samples, int((10+5*r.Float64())*fs), r.IntN(len(mu.Samples)))
			if augment && r.IntN(3) == 0 {
				// Two pieces at once, the second 0 to 8 dB under the
				// first: drums with a band, a band with a choir.
				mu2 := m.music[r.IntN(len(m.music))]
				second := loopFrom(mu2.Samples, len(part), r.IntN(len(mu2.Samples)))
				g := math.Sqrt(meanSquare(part) / meanSquare(second) * math.Pow(10, -8*r.Float64()/10))
				for j := range part {
					part[j] += g * second[j]
				}
			}
			if augment && r.IntN(3) == 0 {
				part = lowPassed(part, fs, 3600)
			}
			g := math.Sqrt(math.Pow(10, (realaudio.SpeechDB+6*(r.Float64()-0.5))/10) / realaudio.ActiveLevel(part))
			for j := range part {
				part[j] *= g
			}
			add(part, "music")
		}
		if augment && r.IntN(3) == 0 && len(m.noise) > 0 {
			// Real noise 25 to 35 dB under the speech.
			nz := m.noise[r.IntN(len(m.noise))]
			bg := loopFrom(nz.Samples, len(x), r.IntN(len(nz.Samples)))
			g := math.Sqrt(math.Pow(10, (realaudio.SpeechDB-25-10*r.Float64())/10) / meanSquare(bg))
			for j := range x {
				x[j] += g * bg[j]
			}
		}
		p := fitProgramme{x: x}
		bl := BlockLen(fs)
		for b := 0; b*bl < len(x); b++ {
			p.music = append(p.music, labelAt(spans, b*bl+bl/2) == "music")
		}
		p.setTruth(spans)
		out = append(out, p)
	}
	return out
}

// setTruth marks each whole second of p music when music plays over half
// of it, and the switches at the starts of all spans but the first.
func (p *fitProgramme) setTruth(spans []span) {
	const fs = realaudio.Rate
	p.spans = spans
	for s := 0; (s+1)*fs <= len(p.x); s++ {
		mus := 0
		for _, g := range spans {
			if g.label == "music" {
				mus += max(0, min(g.end, (s+1)*fs)-max(g.start, s*fs))
			}
		}
		p.seconds = append(p.seconds, 2*mus >= fs)
	}
	for _, g := range spans[1:] {
		p.switches = append(p.switches, int64(g.start))
	}
}

func labelAt(spans []span, i int) string {
	for _, s := range spans {
		if i >= s.start && i < s.end {
			return s.label
		}
	}
	return ""
}

// loopFrom returns n samples of x from offset on, looped.
func loopFrom(x []float64, n, offset int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x[(offset+i)%len(x)]
	}
	return out
}

func meanSquare(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s / float64(max(1, len(x)))
}

// fadeIO ramps the first and last n samples in and out.
func fadeIO(x []float64, n int) {
	n = min(n, len(x)/2)
	for i := range n {
		g := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(n))
		x[i] *= g
		x[len(x)-1-i] *= g
	}
}

// lowPassed returns x through a fourth-order Butterworth low-pass at fc.
func lowPassed(x []float64, fs, fc float64) []float64 {
	y := slices.Clone(x)
	for _, q := range []float64{0.5412, 1.3066} {
		bq := lowPass(fs, fc, q)
		for i, v := range y {
			o := bq.b0*v + bq.b1*bq.x1 + bq.b2*bq.x2 - bq.a1*bq.y1 - bq.a2*bq.y2
			bq.x2, bq.x1, bq.y2, bq.y1 = bq.x1, v, bq.y1, o
			y[i] = o
		}
	}
	return y
}

// fitSet is the examples of a set of programmes.
type fitSet struct {
	x [][nMSFeatures]float64
	y []float64 // 1 music, 0 speech (or the share of music)
}

// examples analyses the programmes and returns their examples: the
// features of every block whose window holds sound, at least half a second
// from a change.
func examples(t testing.TB, ps []fitProgramme) fitSet {
	var set fitSet
	for _, p := range ps {
		r := analyse(t, p.x, Auto)
		w := &msWindow{r: r}
		ns := r.feats.len()
		for b := range p.music {
			clean := true
			for k := max(0, b-5); k < min(len(p.music), b+6); k++ {
				clean = clean && p.music[k] == p.music[b]
			}
			if !clean {
				continue
			}
			lo, hi := max(0, (b-evidenceHalf)*SubBlocks), min(ns, (b+evidenceHalf+1)*SubBlocks)
			if x, ok := w.features(lo, hi); ok {
				set.x = append(set.x, x)
				set.y = append(set.y, b2f(p.music[b]))
			}
		}
	}
	return set
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// hiddenOutDecay is the extra L2 penalty on the hidden units' output
// weights: it keeps the hidden layer a correction to the linear part, so
// that far from anything the model was fitted on the linear part decides.
const hiddenOutDecay = 0.03

// fitNet fits an msNet to the set: weighted cross-entropy with the
// classes weighted equally (a target between 0 and 1 weighs in as that
// share of music), an L2 penalty on the weights, Adam on
// mini-batches of 256 in an order the seed shuffles.
func fitNet(set fitSet, seed uint64) msNet {
	const (
		epochs = 15
		batch  = 256
		lambda = 1e-3
		beta1  = 0.9
		beta2  = 0.999
	)
	n := len(set.x)
	var m msNet
	for i := range nMSFeatures {
		var s, ss float64
		for _, x := range set.x {
			s += x[i]
		}
		mean := s / float64(n)
		for _, x := range set.x {
			ss += (x[i] - mean) * (x[i] - mean)
		}
		m.mean[i], m.scale[i] = mean, math.Sqrt(ss/float64(n))
		if m.scale[i] == 0 {
			m.scale[i] = 1
		}
	}
	z := make([][nMSFeatures]float64, n)
	for k, x := range set.x {
		for i, v := range x {
			z[k][i] = (v - m.mean[i]) / m.scale[i]
		}
	}
	var pos float64
	for _, y := range set.y {
		pos += y
	}
	wMusic, wSpeech := float64(n)/(2*pos), float64(n)/(2*(float64(n)-pos))

	r := rand.New(rand.NewPCG(seed, 0xf17))
	for h := range msHidden {
		for i := range nMSFeatures {
			m.w1[h][i] = r.NormFloat64() / math.Sqrt(nMSFeatures)
		}
		m.w2[h] = r.NormFloat64() / math.Sqrt(msHidden)
	}
	// The parameters as one vector, for Adam: the hidden layer's weights
	// and biases, the output's weights and bias, the linear part.
	const nh = msHidden*nMSFeatures + 2*msHidden + 1
	const np = nh + nMSFeatures
	param := func(k int) *float64 {
		switch {
		case k >= nh:
			return &m.lin[k-nh]
		case k < msHidden*nMSFeatures:
			return &m.w1[k/nMSFeatures][k%nMSFeatures]
		case k < msHidden*nMSFeatures+msHidden:
			return &m.b1[k-msHidden*nMSFeatures]
		case k < nh-1:
			return &m.w2[k-msHidden*nMSFeatures-msHidden]
		}
		return &m.b2
	}
	decayed := func(k int) bool {
		return k < msHidden*nMSFeatures || (k >= msHidden*nMSFeatures+msHidden && k != nh-1)
	}
	var grad, mom, vel [np]float64
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	lr := 0.01
	step := 0
	var a [msHidden]float64
	for range epochs {
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for s := 0; s < n; s += batch {
			clear(grad[:])
			e := min(n, s+batch)
			for _, k := range order[s:e] {
				x := &z[k]
				out := m.b2
				for i, xv := range x {
					out += m.lin[i] * xv
				}
				for h := range msHidden {
					v := m.b1[h]
					for i, xv := range x {
						v += m.w1[h][i] * xv
					}
					a[h] = math.Tanh(v)
					out += m.w2[h] * a[h]
				}
				p := 1 / (1 + math.Exp(-out))
				// Cross-entropy against a target that may lie between 0
				// and 1 (a window's music share, msedgefit_test.go), each
				// class's part weighted.
				y := set.y[k]
				g := wMusic*y*(p-1) + wSpeech*(1-y)*p
				grad[nh-1] += g
				for i, xv := range x {
					grad[nh+i] += g * xv
				}
				for h := range msHidden {
					grad[msHidden*nMSFeatures+msHidden+h] += g * a[h]
					gh := g * m.w2[h] * (1 - a[h]*a[h])
					grad[msHidden*nMSFeatures+h] += gh
					for i, xv := range x {
						grad[h*nMSFeatures+i] += gh * xv
					}
				}
			}
			step++
			c1, c2 := 1-math.Pow(beta1, float64(step)), 1-math.Pow(beta2, float64(step))
			for k := range np {
				p := param(k)
				g := grad[k] / float64(e-s)
				if decayed(k) {
					g += lambda * *p
				}
				if k >= msHidden*nMSFeatures+msHidden && k < nh-1 {
					g += hiddenOutDecay * *p
				}
				mom[k] = beta1*mom[k] + (1-beta1)*g
				vel[k] = beta2*vel[k] + (1-beta2)*g*g
				*p -= lr * (mom[k] / c1) / (math.Sqrt(vel[k]/c2) + 1e-8)
			}
		}
		lr *= 0.9
	}
	return m
}

// secondsRight returns how many whole seconds the result labels as the
// truth does (true for music; a second goes to the label that covers most
// of it, music on a tie), and the seconds it gets wrong.
func secondsRight(r *Result, truth []bool) (int, []int) {
	right := 0
	var wrong []int
	for s, want := range truth {
		a, b := int64(s)*int64(r.SampleRate), int64(s+1)*int64(r.SampleRate)
		var mus int64
		for _, g := range r.Segments {
			if g.Label == Music {
				mus += max(0, min(b, g.End)-max(a, g.Start))
			}
		}
		if (2*mus >= b-a) == want {
			right++
		} else {
			wrong = append(wrong, s)
		}
	}
	return right, wrong
}

// switchErrors returns, for every true switch (frames), how far the
// nearest switch of the result lies, in seconds.
func switchErrors(r *Result, switches []int64) []float64 {
	var out []float64
	for _, s := range switches {
		best := math.Inf(1)
		for _, g := range r.Segments[1:] {
			best = min(best, math.Abs(float64(g.Start-s))/float64(r.SampleRate))
		}
		out = append(out, best)
	}
	return out
}

// withModel runs f with m as the speech/music model.
func withModel(m msNet, f func()) {
	saved := msModel
	msModel = m
	defer func() { msModel = saved }()
	f()
}

// score classifies the programmes and returns the share of seconds right
// and of switches found within a second.
func score(t testing.TB, ps []fitProgramme) (secs, within float64) {
	right, all, in, switches := 0, 0, 0, 0
	for _, p := range ps {
		r := analyse(t, p.x, Auto)
		ok, _ := secondsRight(r, p.seconds)
		right += ok
		all += len(p.seconds)
		for _, e := range switchErrors(r, p.switches) {
			switches++
			if e <= 1 {
				in++
			}
		}
	}
	return float64(right) / float64(all), float64(in) / float64(switches)
}

func TestFitSpeechMusic(t *testing.T) {
	if !*fitModel {
		t.Skip("fits the speech/music model and writes msmodel.go with -fit")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	halves := fitHalves(c)
	var train, check [2][]fitProgramme
	var sets [2]fitSet
	for k := range halves {
		train[k] = fitProgrammes(halves[k], 12, uint64(k+1), true)
		check[k] = fitProgrammes(halves[k], 6, uint64(k+11), false)
		sets[k] = examples(t, train[k])
	}
	all := fitSet{x: append(slices.Clone(sets[0].x), sets[1].x...), y: append(slices.Clone(sets[0].y), sets[1].y...)}
	var cv []string
	for k := range 2 {
		withModel(fitNet(sets[1-k], 1), func() {
			secs, within := score(t, check[k])
			cv = append(cv, fmt.Sprintf("%.1f%% of seconds, %.0f%% of switches within 1 s", 100*secs, 100*within))
		})
	}
	m := fitNet(all, 1)
	var tuning []string
	withModel(m, func() {
		for _, p := range c.Programmes() {
			r := analyse(t, p.Input, Auto)
			truth := make([]bool, len(p.Labels))
			for s, l := range p.Labels {
				truth[s] = l == "music"
			}
			ok, _ := secondsRight(r, truth)
			tuning = append(tuning, fmt.Sprintf("%.1f%%", 100*float64(ok)/float64(len(truth))))
		}
	})
	t.Logf("cross-validated %s; the tuning half's programmes %s", strings.Join(cv, ", "), strings.Join(tuning, " "))
	doc := fmt.Sprintf("msModel was fitted on %d blocks of the tuning half of the real-recording\ncorpus (internal/realaudio). Cross-validated on its two halves: %s.", len(all.x), strings.Join(cv, "; "))
	if err := os.WriteFile("msmodel.go", modelSource("msModel", "TestFitSpeechMusic -fit", doc, m), 0o644); err != nil {
		t.Fatal(err)
	}
}

// modelSource returns the source of a file that declares the model m as
// the variable name, written by the test cmd (its -run pattern and flag),
// with the doc comment doc.
func modelSource(name, cmd, doc string, m msNet) []byte {
	var b bytes.Buffer
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	list := func(xs []float64) string {
		var s []string
		for _, v := range xs {
			s = append(s, f(v))
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(&b, "// Code generated by go test ./dsp/classify -run %s; DO NOT EDIT.\n\n", cmd)
	fmt.Fprintf(&b, "package classify\n\n")
	for _, l := range strings.Split(doc, "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	fmt.Fprintf(&b, "// Features, in order: %s.\n", strings.Join(msFeatureNames[:], ", "))
	fmt.Fprintf(&b, "var %s = msNet{\n", name)
	fmt.Fprintf(&b, "mean: [nMSFeatures]float64{%s},\n", list(m.mean[:]))
	fmt.Fprintf(&b, "scale: [nMSFeatures]float64{%s},\n", list(m.scale[:]))
	fmt.Fprintf(&b, "lin: [nMSFeatures]float64{%s},\n", list(m.lin[:]))
	fmt.Fprintf(&b, "w1: [msHidden][nMSFeatures]float64{\n")
	for _, row := range m.w1 {
		fmt.Fprintf(&b, "{%s},\n", list(row[:]))
	}
	fmt.Fprintf(&b, "},\n")
	fmt.Fprintf(&b, "b1: [msHidden]float64{%s},\n", list(m.b1[:]))
	fmt.Fprintf(&b, "w2: [msHidden]float64{%s},\n", list(m.w2[:]))
	fmt.Fprintf(&b, "b2: %s,\n}\n", f(m.b2))
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return src
}
