package spectral

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// TestFitIsoFine fits speech isolation's per-bin network (isofine.go) on
// top of the band network as it is (isomodel.go) and writes
// isofinemodel.go:
//
//	go test ./dsp/spectral -run TestFitIsoFine -v -args -finefit
//
// It keeps the band network's fitting conventions (isofit_test.go): the
// tuning half split by speaker and by time (isoSplit), the same validation
// mixes, ktuberling-data's speakers in the part to fit on (-fitextra);
// its own mixes to fit on are drawn with another seed (isoFineSeed) than
// the band network's, so that it does not learn to trust band gains on
// the mixes those were fitted to. Every isoFineEvery-th frame is framed
// as the isolator frames it (isoFront, the band gains smoothed and
// spread, isoFine's ring), and each bin under isoFineTopHz is an example
// whose target is its ideal ratio mask S/(S+N) and whose loss is the
// squared error weighted by the bin's energy over the mix's mean under
// the top (at most isoFitMaxWeight); the band gains' logits are
// jittered by isoFineNoise (the band network is surer of its fitting
// speakers than of others). Adam (AdamW), batches of
// isoFitBatch, isoFineEpochs epochs; the epoch with the lowest
// validation loss is kept. -finemat, -fineoracle, -finesave and
// TestIsoFineCeiling -finenets measure the alternatives isofine.go
// records.
var (
	fineFit    = flag.Bool("finefit", false, "TestFitIsoFine: fit speech isolation's per-bin network on the tuning half and write isofinemodel.go")
	fineMat    = flag.String("finemat", "fit", "TestFitIsoFine: the speakers of the mixes to fit on: fit (the band network's), val (its validation speakers, whose band gains are honest) or all")
	fineOracle = flag.Bool("fineoracle", false, "TestFitIsoFine: fit on the oracle band gains instead of the band network's")
	fineNoise  = flag.Float64("finenoise", isoFineNoise, "TestFitIsoFine: the deviation of a normal noise added to the logit of each band gain of the mixes to fit on (the band network is surer of its own fitting speakers than of others)")
	fineSave   = flag.String("finesave", "", "TestFitIsoFine: write the network to this file (TestIsoFineCeiling -finenets reads it) and its source to this file .go instead of isofinemodel.go")
	fineMaxW   = flag.Float64("finemaxweight", isoFitMaxWeight, "TestFitIsoFine: the cap of a bin's weight in the loss, its energy over the mix's mean under the top")
	fineRec    = flag.String("finerec", "", "TestFitIsoFine: the band gains of a band network with a state (isorec.go) alone: a file of TestFitIsoRec -recsave (empty: the band network alone, isomodel.go)")
	fineAvg    = flag.Bool("fineavg", false, "TestFitIsoFine: the band gains the product serves: isoRecModels' mean averaged with isoModel's by isoRecAvg (isolate.go's isoGains)")
	fineWeight = flag.String("fineweight", "mix", "TestFitIsoFine: a bin's weight in the loss: mix (the mixture's energy, the squared error of the output) or target (the target's energy: errors where the target is)")
)

const (
	isoFineSeed   = 40
	isoFineEpochs = 10
	isoFineEvery  = 8 // frames: a frame's 64 bins are examples enough
	// isoFineNoise is the deviation of the jitter of the band gains'
	// logits in the mixes to fit on (isofine.go says why).
	isoFineNoise = 0.7
)

// isoFineOpts is how examples are made: on the oracle band gains, the
// band gains' logits jittered by noise, the loss weighted by the target's
// energy instead of the mixture's, at most maxW.
type isoFineOpts struct {
	oracle bool
	noise  float64
	target bool
	maxW   float64
	// recs, if any, are networks with a state whose band gains' mean,
	// with the band network's by recAvg (isoGains), replace the band
	// network's.
	recs   []*isoRecNet
	recAvg float64
}

// isoFineVal is the examples' options of the validation mixes: the
// band network's gains as they come, the output's squared error.
var isoFineVal = isoFineOpts{maxW: isoFitMaxWeight}

// isoFineSet is a set of per-bin examples: features, target, weight.
type isoFineSet struct {
	x, y, w []float32
	kind    []isoKind
	e       []float32      // the weight uncapped (the output's squared error)
	bin     []uint8        // the bin's index
	ftype   []isoFrameType // the target's frame
}

// isoFrameType is what the target does in a frame (isoFrameTypes).
type isoFrameType uint8

// isoFrameTypes: the target's level under the top bin 25 dB under its
// 95th percentile over the mix (pause), 6 dB over its level two frames
// before (onset), 6 dB over two frames after (offset), else voiced
// (the target's harmonicity over 0.5, as the front measures it) or
// steady.
var isoFrameTypes = []string{"steady", "onset", "offset", "pause", "voiced"}

func (f isoFrameType) String() string { return isoFrameTypes[f] }

// isoFrameTypesOf is the type of each frame of the target's power S
// (frames, bins), harm its harmonicity.
func isoFrameTypesOf(S [][]float64, harm []float64) []isoFrameType {
	L := make([]float64, len(S))
	for f, p := range S {
		var e float64
		for _, v := range p {
			e += v
		}
		L[f] = 10 * math.Log10(e+1e-20)
	}
	sorted := slices.Sorted(slices.Values(L))
	ref := 0.0
	if len(sorted) > 0 {
		ref = sorted[len(sorted)*95/100]
	}
	out := make([]isoFrameType, len(S))
	for f, l := range L {
		switch {
		case l < ref-25:
			out[f] = 3
		case f >= 2 && l >= L[f-2]+6:
			out[f] = 1
		case f+2 < len(L) && l >= L[f+2]+6:
			out[f] = 2
		case harm[f] > 0.5:
			out[f] = 4
		}
	}
	return out
}

// isoKind is a mix's kind of interferer, a byte a bin.
type isoKind uint8

var isoKinds = []string{"babble", "music", "noise"}

func (k isoKind) String() string { return isoKinds[k] }

func (s *isoFineSet) len() int { return len(s.y) }

// isoFineExamples frames mix as the isolator does and adds the bins of
// every every-th frame, from phase on, to set.
func isoFineExamples(mix isoMix, every, phase int, opt isoFineOpts, set *isoFineSet) {
	oracle, noise := opt.oracle, opt.noise
	rn := rand.New(rand.NewPCG(isoFineSeed, uint64(len(mix.input))^uint64(phase)))
	n := FFTSize(fs)
	hop := n / 4
	win := sqrtHann(n)
	front := newIsoFront(fs, n, hop, win)
	L := front.W + 1
	fine := newIsoFine(fs, n, L)
	K := fine.K
	fr := newIsoFramer(n, hop, win)
	pow := make([]float64, n/2+1)
	powOf := func(x []float64, f int) []float64 { return fr.pow(x, f, pow) }
	frames := (len(mix.input) + hop - 1) / hop
	S, V := make([][]float64, frames), make([][]float64, frames)
	ideal := make([][]float64, frames) // the band IRM, with -fineoracle
	es, en := make([]float64, isoBands), make([]float64, isoBands)
	var mean float64
	cleanFront := newIsoFront(fs, n, hop, win) // for the target's harmonicity
	harm := make([]float64, frames)
	for f := range frames {
		S[f] = slices.Clone(powOf(mix.clean, f)[:K])
		harm[f] = cleanFront.harmonicity(pow)
		if oracle {
			front.bands.energies(pow, es)
		}
		V[f] = slices.Clone(powOf(mix.noise, f)[:K])
		if oracle {
			front.bands.energies(pow, en)
			ideal[f] = make([]float64, isoBands)
			for b := range es {
				ideal[f][b] = 1
				if es[b]+en[b] > 0 {
					ideal[f][b] = es[b] / (es[b] + en[b])
				}
			}
		}
		for k := range K {
			mean += S[f][k] + V[f][k]
		}
	}
	mean /= float64(frames * K)
	if mean <= 0 {
		return
	}
	types := isoFrameTypesOf(S, harm)
	R := L + 2
	band := make([][]float64, R)
	for i := range band {
		band[i] = make([]float64, isoBands)
	}
	sm := make([]float64, isoBands)
	g := make([]float64, n/2+1)
	gains := isoGains{recNets: opt.recs, recAvg: opt.recAvg}
	for f := 0; f < frames+L; f++ {
		p := powOf(mix.input, f)
		front.push(p)
		fine.push(p, front)
		if q := f - front.W; q >= 0 {
			if oracle && q < frames {
				copy(band[q%R], ideal[q])
			} else {
				gains.bandGains(front, int64(q), band[q%R])
			}
		}
		o := f - L
		if o < 0 || o >= frames || o%every != phase {
			continue
		}
		b0, b1, b2 := band[max(o-1, 0)%R], band[o%R], band[(o+1)%R]
		for i := range sm {
			sm[i] = 0.25*b0[i] + 0.5*b1[i] + 0.25*b2[i]
			if noise > 0 {
				v := min(1-1e-6, max(1e-6, sm[i]))
				sm[i] = 1 / (1 + math.Exp(-(math.Log(v/(1-v)) + noise*rn.NormFloat64())))
			}
		}
		front.bands.spread(sm, g)
		fine.features(int64(o), g)
		for k := range K {
			s, v := S[o][k], V[o][k]
			y := 1.0
			if s+v > 0 {
				y = s / (s + v)
			}
			for i := range isoFineIn {
				set.x = append(set.x, fine.x[i*fine.C+k])
			}
			set.y = append(set.y, float32(y))
			e := s + v
			if opt.target {
				e = 2 * s // the mean of s over the mix is about half the mean of s+v
			}
			set.w = append(set.w, float32(min(opt.maxW, e/mean)))
			set.kind = append(set.kind, isoKind(slices.Index(isoKinds, mix.kind)))
			set.e = append(set.e, float32((s+v)/mean))
			set.bin = append(set.bin, uint8(k))
			set.ftype = append(set.ftype, types[o])
		}
	}
}

// isoFineExamplesOf makes n mixes of m with r (isoMixes' draws) and
// takes their examples, a few mixes at a time: a mix's samples are
// megabytes, its examples far fewer.
func isoFineExamplesOf(m isoMaterial, n int, r *rand.Rand, every int, o isoFineOpts) isoFineSet {
	var s isoFineSet
	for at := 0; at < n; at += 16 {
		mixes := isoMixes(m, min(16, n-at), r)
		parts := make([]isoFineSet, len(mixes))
		parallel(len(mixes), func(i int) { isoFineExamples(mixes[i], every, (at+i)%every, o, &parts[i]) })
		for _, p := range parts {
			s.x = append(s.x, p.x...)
			s.y = append(s.y, p.y...)
			s.w = append(s.w, p.w...)
			s.kind = append(s.kind, p.kind...)
			s.e = append(s.e, p.e...)
			s.bin = append(s.bin, p.bin...)
			s.ftype = append(s.ftype, p.ftype...)
		}
	}
	return s
}

// isoFineScratch holds one bin's activations.
type isoFineScratch struct {
	x  [isoFineIn]float32
	h1 [isoFineH1]float32
	h2 [isoFineH2]float32
}

// bin is the network's gain of one bin from its raw features, the
// reference forwardBins is held to bit for bit (TestIsoFineBinsAreBin)
// and the fit differentiates.
func (m *isoFineNet) bin(in []float32, s *isoFineScratch) float32 {
	for i, v := range in[:isoFineIn] {
		s.x[i] = (v - m.mean[i]) * m.scale[i]
	}
	for j := range s.h1 {
		a := m.b1[j]
		for i, v := range s.x {
			a += m.w1[j][i] * v
		}
		s.h1[j] = tanh32(a)
	}
	for j := range s.h2 {
		a := m.b2[j]
		for i, v := range s.h1 {
			a += m.w2[j][i] * v
		}
		s.h2[j] = tanh32(a)
	}
	a := m.b3[0]
	for i, v := range s.h2 {
		a += m.w3[i] * v
	}
	return float32(1 / (1 + math.Exp(-float64(a))))
}

func isoFineLoss(m *isoFineNet, s isoFineSet) (float64, map[string]float64) {
	var sc isoFineScratch
	var all float64
	sum, cnt := map[string]float64{}, map[string]int{}
	for i := range s.len() {
		d := float64(m.bin(s.x[i*isoFineIn:(i+1)*isoFineIn], &sc) - s.y[i])
		e := float64(s.w[i]) * d * d
		all += e
		sum[s.kind[i].String()] += e
		cnt[s.kind[i].String()]++
	}
	by := map[string]float64{}
	for k, v := range sum {
		by[k] = v / float64(cnt[k])
	}
	return all / float64(max(1, s.len())), by
}

// isoFineFit fits a per-bin network on train (mlpFit), keeping the
// weights of the epoch that did best on val; it logs the losses.
func isoFineFit(t *testing.T, train, val isoFineSet) (isoFineNet, float64, int) {
	m := new(isoFineNet)
	var sc isoFineScratch
	n := mlpCarve(isoFineFlat(m), isoFineIn, isoFineH1, isoFineH2, func(x []float32) (float32, []float32, []float32, []float32) {
		return m.bin(x, &sc), sc.x[:], sc.h1[:], sc.h2[:]
	})
	loss, epoch := mlpFit(t, n, train.x, train.y, train.w, mlpOpts{
		seed:   isoFineSeed,
		epochs: isoFineEpochs,
		decay:  isoFitDecay,
		val:    func() (float64, map[string]float64) { return isoFineLoss(m, val) },
	})
	return *m, loss, epoch
}

func TestFitIsoFine(t *testing.T) {
	if !*fineFit {
		t.Skip("fits speech isolation's per-bin network and writes isofinemodel.go with -finefit")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	fitM, valM := isoSplit(c)
	valOpt := isoFineVal
	var recs []*isoRecNet
	var recAvg float64
	switch {
	case *fineRec != "" && *fineAvg:
		t.Fatal("-finerec and -fineavg: one or the other")
	case *fineRec != "":
		rec := new(isoRecNet)
		if err := mlpLoad(*fineRec, recFlat(rec)); err != nil {
			t.Fatal(err)
		}
		recs = []*isoRecNet{rec}
	case *fineAvg:
		recs, recAvg = isoRecModels, isoRecAvg
	}
	valOpt.recs, valOpt.recAvg = recs, recAvg
	val := isoFineExamplesOf(valM, isoFitVal, rand.New(rand.NewPCG(isoFitSeed, 0x7a1)), isoFineEvery, valOpt)
	mat := fitM
	switch *fineMat {
	case "fit":
		if *fitExtra != "" {
			isoAddExtra(t, &mat)
		}
	case "val":
		mat = valM
	case "all":
		if *fitExtra != "" {
			isoAddExtra(t, &mat)
		}
		mat.clips = append(slices.Clone(mat.clips), valM.clips...)
	default:
		t.Fatalf("-finemat %q: fit or val", *fineMat)
	}
	train := isoFineExamplesOf(mat, isoFitTrain, rand.New(rand.NewPCG(isoFineSeed, 0x5eed)), isoFineEvery, isoFineOpts{oracle: *fineOracle, noise: *fineNoise, target: *fineWeight == "target", maxW: *fineMaxW, recs: recs, recAvg: recAvg})
	t.Logf("%d bins to fit on, %d to validate on", train.len(), val.len())
	var tb float64
	for i := range train.len() {
		d := float64(train.x[i*isoFineIn] - train.y[i])
		tb += float64(train.w[i]) * d * d
	}
	t.Logf("the band gains alone: fitting loss %.4f", tb/float64(max(1, train.len())))
	// The loss to beat: the band gain as it comes (input 0).
	var sum float64
	byK, cnt := map[string]float64{}, map[string]int{}
	for i := range val.len() {
		d := float64(val.x[i*isoFineIn] - val.y[i])
		e := float64(val.w[i]) * d * d
		sum += e
		byK[val.kind[i].String()] += e
		cnt[val.kind[i].String()]++
	}
	bandLoss := sum / float64(max(1, val.len()))
	t.Logf("the band gains alone: validation %.4f (babble %.4f, music %.4f, noise %.4f)", bandLoss, byK["babble"]/float64(cnt["babble"]), byK["music"]/float64(cnt["music"]), byK["noise"]/float64(cnt["noise"]))
	m, loss, epoch := isoFineFit(t, train, val)
	t.Logf("validation loss %.4f at epoch %d (the band gains alone %.4f)", loss, epoch, bandLoss)
	isoFineReport(t, &m, val)
	header := isoFineHeader(train.len(), val.len(), epoch, loss, bandLoss)
	src := isoFineModelSource(&m, header)
	out := "isofinemodel.go"
	if *fineSave != "" {
		if err := mlpSave(*fineSave, isoFineFlat(&m)); err != nil {
			t.Fatal(err)
		}
		out = *fineSave + ".go"
	}
	t.Logf("%s: %d bytes", out, len(src))
	if err := os.WriteFile(out, src, 0o644); err != nil {
		t.Fatal(err)
	}
}

// isoFineHeader is the comment of isofinemodel.go on a fit of train
// bins validated on val, its kept epoch and validation loss, and the
// band gains' validation loss.
func isoFineHeader(train, val, epoch int, loss, bandLoss float64) string {
	return fmt.Sprintf("isoFineModel was fitted (-finemat %s -finenoise %g -fineweight %s -finemaxweight %g) on\n"+
		"%d bins under %d Hz of frames (every %d-th; the context: %d frames either side, %d\n"+
		"neighbour bins) of %d mixes made as isoModel's (isomodel.go) from the tuning half (and\n"+
		"ktuberling-data's speakers: -fitextra %q), drawn with seed %d, their band gains %s;\n"+
		"validated on isoModel's validation mixes (%d bins). AdamW (decay %g), batches of %d,\n"+
		"%d epochs; kept epoch %d: validation loss %.4f (squared error of the bins' gains weighted by\n"+
		"their energy; the band gains alone %.4f).",
		*fineMat, *fineNoise, *fineWeight, *fineMaxW, train, isoFineTopHz, isoFineEvery, isoFineCtx, isoFineNb, isoFitTrain, *fitExtra, isoFineSeed, isoFineGainsOf(), val, isoFitDecay, isoFitBatch, isoFineEpochs, epoch, loss, bandLoss)
}

// isoFineGainsOf says whose band gains the mixes' were, as the flags
// chose.
func isoFineGainsOf() string {
	switch {
	case *fineAvg:
		return fmt.Sprintf("the product's (-fineavg:\nisoRecModels' mean averaged with isoModel's, isoRecAvg %g)", isoRecAvg)
	case *fineRec != "":
		return "from the network with a state of -finerec alone"
	}
	return "from isoModel"
}

// isoFineModelSource returns isofinemodel.go for m.
func isoFineModelSource(m *isoFineNet, header string) []byte {
	return mlpModel{command: "go test ./dsp/spectral -run TestFitIsoFine -finefit", name: "isoFineModel", typ: "isoFineNet",
		in: "isoFineIn", h1: "isoFineH1", h2: "isoFineH2", digits: -1}.source(mlpCarve(isoFineFlat(m), isoFineIn, isoFineH1, isoFineH2, nil), header)
}

// loadIsoFineNet reads a network written by TestFitIsoFine -finesave.
func loadIsoFineNet(path string) (*isoFineNet, error) {
	m := new(isoFineNet)
	return m, mlpLoad(path, isoFineFlat(m))
}

// isoFineFlat is m's weights as one slice (the struct is float32 arrays
// alone).
func isoFineFlat(m *isoFineNet) []float32 {
	return unsafe.Slice(&m.mean[0], unsafe.Sizeof(*m)/4)
}

// isoFineReport logs where m's gains miss the ideal mask on set (its
// loss's weights), beside the band gains alone: by kind of interferer,
// then by kind and frequency and by kind and the target's frame type;
// for each the share of the stage's loss, the band gains' and the
// stage's weighted mean squared error, and the stage's error split into
// bias (the weighted mean of gain - mask: > 0 too high) and spread
// (the rest).
func isoFineReport(t *testing.T, m *isoFineNet, set isoFineSet) {
	t.Log("the loss's weights (capped):")
	isoFineReportW(t, m, set, set.w)
	t.Log("the output's squared error (the weights uncapped):")
	isoFineReportW(t, m, set, set.e)
}

func isoFineReportW(t *testing.T, m *isoFineNet, set isoFineSet, ws []float32) {
	hz := float64(fs) / float64(FFTSize(fs))
	freq := func(k uint8) string {
		f := float64(k) * hz
		for _, top := range []float64{250, 500, 1000, 1500} {
			if f < top {
				return fmt.Sprintf("<%4.0f Hz", top)
			}
		}
		return "<2000 Hz"
	}
	type acc struct{ w, band, stage, bias float64 }
	groups := map[string]*acc{}
	var total float64
	var sc isoFineScratch
	for i := range set.len() {
		x := set.x[i*isoFineIn : (i+1)*isoFineIn]
		w, y := float64(ws[i]), float64(set.y[i])
		d := float64(m.bin(x, &sc)) - y
		db := float64(x[0]) - y
		total += w * d * d
		k := set.kind[i].String()
		for _, name := range []string{k, k + " " + freq(set.bin[i]), k + " " + set.ftype[i].String()} {
			a := groups[name]
			if a == nil {
				a = new(acc)
				groups[name] = a
			}
			a.w += w
			a.band += w * db * db
			a.stage += w * d * d
			a.bias += w * d
		}
	}
	t.Logf("%-22s %6s %8s %8s %8s %8s", "", "share", "band", "stage", "bias", "spread")
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		a := groups[name]
		if a.w <= 0 {
			continue
		}
		bias := a.bias / a.w
		t.Logf("%-22s %5.1f%% %8.4f %8.4f %+8.4f %8.4f", name, 100*a.stage/max(total, 1e-30), a.band/a.w, a.stage/a.w, bias, a.stage/a.w-bias*bias)
	}
}

var fineDiag = flag.Bool("finediag", false, "TestIsoFineDiag: where the per-bin stage misses the ideal mask on the validation mixes")

// TestIsoFineDiag reports (isoFineReport) where the per-bin stage
// (isofinemodel.go, or the first network of -finenets) misses the ideal
// mask on TestFitIsoFine's validation mixes, speakers neither network
// was fitted on:
//
//	go test ./dsp/spectral -run TestIsoFineDiag -v -args -finediag
func TestIsoFineDiag(t *testing.T) {
	if !*fineDiag {
		t.Skip("reports where the per-bin stage misses the ideal mask on the tuning half with -finediag")
	}
	m := &isoFineModel
	if *isoFineNets != "" {
		var err error
		if m, err = loadIsoFineNet(strings.Split(*isoFineNets, ",")[0]); err != nil {
			t.Fatal(err)
		}
	}
	c := realaudio.Load(t, realaudio.Tuning)
	_, valM := isoSplit(c)
	val := isoFineExamplesOf(valM, isoFitVal, rand.New(rand.NewPCG(isoFitSeed, 0x7a1)), isoFineEvery, isoFineVal)
	isoFineReport(t, m, val)
}
