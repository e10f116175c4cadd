package spectral

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"unsafe"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// TestFitIsolation fits speech isolation's network (isonet.go) and
// writes isomodel.go:
//
//	go test ./dsp/spectral -run TestFitIsolation -fit
//
// from the tuning half of the real-recording corpus only. Its speakers
// are split in two, every fourth (sorted) for validation (their voices
// are in the babble of both parts), and every piece
// of music and noise by time, its last quarter for validation. The part
// to fit on gets speakers from outside the corpus too (isoextra_test.go,
// -fitextra: ktuberling-data's, the speech of isoFitExtraShare of the
// mixes and voices in the babble). Each mix
// is a clip of one speaker under babble (four to eight other speakers of
// the same part, looped from random points), a piece of music or a real
// noise (two in five, two in five, one in five) at an SNR drawn from 0 to
// 20 dB (one mix in twelve from 30 to 45 dB, so that the mask learns to
// open on clean speech), the whole at a level drawn from -18 to +6 dB
// around the corpus's. Of every isoFitEvery-th frame, isoFitBands bands drawn at random are
// examples whose target is each band's Wiener gain S/(S+N) from the clean speech and the
// interferer as mixed, and whose loss is the squared error of the gains
// weighted by the band's energy (over the mix's mean band energy, at most
// isoFitMaxWeight): the error of the output, which SI-SDR counts. The network is fitted by Adam on
// mini-batches of isoFitBatch (AdamW, isoFitDecay), with the seed isoFitSeed, for isoFitEpochs
// epochs; the weights of the epoch with the lowest validation loss are
// kept, or their mean over the epochs at the lower rate if it validates
// better. -fitseed fits on other mixes with another start, -fitmaxweight
// caps the weights otherwise, -fitsave keeps the network for
// TestIsolationCeiling -isoceilnets.
var fitIsolation = flag.Bool("fit", false, "TestFitIsolation: fit speech isolation's network on the tuning half and write isomodel.go")

var (
	fitSeed      = flag.Uint64("fitseed", isoFitSeed, "TestFitIsolation: the seed of the fitting mixes and of the fit (the validation mixes keep isoFitSeed)")
	fitMaxWeight = flag.Float64("fitmaxweight", isoFitMaxWeight, "TestFitIsolation: the cap of a band's weight in the loss, its energy over the mix's mean band energy")
	fitTrain     = flag.Int("fittrain", isoFitTrain, "TestFitIsolation: the number of mixes to fit on")
	fitKind      = flag.String("fitkind", "", "TestFitIsolation: fit on the mixes of this interferer only (babble, music, noise: a specialist), of -fittrain drawn")
	fitDecay     = flag.Float64("fitdecay", isoFitDecay, "TestFitIsolation: AdamW's decoupled weight decay")
	fitSave      = flag.String("fitsave", "", "TestFitIsolation: also write the kept network as a gob file (TestIsolationCeiling -isoceilnets reads it)")
)

const (
	isoFitSeed   = 30
	isoFitEvery  = 4
	isoFitBatch  = 128
	isoFitEpochs = 16
	isoFitDecay  = 0.02 // AdamW's decoupled weight decay
	isoFitTrain  = 300  // mixes
	isoFitVal    = 60
	isoFitRate   = 1e-3
	// isoFitMaxWeight caps the weight of a band in the loss, its energy
	// over the mix's mean band energy.
	isoFitMaxWeight = 10
	isoFitBands     = 12 // bands drawn from each frame
)

// isoMaterial is the speech and interferers a set of mixes is made from.
type isoMaterial struct {
	clips  []realaudio.Clip
	talker map[string][]float64 // each speaker's clips end to end
	names  []string
	music  [][]float64
	noise  [][]float64
	// extra are clips of speakers from outside the corpus
	// (isoextra_test.go), the speech of a share extraShare of the mixes.
	extra      []realaudio.Clip
	extraShare float64
	// babble, if not nil, makes the babble of a mix (n samples, none of
	// exclude's voice) instead of 4 to 8 of names' talkers as they speak.
	babble func(n int, exclude string, seed uint64) []float64
	// aug perturbs the target speech (and babble talkers) of the mixes:
	// set on the part to fit on only (isoaug_test.go).
	aug isoAug
}

// isoSplit splits the tuning half's material into a part to fit on and
// a part to validate on.
func isoSplit(c *realaudio.Corpus) (fit, val isoMaterial) {
	var speakers []string
	for _, cl := range c.Clips() {
		if !slices.Contains(speakers, cl.Speaker) {
			speakers = append(speakers, cl.Speaker)
		}
	}
	sort.Strings(speakers)
	// The babble of both parts is of all the other speakers: a part of
	// three speakers would make its babble of two.
	talker := map[string][]float64{}
	for _, cl := range c.Clips() {
		m := &fit
		if slices.Index(speakers, cl.Speaker)%4 == 3 {
			m = &val
		}
		m.clips = append(m.clips, cl)
		talker[cl.Speaker] = append(talker[cl.Speaker], cl.Samples...)
	}
	fit.talker, val.talker = talker, talker
	fit.names, val.names = speakers, speakers
	cut := func(x []float64) ([]float64, []float64) { h := len(x) * 3 / 4; return x[:h], x[h:] }
	// Every fourth piece of music goes whole to validation: the held-out
	// half's music is other pieces, and a piece's last quarter would
	// reward a network that learned its first three by heart.
	for i, m := range c.Music {
		if !*fitValPieces {
			a, b := cut(m.Samples)
			fit.music, val.music = append(fit.music, a), append(val.music, b)
			continue
		}
		if i%4 == 3 {
			val.music = append(val.music, m.Samples)
		} else {
			fit.music = append(fit.music, m.Samples)
		}
	}
	for _, n := range c.Noises {
		a, b := cut(n.Samples)
		fit.noise, val.noise = append(fit.noise, a), append(val.noise, b)
	}
	return fit, val
}

// isoMix is one training mix: input = clean + noise.
type isoMix struct {
	kind                string
	input, clean, noise []float64
}

func meanPower(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s / float64(max(1, len(x)))
}

// isoMixes makes n mixes of m with r.
func isoMixes(m isoMaterial, n int, r *rand.Rand) []isoMix {
	out := make([]isoMix, n)
	for i := range out {
		cl := m.clips[r.IntN(len(m.clips))]
		if len(m.extra) > 0 && r.Float64() < m.extraShare {
			cl = m.extra[r.IntN(len(m.extra))]
		}
		clean := cl.Samples
		if m.aug.on() {
			clean = m.aug.target(clean, r)
		}
		ln := len(clean)
		var noise []float64
		var kind string
		switch u := r.Float64(); {
		case u < 0.4 && m.babble != nil:
			kind = "babble"
			noise = m.babble(ln, cl.Speaker, r.Uint64())
		case u < 0.4:
			kind = "babble"
			noise = make([]float64, ln)
			var others []string
			for _, s := range m.names {
				if s != cl.Speaker {
					others = append(others, s)
				}
			}
			r.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
			for _, s := range others[:min(len(others), 4+r.IntN(5))] {
				x := m.talker[s]
				v := m.aug.talker(x, ln, r.IntN(len(x)), r)
				g := 1 / math.Sqrt(max(realaudio.ActiveLevel(v), 1e-12))
				for j := range noise {
					noise[j] += g * v[j]
				}
			}
		case u < 0.8:
			kind = "music"
			x := m.music[r.IntN(len(m.music))]
			noise = realaudio.Loop(x, ln, r.IntN(len(x)))
		default:
			kind = "noise"
			x := m.noise[r.IntN(len(m.noise))]
			noise = realaudio.Loop(x, ln, r.IntN(len(x)))
		}
		snr := 20 * r.Float64()
		if r.IntN(12) == 0 {
			snr = 30 + 15*r.Float64()
		}
		g := math.Sqrt(realaudio.ActiveLevel(clean) / (math.Pow(10, snr/10) * max(meanPower(noise), 1e-20)))
		level := math.Pow(10, (-18+24*r.Float64())/20)
		mx := isoMix{kind: kind, input: make([]float64, ln), clean: make([]float64, ln), noise: make([]float64, ln)}
		for j := range mx.input {
			mx.clean[j] = level * clean[j]
			mx.noise[j] = level * g * noise[j]
			mx.input[j] = mx.clean[j] + mx.noise[j]
		}
		out[i] = mx
	}
	return out
}

// isoSet is a set of examples: features and target band gains, flat.
type isoSet struct {
	x, y, w []float32
	kind    []string
}

func (s *isoSet) len() int { return len(s.y) }

// isoTargetEnergies frames mix's clean speech and interferer with powOf,
// as the isolator frames its input, and returns the frame count, their band
// energies (frames*isoBands each) and the mean of the two together, from
// which the fitting programs make their targets and loss weights.
func isoTargetEnergies(front *isoFront, mix isoMix, hop int, powOf func(x []float64, f int) []float64) (frames int, es, en []float64, mean float64) {
	frames = (len(mix.input) + hop - 1) / hop
	es, en = make([]float64, frames*isoBands), make([]float64, frames*isoBands)
	for f := range frames {
		front.bands.energies(powOf(mix.clean, f), es[f*isoBands:])
		front.bands.energies(powOf(mix.noise, f), en[f*isoBands:])
	}
	for i := range es {
		mean += es[i] + en[i]
	}
	return frames, es, en, mean / float64(len(es))
}

// isoExamples frames mix as the isolator does (isoFront on the input,
// the same STFT on the clean speech and the interferer for the target)
// and adds every every-th frame, from phase on, to set.
func isoExamples(mix isoMix, every, phase int, set *isoSet) {
	n := FFTSize(fs)
	hop := n / 4
	win := sqrtHann(n)
	front := newIsoFront(fs, n, hop, win)
	if *fitTruePitch {
		front.pitchOf = isoTruePitch(mix.clean) // isodiag_test.go
	}
	fr := newIsoFramer(n, hop, win)
	pow := make([]float64, n/2+1)
	powOf := func(x []float64, f int) []float64 { return fr.pow(x, f, pow) }
	frames, es, en, mean := isoTargetEnergies(front, mix, hop, powOf)
	if mean <= 0 {
		return
	}
	feat := make([]float32, isoBands*isoIn)
	r := rand.New(rand.NewPCG(isoFitSeed, uint64(len(mix.input))^uint64(phase)))
	for f := 0; f < frames+front.W; f++ {
		front.push(powOf(mix.input, f))
		q := f - front.W
		if q < 0 || q >= frames || q%every != phase {
			continue
		}
		front.features(int64(q), feat)
		for range isoFitBands {
			b := r.IntN(isoBands)
			s, n := es[q*isoBands+b], en[q*isoBands+b]
			y := 1.0
			if s+n > 0 {
				y = s / (s + n)
			}
			set.x = append(set.x, feat[b*isoIn:(b+1)*isoIn]...)
			set.y = append(set.y, float32(y))
			set.w = append(set.w, float32(min(*fitMaxWeight, (s+n)/mean)))
			set.kind = append(set.kind, mix.kind)
		}
	}
}

// isoExamplesOf makes n mixes of m with r, of interferer kind only if
// kind is not empty, and returns their examples (every every-th frame,
// from mix i's phase i%every on). The mixes are made and framed
// isoFitChunk at a time, so that only their examples stay in memory
// (all the mixes at once took 6.7 GB for 300 of them): the examples are
// the same as of all the mixes made at once.
func isoExamplesOf(m isoMaterial, n int, r *rand.Rand, every int, kind string) isoSet {
	var s isoSet
	kept := 0
	for at := 0; at < n; at += isoFitChunk {
		mixes := isoMixes(m, min(isoFitChunk, n-at), r)
		if kind != "" {
			mixes = slices.DeleteFunc(mixes, func(m isoMix) bool { return m.kind != kind })
		}
		parts := make([]isoSet, len(mixes))
		parallel(len(mixes), func(i int) { isoExamples(mixes[i], every, (kept+i)%every, &parts[i]) })
		kept += len(mixes)
		for _, p := range parts {
			s.x = append(s.x, p.x...)
			s.y = append(s.y, p.y...)
			s.w = append(s.w, p.w...)
			s.kind = append(s.kind, p.kind...)
		}
	}
	return s
}

// isoFitChunk is how many mixes isoExamplesOf holds at once.
const isoFitChunk = 16

// isoLoss is the mean squared error of the band gains over the set, by
// kind of interferer and overall.
func isoLoss(m *isoNet, s isoSet) (all float64, byKind map[string]float64) {
	var sc isoScratch
	sum := map[string]float64{}
	cnt := map[string]int{}
	for i := range s.len() {
		d := float64(m.band(s.x[i*isoIn:(i+1)*isoIn], &sc) - s.y[i])
		e := float64(s.w[i]) * d * d
		all += e
		sum[s.kind[i]] += e
		cnt[s.kind[i]]++
	}
	byKind = map[string]float64{}
	for k, v := range sum {
		byKind[k] = v / float64(cnt[k])
	}
	return all / float64(max(1, s.len())), byKind
}

// isoFit fits a network on train (mlpFit), keeping the weights of the
// epoch that did best on val, or their mean over the epochs at the lower
// rate if that validates better; it logs the losses.
//
// fold, if not empty, is the validation set of the pool's voices held
// back (-fitfold): logged each epoch and for the kept weights, never
// chosen on, so that it measures the fit on voices neither fitted nor
// chosen on.
func isoFit(t *testing.T, train, val, fold isoSet) (isoNet, float64, int) {
	m := new(isoNet)
	params := func(n *isoNet) [][]float32 { return isoNetView(n).params() }
	pm := params(m)
	swa, swaN := new(isoNet), 0
	loss, epoch := mlpFit(t, isoNetView(m), train.x, train.y, train.w, mlpOpts{
		seed:   *fitSeed,
		epochs: isoFitEpochs,
		decay:  *fitDecay,
		val:    func() (float64, map[string]float64) { return isoLoss(m, val) },
		epoch: func(epoch int) {
			isoLogFold(t, fmt.Sprintf("epoch %d", epoch), m, fold)
			if epoch <= isoFitEpochs*2/3 {
				return
			}
			// The weights averaged over the epochs at the lower rate.
			swaN++
			for k, p := range params(swa) {
				for i, v := range pm[k] {
					p[i] += (v - p[i]) / float32(swaN)
				}
			}
		},
	})
	swa.mean, swa.scale = m.mean, m.scale
	sl, slBy := isoLoss(swa, val)
	t.Logf("the weights averaged over the last %d epochs: validation %.4f (babble %.4f, music %.4f, noise %.4f)", swaN, sl, slBy["babble"], slBy["music"], slBy["noise"])
	isoLogFold(t, "the averaged weights", swa, fold)
	if sl < loss {
		return *swa, sl, 0
	}
	return *m, loss, epoch
}

// isoLogFold logs m's loss on the fold's validation set, if any.
func isoLogFold(t *testing.T, what string, m *isoNet, fold isoSet) {
	if fold.len() == 0 {
		return
	}
	l, by := isoLoss(m, fold)
	t.Logf("%s: fold %d validation %.4f (babble %.4f, music %.4f, noise %.4f)", what, *fitFold, l, by["babble"], by["music"], by["noise"])
}

// isoNetView is m as mlpFit fits it.
func isoNetView(m *isoNet) *mlpNet {
	var sc isoScratch
	return mlpCarve(isoNetFlat(m), isoIn, isoH1, isoH2, func(x []float32) (float32, []float32, []float32, []float32) {
		return m.band(x, &sc), sc.x[:], sc.h1[:], sc.h2[:]
	})
}

func TestFitIsolation(t *testing.T) {
	if !*fitIsolation {
		t.Skip("fits speech isolation's network and writes isomodel.go with -fit")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	fitM, valM := isoSplit(c)
	// The validation mixes are drawn first, from a generator of their
	// own, so that they stay the same whatever is added to fit on.
	val := isoExamplesOf(valM, isoFitVal, rand.New(rand.NewPCG(isoFitSeed, 0x7a1)), isoFitEvery, "")
	var foldM *isoMaterial
	if *fitFold > 0 {
		if *fitFold >= len(isoFolds) || *fitExtra == "" {
			t.Fatalf("-fitfold %d: folds 1 to %d, of -fitextra's pool", *fitFold, len(isoFolds)-1)
		}
		foldM = &isoMaterial{music: valM.music, noise: valM.noise}
	}
	if *fitExtra != "" {
		isoAddExtraFold(t, &fitM, foldM)
	}
	fitM.aug = isoAugFlags(t)
	var fold isoSet
	if foldM != nil {
		fold = isoExamplesOf(*foldM, isoFitVal, rand.New(rand.NewPCG(isoFitSeed, 0xf01d)), isoFitEvery, "")
		var fs []string
		for _, c := range foldM.clips {
			if !slices.Contains(fs, c.Speaker) {
				fs = append(fs, c.Speaker)
			}
		}
		t.Logf("fold %d: %d clips of %v held back, %d examples", *fitFold, len(foldM.clips), fs, fold.len())
		isoLogFold(t, "the committed network (isomodel.go)", &isoModel, fold)
		l, by := isoLoss(&isoModel, val)
		t.Logf("the committed network (isomodel.go): validation %.4f (babble %.4f, music %.4f, noise %.4f)", l, by["babble"], by["music"], by["noise"])
	}
	r := rand.New(rand.NewPCG(*fitSeed, 0x5eed))
	train := isoExamplesOf(fitM, *fitTrain, r, isoFitEvery, *fitKind)
	speakersOf := func(cs []realaudio.Clip) []string {
		var s []string
		for _, c := range cs {
			if !slices.Contains(s, c.Speaker) {
				s = append(s, c.Speaker)
			}
		}
		return s
	}
	fitS, valS := speakersOf(fitM.clips), speakersOf(valM.clips)
	t.Logf("music: %d pieces to fit on, %d to validate on", len(fitM.music), len(valM.music))
	t.Logf("%d clips of %d speakers to fit on, %d of %v to validate on; %d and %d examples", len(fitM.clips), len(fitS), len(valM.clips), valS, train.len(), val.len())
	var unit isoNet // a mask open everywhere: the loss to beat
	unit.b3[0] = 20
	open, openBy := isoLoss(&unit, val)
	t.Logf("a mask open everywhere: validation loss %.4f %v", open, openBy)
	m, loss, epoch := isoFit(t, train, val, fold)
	t.Logf("validation loss %.4f at epoch %d (a mask open everywhere: %.4f)", loss, epoch, open)
	kept := fmt.Sprintf("epoch %d", epoch)
	if epoch == 0 {
		kept = fmt.Sprintf("the weights averaged over epochs %d-%d", isoFitEpochs*2/3+1, isoFitEpochs)
	}
	augNote := ""
	if fitM.aug.on() {
		augNote = fmt.Sprintf("; the fitting speech perturbed: %v", fitM.aug)
	}
	header := fmt.Sprintf("isoModel was fitted on %d bands of frames (12 of every %d-th) of %d mixes made from the\n"+
		"tuning half of the real-recording corpus (internal/realaudio): %d clips of %d\n"+
		"speakers, and %d clips of %d speakers from outside the corpus (%s of the mixes' speech;\n"+
		"isoextra_test.go: %s), under babble of 4 to 8 of the others, music or a real noise (2:2:1) at\n"+
		"0 to 20 dB SNR (1 in 12 at 30 to 45 dB), levels -18 to +6 dB around the corpus's,\n"+
		"the last quarter of each piece and noise and a quarter of the speakers kept for\n"+
		"validation (%d bands)%s. AdamW (decay %g), batches of %d, seed %d, %d epochs; kept %s:\n"+
		"validation loss %.4f (squared error of the band gains weighted by the band's\n"+
		"energy; a mask open everywhere %.4f). The held-out half's speakers, music\n"+
		"and noises are others than these (internal/realaudio splits by source): what\n"+
		"the network gains there is in isolate_test.go (TestRealSpeechIsolation).",
		train.len(), isoFitEvery, *fitTrain, len(fitM.clips), len(fitS), len(fitM.extra), len(speakersOf(fitM.extra)),
		strconv.FormatFloat(fitM.extraShare, 'g', -1, 64), isoExtraPackages(), val.len(), augNote, *fitDecay, isoFitBatch, *fitSeed, isoFitEpochs, kept, loss, open)
	if *fitSave != "" {
		if err := mlpSave(*fitSave, isoNetFlat(&m)); err != nil {
			t.Fatal(err)
		}
	}
	src := isoModelSource(&m, header)
	t.Logf("isomodel.go: %d bytes", len(src))
	if err := os.WriteFile("isomodel.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
}

func isoNetParts(m *isoNet) [][]float32 {
	p := [][]float32{m.mean[:], m.scale[:]}
	for j := range m.w1 {
		p = append(p, m.w1[j][:])
	}
	p = append(p, m.b1[:])
	for j := range m.w2 {
		p = append(p, m.w2[j][:])
	}
	return append(p, m.b2[:], m.w3[:], m.b3[:])
}

// loadIsoNet reads a network written by TestFitIsolation -fitsave, or
// returns a copy of the committed one (isomodel.go) for "isomodel".
func loadIsoNet(path string) (*isoNet, error) {
	m := new(isoNet)
	if path == "isomodel" {
		*m = isoModel
		return m, nil
	}
	return m, mlpLoad(path, isoNetFlat(m))
}

// isoNetFlat is m's weights as one slice (the struct is float32 arrays
// alone, in mlpCarve's order).
func isoNetFlat(m *isoNet) []float32 {
	return unsafe.Slice(&m.mean[0], unsafe.Sizeof(*m)/4)
}

// isoModelSource returns isomodel.go for m.
func isoModelSource(m *isoNet, header string) []byte {
	return mlpModel{command: "go test ./dsp/spectral -run TestFitIsolation -fit", name: "isoModel", typ: "isoNet",
		in: "isoIn", h1: "isoH1", h2: "isoH2", digits: 6}.source(isoNetView(m), header)
}
