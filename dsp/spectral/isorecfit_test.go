package spectral

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// TestFitIsoRec fits the band network with its state (isorec.go) and
// writes isorecmodel.go:
//
//	go test ./dsp/spectral -run TestFitIsoRec -v -args -recfit
//
// on the band network's conventions (isofit_test.go): the tuning half
// split by speaker and by time (isoSplit), the same validation mixes,
// ktuberling-data's speakers in the part to fit on (-fitextra), mixes
// drawn as isoMixes draws them. Of each mix isoRecBands bands drawn at
// random are sequences over all its frames, each frame's target the
// band's Wiener gain and its weight the band's energy over the mix's
// mean band energy (at most isoFitMaxWeight), as the band network's
// examples. The weights start from the committed band network
// (isomodel.go) and the GRU's read at zero, so that the fit starts where
// the band network is (its validation loss is the fit's epoch 0);
// AdamW (isoFitDecay) on batches of isoRecBatch sequences advanced in
// step by chunks of isoRecChunk frames, each chunk back-propagated
// through its frames from the state the chunk before left; the epoch
// with the lowest validation loss is kept (with -recswa, or the weights
// averaged over the epochs at the lower rate if they validate better:
// epoch -1).
// -recsave writes the network for TestIsolationCeiling -isoceilrec and
// its source to FILE.go instead of isorecmodel.go; -recfreeze fits the
// GRU alone; -recbabble corpus makes the babble of the mixes to fit on as
// the corpus's NoisySpeech makes it.
var (
	fitRec    = flag.Bool("recfit", false, "TestFitIsoRec: fit speech isolation's band network with a state on the tuning half and write isorecmodel.go")
	recSave   = flag.String("recsave", "", "TestFitIsoRec: write the network to this file (TestIsolationCeiling -isoceilrec reads it) and its source to this file .go instead of isorecmodel.go")
	recEpochs = flag.Int("recepochs", isoRecEpochs, "TestFitIsoRec: epochs")
	recTrain  = flag.Int("rectrain", isoFitTrain, "TestFitIsoRec: the number of mixes to fit on")
	recRate   = flag.Float64("recrate", isoRecRate, "TestFitIsoRec: Adam's rate (a quarter of it in the last third of the epochs)")
	recSeed   = flag.Uint64("recseed", isoRecSeed, "TestFitIsoRec: the seed of the mixes to fit on, of the GRU's start and of the batches")
	recBatch  = flag.Int("recbatch", isoRecBatch, "TestFitIsoRec: sequences advanced together, one step of Adam a chunk")
	recBabble = flag.String("recbabble", "talkers", "TestFitIsoRec: the babble of the mixes to fit on: talkers (isoMixes': 4 to 8 of the other speakers as they speak, pauses and all) or corpus (the corpus's NoisySpeech babble: six talkers, each utterance's silences at either end cut)")
	recSWA    = flag.Bool("recswa", false, "TestFitIsoRec: also try the weights averaged over the epochs at the lower rate (a joint fit at rate 2.5e-4, seed 51: 0.0502 against its best epoch's 0.0439)")
	recFreeze = flag.Bool("recfreeze", false, "TestFitIsoRec: fit the GRU alone, the band network's weights kept as isomodel.go's")
)

const (
	isoRecSeed   = 50
	isoRecBands  = 8 // sequences (bands) of each mix
	isoRecChunk  = 48
	isoRecBatch  = 16
	isoRecEpochs = 8
	isoRecRate   = 5e-4
)

// isoSeq is one band of one mix over all its frames: features (isoIn a
// frame), target gains and their weights.
type isoSeq struct {
	x    []float32
	y, w []float32
	kind string
}

// isoSeqsOf makes n mixes of m with r and returns nb sequences of each
// (bands drawn with a generator of seed), the mixes made and framed
// isoFitChunk at a time.
func isoSeqsOf(m isoMaterial, n int, r *rand.Rand, nb int, seed uint64) []isoSeq {
	var out []isoSeq
	for at := 0; at < n; at += isoFitChunk {
		mixes := isoMixes(m, min(isoFitChunk, n-at), r)
		parts := make([][]isoSeq, len(mixes))
		parallel(len(mixes), func(i int) { parts[i] = isoSeqExamples(mixes[i], nb, seed^uint64(at+i)) })
		for _, p := range parts {
			out = append(out, p...)
		}
	}
	return out
}

// isoSeqExamples frames mix as the isolator does and returns nb of its
// bands as sequences.
func isoSeqExamples(mix isoMix, nb int, seed uint64) []isoSeq {
	n := FFTSize(fs)
	hop := n / 4
	win := sqrtHann(n)
	front := newIsoFront(fs, n, hop, win)
	fr := newIsoFramer(n, hop, win)
	pow := make([]float64, n/2+1)
	powOf := func(x []float64, f int) []float64 { return fr.pow(x, f, pow) }
	frames, es, en, mean := isoTargetEnergies(front, mix, hop, powOf)
	if mean <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(isoRecSeed, seed))
	bands := r.Perm(isoBands)[:nb]
	seqs := make([]isoSeq, nb)
	for i := range seqs {
		seqs[i] = isoSeq{x: make([]float32, 0, frames*isoIn), y: make([]float32, 0, frames), w: make([]float32, 0, frames), kind: mix.kind}
	}
	feat := make([]float32, isoBands*isoIn)
	for f := 0; f < frames+front.W; f++ {
		front.push(powOf(mix.input, f))
		q := f - front.W
		if q < 0 || q >= frames {
			continue
		}
		front.features(int64(q), feat)
		for i, b := range bands {
			s, v := es[q*isoBands+b], en[q*isoBands+b]
			y := 1.0
			if s+v > 0 {
				y = s / (s + v)
			}
			sq := &seqs[i]
			sq.x = append(sq.x, feat[b*isoIn:(b+1)*isoIn]...)
			sq.y = append(sq.y, float32(y))
			sq.w = append(sq.w, float32(min(isoFitMaxWeight, (s+v)/mean)))
		}
	}
	return seqs
}

// recFlat is m's weights as one slice (the struct is float32 arrays
// alone); the fitted ones are those after mean and scale.
func recFlat(m *isoRecNet) []float32 { return unsafe.Slice(&m.net.mean[0], unsafe.Sizeof(*m)/4) }

// recParams is the fitted weights of an isoRecNet in float64, as views
// of one slice laid out as the struct.
type recParams struct {
	all                                    []float64
	w1, b1, w2, b2, w3, b3, wx, wh, bg, wo []float64
}

const recNParams = isoH1*isoIn + isoH1 + isoH2*isoH1 + isoH2 + isoH2 + 1 + 3*isoRecH*isoH1 + 3*isoRecH*isoRecH + 3*isoRecH + isoRecH

func newRecParams(all []float64) *recParams {
	if len(all) != recNParams {
		panic("newRecParams: length")
	}
	p := &recParams{all: all}
	next := func(k int) []float64 {
		s := all[:k:k]
		all = all[k:]
		return s
	}
	p.w1, p.b1 = next(isoH1*isoIn), next(isoH1)
	p.w2, p.b2 = next(isoH2*isoH1), next(isoH2)
	p.w3, p.b3 = next(isoH2), next(1)
	p.wx, p.wh, p.bg = next(3*isoRecH*isoH1), next(3*isoRecH*isoRecH), next(3*isoRecH)
	p.wo = next(isoRecH)
	return p
}

// decayed says which of all's weights AdamW decays (not the biases).
func (p *recParams) decayed() []bool {
	d := make([]bool, len(p.all))
	base := unsafe.Pointer(&p.all[0])
	for _, s := range [][]float64{p.w1, p.w2, p.w3, p.wx, p.wh, p.wo} {
		off := (uintptr(unsafe.Pointer(&s[0])) - uintptr(base)) / 8
		for i := range s {
			d[int(off)+i] = true
		}
	}
	return d
}

// recStep is one frame's activations, kept for back-propagation.
type recStep struct {
	xs             [isoIn]float64
	a1             [isoH1]float64
	a2             [isoH2]float64
	hp, z, r, n, h [isoRecH]float64
	y              float64
}

func sig64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// forward runs one frame: raw features x (standardised by mean, scale),
// the state before hp; it fills st and returns the gain.
func (p *recParams) forward(mean, scale []float32, x []float32, hp []float64, st *recStep) float64 {
	for i := range st.xs {
		st.xs[i] = float64((x[i] - mean[i]) * scale[i])
	}
	recAffine(p.w1, p.b1, st.xs[:], st.a1[:])
	for j, v := range st.a1 {
		st.a1[j] = math.Tanh(v)
	}
	recAffine(p.w2, p.b2, st.a1[:], st.a2[:])
	for j, v := range st.a2 {
		st.a2[j] = math.Tanh(v)
	}
	out := p.b3[0]
	for i, v := range st.a2 {
		out += p.w3[i] * v
	}
	copy(st.hp[:], hp)
	H := isoRecH
	var pre [3 * isoRecH]float64
	recAffine(p.wx, p.bg, st.a1[:], pre[:])
	for j := range 2 * H {
		row := p.wh[j*H : (j+1)*H]
		acc := pre[j]
		for i, v := range hp {
			acc += row[i] * v
		}
		if j < H {
			st.z[j] = sig64(acc)
		} else {
			st.r[j-H] = sig64(acc)
		}
	}
	for j := range H {
		row := p.wh[(2*H+j)*H : (2*H+j+1)*H]
		acc := pre[2*H+j]
		for i, v := range hp {
			acc += row[i] * st.r[i] * v
		}
		st.n[j] = math.Tanh(acc)
	}
	for j := range H {
		st.h[j] = (1-st.z[j])*st.n[j] + st.z[j]*hp[j]
		out += p.wo[j] * st.h[j]
	}
	st.y = sig64(out)
	return st.y
}

// recAffine sets out[j] to bias[j] plus row j of w (rows of len(in))
// times in: a layer of the fit's float64 forward pass before its
// activation.
func recAffine(w, bias, in, out []float64) {
	for j := range out {
		row := w[j*len(in) : (j+1)*len(in)]
		acc := bias[j]
		for i, v := range in {
			acc += row[i] * v
		}
		out[j] = acc
	}
}

// backward adds to g (laid out as p) the gradient of wt (y - target)^2
// at the step st, dh the loss's gradient with respect to st.h from the
// frames after; it sets dh to the gradient with respect to st.hp.
func (p *recParams) backward(g *recParams, st *recStep, target, wt float64, dh []float64) {
	H := isoRecH
	dl := 2 * wt * (st.y - target) * st.y * (1 - st.y)
	g.b3[0] += dl
	var da1 [isoH1]float64
	for j, a := range st.a2 {
		g.w3[j] += dl * a
		d := dl * p.w3[j] * (1 - a*a)
		g.b2[j] += d
		row, grow := p.w2[j*isoH1:(j+1)*isoH1], g.w2[j*isoH1:(j+1)*isoH1]
		for i, v := range st.a1 {
			grow[i] += d * v
			da1[i] += d * row[i]
		}
	}
	var dhp, dpre [isoRecH]float64
	var drh [isoRecH]float64
	for j := range H {
		g.wo[j] += dl * st.h[j]
		dhj := dh[j] + dl*p.wo[j]
		dn := dhj * (1 - st.z[j])
		dz := dhj * (st.hp[j] - st.n[j])
		dhp[j] += dhj * st.z[j]
		// n's pre-activation.
		dpn := dn * (1 - st.n[j]*st.n[j])
		k := 2*H + j
		g.bg[k] += dpn
		row, grow := p.wh[k*H:(k+1)*H], g.wh[k*H:(k+1)*H]
		for i, v := range st.hp {
			grow[i] += dpn * st.r[i] * v
			drh[i] += dpn * row[i]
		}
		xr, gxr := p.wx[k*isoH1:(k+1)*isoH1], g.wx[k*isoH1:(k+1)*isoH1]
		for i, v := range st.a1 {
			gxr[i] += dpn * v
			da1[i] += dpn * xr[i]
		}
		dpre[j] = dz * st.z[j] * (1 - st.z[j])
	}
	var dpr [isoRecH]float64
	for i := range H {
		dr := drh[i] * st.hp[i]
		dhp[i] += drh[i] * st.r[i]
		dpr[i] = dr * st.r[i] * (1 - st.r[i])
	}
	for gate, d := range [2]*[isoRecH]float64{&dpre, &dpr} {
		for j := range H {
			dj := d[j]
			if dj == 0 {
				continue
			}
			k := gate*H + j
			g.bg[k] += dj
			row, grow := p.wh[k*H:(k+1)*H], g.wh[k*H:(k+1)*H]
			for i, v := range st.hp {
				grow[i] += dj * v
				dhp[i] += dj * row[i]
			}
			xr, gxr := p.wx[k*isoH1:(k+1)*isoH1], g.wx[k*isoH1:(k+1)*isoH1]
			for i, v := range st.a1 {
				gxr[i] += dj * v
				da1[i] += dj * xr[i]
			}
		}
	}
	for j, a := range st.a1 {
		d := da1[j] * (1 - a*a)
		g.b1[j] += d
		grow := g.w1[j*isoIn : (j+1)*isoIn]
		for i, v := range st.xs {
			grow[i] += d * v
		}
	}
	copy(dh, dhp[:])
}

// recSeqLoss runs p over each sequence from a zero state and returns the
// weighted squared error, overall and by kind.
func recSeqLoss(p *recParams, mean, scale []float32, seqs []isoSeq) (float64, map[string]float64) {
	sums := make([]float64, len(seqs))
	parallel(len(seqs), func(i int) {
		var st recStep
		h := make([]float64, isoRecH)
		s := seqs[i]
		for t := range s.y {
			y := p.forward(mean, scale, s.x[t*isoIn:(t+1)*isoIn], h, &st)
			copy(h, st.h[:])
			d := y - float64(s.y[t])
			sums[i] += float64(s.w[t]) * d * d
		}
	})
	sum, cnt := map[string]float64{}, map[string]int{}
	var all float64
	var n int
	for i, s := range seqs {
		sum[s.kind] += sums[i]
		cnt[s.kind] += len(s.y)
		all += sums[i]
		n += len(s.y)
	}
	by := map[string]float64{}
	for k, v := range sum {
		by[k] = v / float64(cnt[k])
	}
	return all / float64(max(1, n)), by
}

// recFromIso returns the network with the band network m's weights and
// the GRU's drawn by r, its read (wo) zero.
func recFromIso(m *isoNet, r *rand.Rand) *isoRecNet {
	var rn isoRecNet
	rn.net = *m
	for j := range rn.wx {
		for i := range rn.wx[j] {
			rn.wx[j][i] = float32(r.NormFloat64() / math.Sqrt(isoH1))
		}
	}
	for j := range rn.wh {
		for i := range rn.wh[j] {
			rn.wh[j][i] = float32(r.NormFloat64() / math.Sqrt(isoRecH))
		}
	}
	return &rn
}

// recToParams and recFromParams move the fitted weights between the
// network and the fit's float64 copy.
func recToParams(m *isoRecNet) *recParams {
	f := recFlat(m)[2*isoIn:]
	all := make([]float64, len(f))
	for i, v := range f {
		all[i] = float64(v)
	}
	return newRecParams(all)
}

func recFromParams(m *isoRecNet, p *recParams) {
	f := recFlat(m)[2*isoIn:]
	for i, v := range p.all {
		f[i] = float32(v)
	}
}

// recFit fits m on train by truncated back-propagation through time,
// keeping the epoch that did best on val (epoch 0: the start).
func recFit(t *testing.T, m *isoRecNet, train, val []isoSeq, epochs int, rate float64) (float64, int) {
	p := recToParams(m)
	mean, scale := m.net.mean[:], m.net.scale[:]
	best := append([]float64(nil), p.all...)
	bestLoss, by := recSeqLoss(p, mean, scale, val)
	bestEpoch := 0
	t.Logf("epoch  0 (the band network): validation %.4f (babble %.4f, music %.4f, noise %.4f)", bestLoss, by["babble"], by["music"], by["noise"])
	dec := p.decayed()
	// With -recfreeze the band network's weights (before wx) stay.
	first := 0
	if *recFreeze {
		first = int((uintptr(unsafe.Pointer(&p.wx[0])) - uintptr(unsafe.Pointer(&p.all[0]))) / 8)
	}
	m1, m2 := make([]float64, len(p.all)), make([]float64, len(p.all))
	const workers = 2
	grads := make([]*recParams, workers)
	for i := range grads {
		grads[i] = newRecParams(make([]float64, len(p.all)))
	}
	r := rand.New(rand.NewPCG(*recSeed, 0xb977))
	order := make([]int, len(train))
	for i := range order {
		order[i] = i
	}
	step := 0
	b1, b2 := 0.9, 0.999
	swa, swaN := make([]float64, len(p.all)), 0
	// Each sequence of the batch: its state and where it is.
	type run struct {
		s   *isoSeq
		h   []float64
		at  int
		stp []recStep
		dh  []float64
	}
	for epoch := 1; epoch <= epochs; epoch++ {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := rate
		if epoch > epochs*2/3 {
			lr /= 4
		}
		var trainLoss float64
		var trainN int
		for at := 0; at < len(order); at += *recBatch {
			idx := order[at:min(len(order), at+*recBatch)]
			runs := make([]*run, len(idx))
			for k, i := range idx {
				runs[k] = &run{s: &train[i], h: make([]float64, isoRecH), stp: make([]recStep, isoRecChunk), dh: make([]float64, isoRecH)}
			}
			for {
				var live []*run
				for _, rn := range runs {
					if rn.at < len(rn.s.y) {
						live = append(live, rn)
					}
				}
				if len(live) == 0 {
					break
				}
				losses := make([]float64, workers)
				counts := make([]int, workers)
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						g := grads[w]
						clear(g.all)
						for k := w; k < len(live); k += workers {
							rn := live[k]
							s := rn.s
							T := min(isoRecChunk, len(s.y)-rn.at)
							for t := range T {
								f := rn.at + t
								y := p.forward(mean, scale, s.x[f*isoIn:(f+1)*isoIn], rn.h, &rn.stp[t])
								copy(rn.h, rn.stp[t].h[:])
								d := y - float64(s.y[f])
								losses[w] += float64(s.w[f]) * d * d
							}
							clear(rn.dh)
							for t := T - 1; t >= 0; t-- {
								f := rn.at + t
								p.backward(g, &rn.stp[t], float64(s.y[f]), float64(s.w[f]), rn.dh)
							}
							rn.at += T
							counts[w] += T
						}
					}()
				}
				wg.Wait()
				n := 0
				for w := range workers {
					trainLoss += losses[w]
					n += counts[w]
				}
				trainN += n
				for w := 1; w < workers; w++ {
					for i, v := range grads[w].all {
						grads[0].all[i] += v
					}
				}
				step++
				inv := 1 / float64(n)
				c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
				for i, gv := range grads[0].all[first:] {
					i += first
					gr := gv * inv
					if dec[i] {
						p.all[i] *= 1 - lr*isoFitDecay
					}
					m1[i] = b1*m1[i] + (1-b1)*gr
					m2[i] = b2*m2[i] + (1-b2)*gr*gr
					p.all[i] -= lr * (m1[i] / c1) / (math.Sqrt(m2[i]/c2) + 1e-8)
				}
			}
		}
		vl, by := recSeqLoss(p, mean, scale, val)
		t.Logf("epoch %2d: train loss %.4f, validation %.4f (babble %.4f, music %.4f, noise %.4f)", epoch, trainLoss/float64(max(1, trainN)), vl, by["babble"], by["music"], by["noise"])
		if vl < bestLoss {
			copy(best, p.all)
			bestLoss, bestEpoch = vl, epoch
		}
		if *recSave != "" {
			// Each epoch's weights, for TestIsolationCeiling -isoceilrec.
			e := *m
			recFromParams(&e, p)
			if err := mlpSave(fmt.Sprintf("%s.e%d", *recSave, epoch), recFlat(&e)); err != nil {
				t.Fatal(err)
			}
		}
		if *recSWA && epoch > epochs*2/3 {
			// The weights averaged over the epochs at the lower rate.
			swaN++
			for i, v := range p.all {
				swa[i] += (v - swa[i]) / float64(swaN)
			}
		}
	}
	if swaN > 0 {
		sl, by := recSeqLoss(newRecParams(swa), mean, scale, val)
		t.Logf("the weights averaged over the last %d epochs: validation %.4f (babble %.4f, music %.4f, noise %.4f)", swaN, sl, by["babble"], by["music"], by["noise"])
		if sl < bestLoss {
			copy(best, swa)
			bestLoss, bestEpoch = sl, -1
		}
	}
	copy(p.all, best)
	recFromParams(m, p)
	return bestLoss, bestEpoch
}

func TestFitIsoRec(t *testing.T) {
	if !*fitRec {
		t.Skip("fits speech isolation's band network with a state and writes isorecmodel.go with -recfit")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	fitM, valM := isoSplit(c)
	val := isoSeqsOf(valM, isoFitVal, rand.New(rand.NewPCG(isoFitSeed, 0x7a1)), 12, 0x7a1)
	if *fitExtra != "" {
		isoAddExtraFold(t, &fitM, nil)
	}
	fitM.aug = isoAugFlags(t)
	switch *recBabble {
	case "talkers":
	case "corpus":
		fitM.babble = c.Babble
	default:
		t.Fatalf("-recbabble %q: talkers or corpus", *recBabble)
	}
	train := isoSeqsOf(fitM, *recTrain, rand.New(rand.NewPCG(*recSeed, 0x5eed)), isoRecBands, 0x5eed)
	frames := func(s []isoSeq) int {
		n := 0
		for _, q := range s {
			n += len(q.y)
		}
		return n
	}
	t.Logf("%d sequences (%d band frames) to fit on, %d (%d) to validate on", len(train), frames(train), len(val), frames(val))
	m := recFromIso(&isoModel, rand.New(rand.NewPCG(*recSeed, 1)))
	start, _ := recSeqLoss(recToParams(m), m.net.mean[:], m.net.scale[:], val)
	loss, epoch := recFit(t, m, train, val, *recEpochs, *recRate)
	t.Logf("validation loss %.4f at epoch %d", loss, epoch)
	header := fmt.Sprintf("isoRecModel was fitted from isoModel on %d sequences (%d bands of each mix, %d band\n"+
		"frames) of %d mixes of the tuning half made as isoModel's (isofit_test.go, seed %d),\n"+
		"babble %s (-recbabble), the GRU alone %v (-recfreeze), AdamW (rate %g, decay %g),\n"+
		"batches of %d sequences in chunks of %d frames, %d epochs; kept epoch %d (-1: the\n"+
		"weights averaged over the last third): validation loss %.4f on isoModel's validation\n"+
		"speakers (%d sequences; isoModel %.4f).",
		len(train), isoRecBands, frames(train), *recTrain, *recSeed, *recBabble, *recFreeze, *recRate, isoFitDecay, *recBatch, isoRecChunk, *recEpochs, epoch, loss, len(val), start)
	if fitM.aug.on() {
		header += fmt.Sprintf("\nThe fitting speech perturbed: %v.", fitM.aug)
	}
	src := recModelSource(m, "-run TestFitIsoRec -recfit", header)
	out := "isorecmodel.go"
	if *recSave != "" {
		if err := mlpSave(*recSave, recFlat(m)); err != nil {
			t.Fatal(err)
		}
		out = *recSave + ".go"
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recModelSource returns isorecmodel.go for m, written by go test with
// args.
func recModelSource(m *isoRecNet, args, header string) []byte {
	var b bytes.Buffer
	list := func(xs []float32) string {
		s := make([]string, len(xs))
		for i, v := range xs {
			s[i] = strconv.FormatFloat(float64(v), 'g', 6, 32)
		}
		return strings.Join(s, ",")
	}
	fmt.Fprintf(&b, "// Code generated by go test ./dsp/spectral %s; DO NOT EDIT.\n\npackage spectral\n\n", args)
	for _, l := range strings.Split(header, "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	vec := func(name, n string, xs []float32) { fmt.Fprintf(&b, "%s: [%s]float32{%s},\n", name, n, list(xs)) }
	mat := func(name, n, k string, rows int, xs []float32) {
		fmt.Fprintf(&b, "%s: [%s][%s]float32{\n", name, n, k)
		w := len(xs) / rows
		for j := range rows {
			fmt.Fprintf(&b, "{%s},\n", list(xs[j*w:(j+1)*w]))
		}
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "var isoRecModel = isoRecNet{\n")
	n := &m.net
	fmt.Fprintf(&b, "net: isoNet{\n")
	vec("mean", "isoIn", n.mean[:])
	vec("scale", "isoIn", n.scale[:])
	mat("w1", "isoH1", "isoIn", isoH1, unsafe.Slice(&n.w1[0][0], isoH1*isoIn))
	vec("b1", "isoH1", n.b1[:])
	mat("w2", "isoH2", "isoH1", isoH2, unsafe.Slice(&n.w2[0][0], isoH2*isoH1))
	vec("b2", "isoH2", n.b2[:])
	vec("w3", "isoH2", n.w3[:])
	vec("b3", "1", n.b3[:])
	fmt.Fprintf(&b, "},\n")
	mat("wx", "3 * isoRecH", "isoH1", 3*isoRecH, unsafe.Slice(&m.wx[0][0], 3*isoRecH*isoH1))
	mat("wh", "3 * isoRecH", "isoRecH", 3*isoRecH, unsafe.Slice(&m.wh[0][0], 3*isoRecH*isoRecH))
	vec("bg", "3 * isoRecH", m.bg[:])
	vec("wo", "isoRecH", m.wo[:])
	fmt.Fprintf(&b, "}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return src
}

// TestIsoRecGradient holds the fit's back-propagation through time to
// the loss's finite differences, on random features through a network
// whose every weight is drawn (the GRU's read included), over 6 frames.
func TestIsoRecGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := recFromIso(&isoModel, r)
	for i := range m.wo {
		m.wo[i] = float32(r.NormFloat64())
	}
	for i := range m.bg {
		m.bg[i] = float32(0.3 * r.NormFloat64())
	}
	p := recToParams(m)
	const T = 6
	x := make([]float32, T*isoIn)
	for i := range x {
		x[i] = m.net.mean[i%isoIn] + float32(r.NormFloat64())/m.net.scale[i%isoIn]
	}
	y := []float64{0.1, 0.9, 0.5, 0.3, 0.7, 0.2}
	w := []float64{1, 2, 0.5, 1, 3, 1}
	loss := func() float64 {
		var st recStep
		h := make([]float64, isoRecH)
		var l float64
		for k := range T {
			g := p.forward(m.net.mean[:], m.net.scale[:], x[k*isoIn:(k+1)*isoIn], h, &st)
			copy(h, st.h[:])
			l += w[k] * (g - y[k]) * (g - y[k])
		}
		return l
	}
	g := newRecParams(make([]float64, len(p.all)))
	steps := make([]recStep, T)
	h := make([]float64, isoRecH)
	for k := range T {
		p.forward(m.net.mean[:], m.net.scale[:], x[k*isoIn:(k+1)*isoIn], h, &steps[k])
		copy(h, steps[k].h[:])
	}
	dh := make([]float64, isoRecH)
	for k := T - 1; k >= 0; k-- {
		p.backward(g, &steps[k], y[k], w[k], dh)
	}
	worst := 0.0
	for _, part := range [][]float64{p.w1, p.b1, p.w2, p.b2, p.w3, p.b3, p.wx, p.wh, p.bg, p.wo} {
		for _, i := range []int{0, len(part) / 3, len(part) - 1} {
			off := int((uintptr(unsafe.Pointer(&part[i])) - uintptr(unsafe.Pointer(&p.all[0]))) / 8)
			v := p.all[off]
			const eps = 1e-6
			p.all[off] = v + eps
			lp := loss()
			p.all[off] = v - eps
			lm := loss()
			p.all[off] = v
			num := (lp - lm) / (2 * eps)
			if d := math.Abs(num-g.all[off]) / max(1e-6, math.Abs(num)+math.Abs(g.all[off])); d > worst {
				worst = d
			}
			if math.Abs(num-g.all[off]) > 1e-5*max(1, math.Abs(num)) {
				t.Errorf("weight %d: back-propagation %.8g, finite differences %.8g", off, g.all[off], num)
			}
		}
	}
	t.Logf("worst relative difference %.2g", worst)
}

// TestIsoRecStepIsFit holds the product's step (isorec.go, float32,
// tanh32) to the fit's float64 forward pass over 200 frames of random
// features, every band's state carried: within 2e-3 of a gain.
func TestIsoRecStepIsFit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := recFromIso(&isoModel, r)
	for i := range m.wo {
		m.wo[i] = float32(r.NormFloat64())
	}
	p := recToParams(m)
	s := newIsoRec(m)
	hs := make([][]float64, isoBands)
	for b := range hs {
		hs[b] = make([]float64, isoRecH)
	}
	feat := make([]float32, isoBands*isoIn)
	g := make([]float64, isoBands)
	var st recStep
	worst := 0.0
	for range 200 {
		for i := range feat {
			feat[i] = m.net.mean[i%isoIn] + float32(r.NormFloat64())/m.net.scale[i%isoIn]
		}
		s.step(feat, g)
		for b := range isoBands {
			want := p.forward(m.net.mean[:], m.net.scale[:], feat[b*isoIn:(b+1)*isoIn], hs[b], &st)
			copy(hs[b], st.h[:])
			worst = max(worst, math.Abs(g[b]-want))
		}
	}
	if worst > 2e-3 {
		t.Errorf("the product's gains differ from the fit's by up to %.2g", worst)
	}
	t.Logf("worst difference %.2g", worst)
}

var recMean = flag.String("recmean", "", "TestIsoRecMean: comma-separated networks written by TestFitIsoRec -recsave (FILE.eN: epoch N) whose weights' mean is written to isorecmodel.go")

// TestIsoRecMean writes isorecmodel.go as the mean of the weights of
// -recmean's networks: epochs of one fit (TestFitIsoRec -recsave FILE
// writes each epoch's to FILE.eN), to be measured as the product
// (TestIsolationCeiling -isoceiling net); isorec.go records the means of
// seed 50's epochs tried (not kept).
func TestIsoRecMean(t *testing.T) {
	if *recMean == "" {
		t.Skip("writes isorecmodel.go as the mean of -recmean's networks' weights")
	}
	paths := strings.Split(*recMean, ",")
	var sum []float64
	var m isoRecNet
	for i, path := range paths {
		if err := mlpLoad(path, recFlat(&m)); err != nil {
			t.Fatal(err)
		}
		f := recFlat(&m)
		if i == 0 {
			sum = make([]float64, len(f))
		}
		for k, v := range f {
			sum[k] += float64(v)
		}
	}
	f := recFlat(&m)
	for k := range f {
		f[k] = float32(sum[k] / float64(len(paths)))
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	header := fmt.Sprintf("isoRecModel is the mean of the weights of %s\n"+
		"(TestIsoRecMean -recmean): networks written by TestFitIsoRec -recsave.",
		strings.Join(names, ", "))
	if err := os.WriteFile("isorecmodel.go", recModelSource(&m, "-run TestIsoRecMean -recmean FILES", header), 0o644); err != nil {
		t.Fatal(err)
	}
}
