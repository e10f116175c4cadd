package spectral

import (
	"math"
	"unsafe"
)

// Speech isolation's band gains with a state: the band network (isonet.go)
// with a gated recurrent unit (GRU) beside its output, as RNNoise and
// PercepNet carry one, fitted by TestFitIsoRec -recfit (isorecfit_test.go
// writes isorecmodel.go). The band network sees +-8 frames (+-85 ms) and
// the percentiles over +-0.5 s; where it errs most on babble is in the
// target's pauses (isofine.go: gains too high by +0.5 on average), and
// that the target has been silent for 200 ms, or that the voice in this
// band is not the one heard a second ago, is what a state carries and a
// window does not. Each band keeps a state of isoRecH units, updated
// once a frame from the band network's first hidden layer (its 32
// features of the band); the gain is the logistic of the band network's
// output plus a linear read of the state. All the weights, the band
// network's included, are fitted together from the committed band
// network (with the read of the state at zero the two are the same
// network), through time over the whole of each mix, in chunks of
// isoRecChunk frames (truncated back-propagation; the state itself runs
// on from the start of the mix, as in the product).
//
// The state serves the isolator only: Static's profile and Dynamic's
// speech presence run the band network on samples of frames, out of
// order, and keep isoModel.
const isoRecH = 24 // units of the state per band

// isoRecNet is the band network (isoNet) and the GRU beside it. The
// GRU's gates, in the order z (update), r (reset), n (candidate), read
// the band network's first hidden layer a and the state h:
//
//	z = sigma(Wx_z a + Wh_z h + b_z), r = sigma(Wx_r a + Wh_r h + b_r)
//	n = tanh(Wx_n a + Wh_n (r*h) + b_n), h' = (1-z) n + z h
//
// and the gain is sigma(w3 . a2 + b3 + wo . h'), a2 the band network's
// second hidden layer.
type isoRecNet struct {
	net isoNet
	wx  [3 * isoRecH][isoH1]float32
	wh  [3 * isoRecH][isoRecH]float32
	bg  [3 * isoRecH]float32
	wo  [isoRecH]float32
}

// isoRec is a stream's state (each band's GRU units, zero at the start)
// and the activations of a frame, [unit][band], so that every layer is
// one call of the band network's kernel for the 48 bands
// (denseTanh48AVX2, or denseTanhGo bit for bit): the gates' weights are
// laid out over the inputs [a; h] and [a; r*h], z's and r's halved, as
// sigma(x) = (1 + tanh(x/2))/2.
type isoRec struct {
	m   *isoRecNet
	b   isoBatch
	h   [isoRecH][isoBands]float32
	in  [isoH1 + isoRecH][isoBands]float32
	zr  [2 * isoRecH][isoBands]float32
	n   [isoRecH][isoBands]float32
	wzr [2 * isoRecH][isoH1 + isoRecH]float32
	bzr [2 * isoRecH]float32
	wn  [isoRecH][isoH1 + isoRecH]float32
	bn  [isoRecH]float32
}

func newIsoRec(m *isoRecNet) *isoRec {
	s := &isoRec{m: m}
	for j := range 3 * isoRecH {
		row, c := s.wn[j%isoRecH][:], float32(1)
		if j < 2*isoRecH {
			row, c = s.wzr[j][:], 0.5
			s.bzr[j] = c * m.bg[j]
		} else {
			s.bn[j-2*isoRecH] = m.bg[j]
		}
		for i, v := range m.wx[j] {
			row[i] = c * v
		}
		for i, v := range m.wh[j] {
			row[isoH1+i] = c * v
		}
	}
	return s
}

// dense sets out (units of isoBands) to tanh32 of w in + bias, in rows of
// isoBands.
func isoDense48(w, bias, in, out []float32) {
	if useAVX2 {
		denseTanh48AVX2(&w[0], &bias[0], &in[0], &out[0], len(in)/isoBands, len(bias), 4*isoBands, &isoTanhK)
		return
	}
	denseTanhGo(w, bias, in, out, isoBands, 0, isoBands)
}

// step sets g (isoBands) to the gains of the frame whose features feat
// are (isoFront.features) and moves every band's state on by the frame:
// frames must come in order, each once.
func (s *isoRec) step(feat []float32, g []float64) {
	m := &s.m.net
	for b := range isoBands {
		row := feat[b*isoIn : (b+1)*isoIn]
		for i, v := range row {
			s.b.xt[i][b] = (v - m.mean[i]) * m.scale[i]
		}
	}
	flat := func(p *float32, n int) []float32 { return unsafe.Slice(p, n) }
	h1 := flat(&s.b.h1[0][0], isoH1*isoBands)
	isoDense48(flat(&m.w1[0][0], isoH1*isoIn), m.b1[:], flat(&s.b.xt[0][0], isoIn*isoBands), h1)
	isoDense48(flat(&m.w2[0][0], isoH2*isoH1), m.b2[:], h1, flat(&s.b.h2[0][0], isoH2*isoBands))
	var a [isoBands]float32
	for b := range a {
		a[b] = m.b3[0]
	}
	for i := range s.b.h2 {
		w, x := m.w3[i], &s.b.h2[i]
		for b := range a {
			a[b] += w * x[b]
		}
	}
	copy(s.in[:isoH1], s.b.h1[:])
	copy(s.in[isoH1:], s.h[:])
	in := flat(&s.in[0][0], (isoH1+isoRecH)*isoBands)
	isoDense48(flat(&s.wzr[0][0], 2*isoRecH*(isoH1+isoRecH)), s.bzr[:], in, flat(&s.zr[0][0], 2*isoRecH*isoBands))
	for i := range isoRecH {
		r, h, x := &s.zr[isoRecH+i], &s.h[i], &s.in[isoH1+i]
		for b := range x {
			x[b] = (0.5 + 0.5*r[b]) * h[b]
		}
	}
	isoDense48(flat(&s.wn[0][0], isoRecH*(isoH1+isoRecH)), s.bn[:], in, flat(&s.n[0][0], isoRecH*isoBands))
	for i := range isoRecH {
		z, n, h := &s.zr[i], &s.n[i], &s.h[i]
		w := s.m.wo[i]
		for b := range h {
			zb := 0.5 + 0.5*z[b]
			h[b] = (1-zb)*n[b] + zb*h[b]
			a[b] += w * h[b]
		}
	}
	for b, v := range a {
		g[b] = float64(float32(1 / (1 + math.Exp(-float64(v)))))
	}
}
