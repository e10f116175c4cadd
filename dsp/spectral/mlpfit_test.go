package spectral

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"go/format"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// mlpNet is a network of speech isolation's shape (isoNet, isoFineNet:
// two tanh hidden layers and a logistic output, its inputs standardised)
// seen as slices of its weight arrays, so that one fitter fits both.
type mlpNet struct {
	mean, scale    []float32
	w1, w2         [][]float32 // rows: a unit's weights
	b1, b2, w3, b3 []float32
	// forward is the network's output for the raw features x and its
	// activations: the standardised input and the hidden layers' outputs.
	forward func(x []float32) (y float32, in, h1, h2 []float32)
}

// mlpCarve returns the mlpNet whose weights are flat, a network of in
// inputs and hidden layers of h1 and h2 units laid out as isoNet and
// isoFineNet are (mean, scale, w1, b1, w2, b2, w3, b3), and forward.
func mlpCarve(flat []float32, in, h1, h2 int, forward func(x []float32) (float32, []float32, []float32, []float32)) *mlpNet {
	if len(flat) != 2*in+h1*(in+1)+h2*(h1+1)+h2+1 {
		panic(fmt.Sprintf("mlpCarve: %d weights for %d-%d-%d-1", len(flat), in, h1, h2))
	}
	next := func(k int) []float32 {
		p := flat[:k:k]
		flat = flat[k:]
		return p
	}
	rows := func(n, k int) [][]float32 {
		r := make([][]float32, n)
		for j := range r {
			r[j] = next(k)
		}
		return r
	}
	n := &mlpNet{forward: forward}
	n.mean, n.scale = next(in), next(in)
	n.w1, n.b1 = rows(h1, in), next(h1)
	n.w2, n.b2 = rows(h2, h1), next(h2)
	n.w3, n.b3 = next(h2), next(1)
	return n
}

// params lists the weights AdamW steps, the biases first (they are not
// decayed).
func (n *mlpNet) params() [][]float32 {
	p := [][]float32{n.b1, n.b2, n.b3, n.w3}
	p = append(p, n.w1...)
	return append(p, n.w2...)
}

// mlpOpts is what the fit of an mlpNet needs besides the network and
// the examples.
type mlpOpts struct {
	seed   uint64 // of the start and of the batches
	epochs int    // the last third at a quarter of the rate
	decay  float64
	// val is the validation loss, overall and by kind of interferer.
	val func() (float64, map[string]float64)
	// epoch, if not nil, is called after each epoch's validation.
	epoch func(epoch int)
	// noise, if not 0, is the deviation of the Gaussian noise added to
	// each standardised input of each example in the fit (not in
	// validation): a regulariser.
	noise float64
}

// mlpFit fits n on the examples x (n's inputs of each, flat), y (the
// target gains) and w (their weights in the squared error) by AdamW on
// mini-batches of isoFitBatch, standardising the inputs over the
// examples first. It leaves in n the weights of the epoch that did best
// on o.val, which it returns with its loss; it logs the losses.
func mlpFit(t *testing.T, n *mlpNet, x, y, w []float32, o mlpOpts) (float64, int) {
	r := rand.New(rand.NewPCG(o.seed, 0x150))
	in, h1, h2 := len(n.mean), len(n.b1), len(n.b2)
	N := len(y)
	for i := range in {
		var s, s2 float64
		for e := range N {
			v := float64(x[e*in+i])
			s += v
			s2 += v * v
		}
		mu := s / float64(N)
		n.mean[i], n.scale[i] = float32(mu), float32(1/math.Sqrt(max(s2/float64(N)-mu*mu, 1e-8)))
	}
	initW := func(ws []float32, fanIn int) {
		a := math.Sqrt(1 / float64(fanIn))
		for i := range ws {
			ws[i] = float32(a * r.NormFloat64())
		}
	}
	for _, row := range n.w1 {
		initW(row, in)
	}
	for _, row := range n.w2 {
		initW(row, h1)
	}
	initW(n.w3, h2)
	zeros := func(ps [][]float32) [][]float32 {
		out := make([][]float32, len(ps))
		for k, p := range ps {
			out[k] = make([]float32, len(p))
		}
		return out
	}
	pm := n.params()
	pg, p1, p2 := zeros(pm), zeros(pm), zeros(pm)
	// The gradient, laid out as params.
	gb1, gb2, gb3, gw3 := pg[0], pg[1], pg[2], pg[3]
	gw1, gw2 := pg[4:4+h1], pg[4+h1:]
	all := append([][]float32{n.mean, n.scale}, pm...)
	best, bestLoss, bestEpoch := zeros(all), math.Inf(1), 0
	keep := func() {
		for k, p := range all {
			copy(best[k], p)
		}
	}
	keep()
	order := make([]int, N)
	for i := range order {
		order[i] = i
	}
	d2, d1 := make([]float32, h2), make([]float32, h1)
	noisy := make([]float32, in)
	step := 0
	b1, b2 := 0.9, 0.999
	for epoch := 1; epoch <= o.epochs; epoch++ {
		r.Shuffle(N, func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := isoFitRate
		if epoch > o.epochs*2/3 {
			lr /= 4
		}
		var trainLoss float64
		for at := 0; at < N; at += isoFitBatch {
			batch := order[at:min(N, at+isoFitBatch)]
			for _, p := range pg {
				clear(p)
			}
			for _, e := range batch {
				xe := x[e*in : (e+1)*in]
				if o.noise > 0 {
					for i, v := range xe {
						noisy[i] = v + float32(o.noise*r.NormFloat64())/max(n.scale[i], 1e-12)
					}
					xe = noisy
				}
				gb, xs, a1, a2 := n.forward(xe)
				d := gb - y[e]
				wt := w[e]
				trainLoss += float64(wt * d * d)
				d3 := 2 * wt * d * gb * (1 - gb)
				gb3[0] += d3
				for j, h := range a2 {
					gw3[j] += d3 * h
					d2[j] = d3 * n.w3[j] * (1 - h*h)
				}
				clear(d1)
				for j, d := range d2 {
					gb2[j] += d
					row, gw := n.w2[j], gw2[j]
					for i, h := range a1 {
						gw[i] += d * h
						d1[i] += d * row[i]
					}
				}
				for j := range d1 {
					d := d1[j] * (1 - a1[j]*a1[j])
					gb1[j] += d
					gw := gw1[j]
					for i, v := range xs {
						gw[i] += d * v
					}
				}
			}
			step++
			inv := 1 / float64(len(batch))
			c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
			for k, p := range pm {
				gk, mk, vk := pg[k], p1[k], p2[k]
				decay := float32(1 - lr*o.decay)
				if k < 3 {
					decay = 1 // biases
				}
				for i := range p {
					p[i] *= decay
					gr := float64(gk[i]) * inv
					mv := b1*float64(mk[i]) + (1-b1)*gr
					vv := b2*float64(vk[i]) + (1-b2)*gr*gr
					mk[i], vk[i] = float32(mv), float32(vv)
					p[i] -= float32(lr * (mv / c1) / (math.Sqrt(vv/c2) + 1e-8))
				}
			}
		}
		vl, by := o.val()
		t.Logf("epoch %2d: train loss %.4f, validation %.4f (babble %.4f, music %.4f, noise %.4f)", epoch, trainLoss/float64(N), vl, by["babble"], by["music"], by["noise"])
		if vl < bestLoss {
			keep()
			bestLoss, bestEpoch = vl, epoch
		}
		if o.epoch != nil {
			o.epoch(epoch)
		}
	}
	for k, p := range all {
		copy(p, best[k])
	}
	return bestLoss, bestEpoch
}

// TestMlpCarve checks that mlpCarve's slices are isoNet's and
// isoFineNet's own arrays, each weight where the struct has it.
func TestMlpCarve(t *testing.T) {
	var m isoNet
	n := isoNetView(&m)
	flat := unsafe.Slice(&m.mean[0], unsafe.Sizeof(m)/4)
	for i := range flat {
		flat[i] = float32(i)
	}
	parts := append([][]float32{n.mean, n.scale}, n.w1...)
	parts = append(append(parts, n.b1), n.w2...)
	parts = append(parts, n.b2, n.w3, n.b3)
	if got, want := parts, isoNetParts(&m); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("isoNet carved as %v, laid out as %v", got, want)
	}
	var f isoFineNet
	fn := mlpCarve(isoFineFlat(&f), isoFineIn, isoFineH1, isoFineH2, nil)
	fn.w2[isoFineH2-1][isoFineH1-1], fn.b3[0] = 1, 2
	if f.w2[isoFineH2-1][isoFineH1-1] != 1 || f.b3[0] != 2 {
		t.Errorf("isoFineNet's w2 and b3 are not mlpCarve's: %v %v", f.w2[isoFineH2-1], f.b3)
	}
}

// mlpModel names the Go source a fit writes for its network: the command
// that writes it, the variable, its type, the constants of its sizes, and
// the significant digits each weight keeps (-1: as many as it takes to
// read back the same float32).
type mlpModel struct {
	command, name, typ, in, h1, h2 string
	digits                         int
}

// source returns the Go source declaring n as m names it, with header as
// its comment.
func (m mlpModel) source(n *mlpNet, header string) []byte {
	var b bytes.Buffer
	list := func(xs []float32) string {
		s := make([]string, len(xs))
		for i, v := range xs {
			s[i] = strconv.FormatFloat(float64(v), 'g', m.digits, 32)
		}
		return strings.Join(s, ",")
	}
	fmt.Fprintf(&b, "// Code generated by %s; DO NOT EDIT.\n\npackage spectral\n\n", m.command)
	for _, l := range strings.Split(header, "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	fmt.Fprintf(&b, "var %s = %s{\n", m.name, m.typ)
	fmt.Fprintf(&b, "mean: [%s]float32{%s},\n", m.in, list(n.mean))
	fmt.Fprintf(&b, "scale: [%s]float32{%s},\n", m.in, list(n.scale))
	fmt.Fprintf(&b, "w1: [%s][%s]float32{\n", m.h1, m.in)
	for _, row := range n.w1 {
		fmt.Fprintf(&b, "{%s},\n", list(row))
	}
	fmt.Fprintf(&b, "},\nb1: [%s]float32{%s},\n", m.h1, list(n.b1))
	fmt.Fprintf(&b, "w2: [%s][%s]float32{\n", m.h2, m.h1)
	for _, row := range n.w2 {
		fmt.Fprintf(&b, "{%s},\n", list(row))
	}
	fmt.Fprintf(&b, "},\nb2: [%s]float32{%s},\n", m.h2, list(n.b2))
	fmt.Fprintf(&b, "w3: [%s]float32{%s},\n", m.h2, list(n.w3))
	fmt.Fprintf(&b, "b3: [1]float32{%s},\n}\n", list(n.b3))
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return src
}

// mlpSave writes a network's weights (flat, as mlpCarve reads them) to
// path, little-endian: what -fitsave and -finesave keep of a fit.
func mlpSave(path string, flat []float32) error {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, flat); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// mlpLoad reads into flat the weights mlpSave wrote to path.
func mlpLoad(path string, flat []float32) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return binary.Read(bytes.NewReader(b), binary.LittleEndian, flat)
}
