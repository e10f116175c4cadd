package spectral

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestFitDvMask fits the learned reverb mask (dvmask.go) and writes
// dvmaskmodel.go, from the tuning half's speech only:
//
//	flock /tmp/audiopost-fit.lock nice go test ./dsp/spectral -run TestFitDvMask -v -timeout 3h -args -fitdvmask
//
// The speakers are split (sorted, every fourth to validation), and so are
// the rooms: image-source rooms drawn as TestDeverbWideRooms draws its
// own but over a wider range (RT60 0.3 to 1.2 s, the talker 0.8 to 3 m
// from the microphone; seeds dvMaskFitSeed and +1, never the wide set's
// 30) and sox's reverb at random settings, three mixes in four in an
// image-source room (-dvmasksoxin). Each mix runs through the Profiler and the Denoiser
// (Static, noise reduction automatic in one mix in two, off in the
// other) as the product runs them; where the room model puts the room
// at dvMaskDRR or under, every second frame's units are examples: the
// features the stage computes, the target the gain that turns the
// unit's power into the dry speech's (within 0 and 1), weighted by the
// unit's power over the mix's mean unit power (at most 20). AdamW
// (mlpFit), the epoch with the lowest validation loss kept. -dvmaskseeds
// fits several seeds side by side on the same examples (the ensembles
// dvmask.go records), -dvmaskswa also writes each fit's weights averaged
// over its last epochs, -dvmaskmaxw moves the weights' cap,
// -dvmaskfitdrr the room model's DRR under which mixes are examples,
// -dvmasksox=false leaves sox's mixes out, a seed marked d (71d) fits
// without the inputs -dvmaskdrop lists. -dvmasklong fits the model of
// the rooms over dvMaskDRR (dvmasklongmodel.go):
//
//	flock /tmp/audiopost-fit.lock nice go test ./dsp/spectral -run TestFitDvMask -v -timeout 3h -args -fitdvmask -dvmasklong -dvmaskseeds 72 -dvmasksoxin 2 -dvmaskmixes 320
var (
	fitDvMask       = flag.Bool("fitdvmask", false, "TestFitDvMask: fit the learned reverb mask on the tuning half and write dvmaskmodel.go")
	dvMaskOut       = flag.String("dvmaskout", "dvmaskmodel.go", "TestFitDvMask: the file to write")
	dvMaskMixes     = flag.Int("dvmaskmixes", 480, "TestFitDvMask: mixes to fit on (a fifth as many to validate on)")
	dvMaskRooms     = flag.Int("dvmaskrooms", 120, "TestFitDvMask: image-source rooms to fit on (a fifth as many to validate on)")
	dvMaskEpochs    = flag.Int("dvmaskepochs", 14, "TestFitDvMask: epochs")
	dvMaskSeeds     = flag.String("dvmaskseeds", "71", "TestFitDvMask: the seeds of the fits (of their start and batches), fitted side by side on the same examples; the first writes dvMaskModel to -dvmaskout (dvMaskLongModel to dvmasklongmodel.go with -dvmasklong), another seed N dvMaskModelN to dvmaskmodelN.go")
	dvMaskMaxW      = flag.Float64("dvmaskmaxw", 20, "TestFitDvMask: the most an example weighs against its mix's mean (without a cap the loss is the power of the magnitudes' error, as SI-SDR counts it)")
	dvMaskSWA       = flag.Bool("dvmaskswa", false, "TestFitDvMask: also write each fit's weights averaged over its epochs at the lowered rate (dvMaskSWAN to dvmaskswaN.go)")
	dvMaskFitDRR    = flag.Float64("dvmaskfitdrr", math.NaN(), "TestFitDvMask: mixes the room model puts at this DRR (dB) or under are examples (default dvMaskDRR, where the mask serves)")
	dvMaskSox       = flag.Bool("dvmasksox", true, "TestFitDvMask: mixes in sox's reverb are examples too (false: image-source rooms only; the mixes drawn are the same)")
	fitDvMaskLong   = flag.Bool("dvmasklong", false, "TestFitDvMask: fit the model of the rooms over dvMaskDRR (dvMaskLongModel, to dvmasklongmodel.go): mixes the room model puts at dvMaskLongDRR or under are examples")
	dvMaskSoxIn     = flag.Int("dvmasksoxin", 4, "TestFitDvMask: one mix in this many is in sox's reverb (the others in an image-source room)")
	dvMaskPoolShare = flag.Float64("dvmaskpoolshare", 0, "TestFitDvMask: the share of the fit's mixes whose speech is the fit-only pool's (its voices outside fold -dvmaskfold)")
	dvMaskFold      = flag.Int("dvmaskfold", 1, "TestFitDvMask: the pool's fold (isoFolds) never fitted on, whose voices' mixes are a second validation")
	dvMaskValPool   = flag.Bool("dvmaskvalpool", false, "TestFitDvMask: fit on all the tuning half's speakers and keep the epoch that does best on the pool's fold -dvmaskfold")
	dvMaskDecay     = flag.Float64("dvmaskdecay", isoFitDecay, "TestFitDvMask: AdamW's weight decay")
	dvMaskNoise     = flag.Float64("dvmasknoise", 0, "TestFitDvMask: the deviation of Gaussian noise added to the standardised inputs in the fit")
	dvMaskDrop      = flag.String("dvmaskdrop", "", "TestFitDvMask: inputs (comma-separated indices) the fits of the seeds -dvmaskseeds marks with d (71d) are not given: held at their mean, their scale zero in the model")
)

const (
	dvMaskFitSeed = 71
	dvMaskSoxN    = 12 // sox settings to fit on (a third as many to validate on)
	dvMaskMaxSec  = 8
	dvMaskEvery   = 2
)

// dvMaskRoom is a room of the fit: its impulse response, where its
// direct path is, and whether it is sox's wet part (the input adds the
// dry speech).
type dvMaskRoom struct {
	h    []float64
	lead int
	sox  bool
}

// dvMaskImageRooms draws n image-source rooms as wideRooms does, over
// RT60 rtLo-rtHi and talker distances dLo-dHi.
func dvMaskImageRooms(n int, seed uint64, rtLo, rtHi, dLo, dHi float64) []dvMaskRoom {
	out := make([]dvMaskRoom, n)
	parallel(n, func(i int) {
		rr := rand.New(rand.NewPCG(seed, uint64(100+i)))
		for {
			l := 4 + 9*rr.Float64()
			size := [3]float64{l, l * (0.7 + 0.1*rr.Float64()), 2.5 + 2*rr.Float64()*min(1, l/9)}
			rt := rtLo + (rtHi-rtLo)*rr.Float64()
			src := [3]float64{size[0] * (0.25 + 0.1*rr.Float64()), size[1] * (0.3 + 0.2*rr.Float64()), 1.6}
			az := 0.6 * (rr.Float64() - 0.5)
			d := dLo + (dHi-dLo)*rr.Float64()
			mic := [3]float64{src[0] + d*math.Cos(az), src[1] + d*math.Sin(az), src[2] - 0.2}
			if mic[0] > size[0]-0.3 || mic[1] > size[1]-0.3 || mic[1] < 0.3 {
				continue
			}
			v := size[0] * size[1] * size[2]
			s := 2 * (size[0]*size[1] + size[0]*size[2] + size[1]*size[2])
			room := realaudio.Room{Size: size, Source: src, Mic: mic, RT60: rt, Beta: math.Sqrt(math.Exp(-0.161 * v / (s * rt)))}
			var h []float64
			ok := false
			for range 4 {
				h = room.Impulse()
				got := realaudio.SchroederRT60(h, fs)
				if got == 0 {
					break
				}
				if math.Abs(got/rt-1) < 0.05 {
					ok = true
					break
				}
				room.Beta = math.Exp(math.Log(room.Beta) * got / rt)
			}
			if !ok {
				continue
			}
			lead := 0
			for j, x := range h {
				if math.Abs(x) > math.Abs(h[lead]) {
					lead = j
				}
			}
			out[i] = dvMaskRoom{h: h, lead: lead}
			return
		}
	})
	return out
}

// dvMaskSoxRooms draws n settings of sox's reverb (its wet part alone):
// reverberance, HF damping, room scale and pre-delay at random, kept
// where the RT60 is 0.3 to 1.2 s.
func dvMaskSoxRooms(t testing.TB, n int, r *rand.Rand) []dvMaskRoom {
	var out []dvMaskRoom
	for len(out) < n {
		rev, hf, scale, pre := 30+70*r.Float64(), 100*r.Float64(), 40+60*r.Float64(), 20*r.Float64()
		args := []string{"-t", "f32", "-r", strconv.Itoa(fs), "-c", "1", "-", "-t", "f32", "-r", strconv.Itoa(fs), "-c", "1", "-",
			"reverb", "-w", fmt.Sprintf("%.1f", rev), fmt.Sprintf("%.1f", hf), fmt.Sprintf("%.1f", scale), "100", fmt.Sprintf("%.1f", pre)}
		imp := make([]float32, 3*fs)
		imp[0] = 1
		var in bytes.Buffer
		binary.Write(&in, binary.LittleEndian, imp)
		cmd := exec.Command("sox", args...)
		cmd.Stdin = &in
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("sox %v: %v", args, err)
		}
		h32 := make([]float32, len(b)/4)
		binary.Read(bytes.NewReader(b), binary.LittleEndian, h32)
		h := make([]float64, len(h32))
		for i, v := range h32 {
			h[i] = float64(v)
		}
		if got := realaudio.SchroederRT60(h, fs); got < 0.3 || got > 1.2 {
			continue
		}
		out = append(out, dvMaskRoom{h: h, sox: true})
	}
	return out
}

// dvMaskSet is a set of examples: features, target gains, weights, and
// the rule's gain (feature 0) for the loss to beat.
type dvMaskSet struct {
	x, y, w []float32
	kind    []string
}

func (s *dvMaskSet) len() int { return len(s.y) }

// dvMaskExamples makes n mixes of clips in rooms and returns their
// examples.
func dvMaskExamples(t testing.TB, clips []realaudio.Clip, img, sox []dvMaskRoom, n int, seed uint64) dvMaskSet {
	return dvMaskExamplesWith(t, clips, nil, 0, img, sox, n, seed)
}

// dvMaskExamplesWith is dvMaskExamples where a share of the mixes (drawn
// at random) take their speech from extra instead.
func dvMaskExamplesWith(t testing.TB, clips, extra []realaudio.Clip, share float64, img, sox []dvMaskRoom, n int, seed uint64) dvMaskSet {
	type job struct {
		x    []float64
		room dvMaskRoom
		red  float64
	}
	gate := dvMaskFitGate()
	// The Denoiser serves the mask, and so records its examples, at the
	// fit's gate.
	defer func(v float64) { dvMaskDRR = v }(dvMaskDRR)
	dvMaskDRR = gate
	r := rand.New(rand.NewPCG(seed, 0xd5))
	jobs := make([]job, n)
	for i := range jobs {
		cl := clips[r.IntN(len(clips))]
		// Drawn only with extra speech, so that the mixes without are
		// drawn as before.
		if share > 0 && len(extra) > 0 && r.Float64() < share {
			cl = extra[r.IntN(len(extra))]
		}
		x := cl.Samples
		if m := dvMaskMaxSec * fs; len(x) > m {
			at := r.IntN(len(x) - m)
			x = x[at : at+m]
		}
		rm := img[r.IntN(len(img))]
		if r.IntN(*dvMaskSoxIn) == 0 {
			rm = sox[r.IntN(len(sox))]
		}
		jobs[i] = job{x: x, room: rm, red: float64(-(i % 2))}
	}
	// Each mix's examples go to its own part, joined in the mixes' order
	// afterwards: appended as the workers finished, the same seed made a
	// differently ordered set, and so a different fit, each run.
	parts := make([]dvMaskSet, n)
	servedBy := make([]bool, n)
	parallel(n, func(i int) {
		j := jobs[i]
		x := append(append([]float64(nil), j.x...), make([]float64, j.room.lead+fs/4)...)
		wet := convolve(x, j.room.h)
		dry := make([]float64, len(x))
		kind := "sox"
		if j.room.sox {
			for k := range wet {
				wet[k] += x[k]
			}
			copy(dry, x)
		} else {
			kind = "image-source"
			copy(dry[j.room.lead:], j.x)
		}
		pk := 0.0
		for _, v := range wet {
			pk = max(pk, math.Abs(v))
		}
		g := 0.89 / max(pk, 1e-9)
		for k := range wet {
			wet[k] *= g
			dry[k] *= g
		}
		if j.room.sox && !*dvMaskSox {
			return
		}
		p := analyse(t, audio.Buffer{wet}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{wet})})
		if p.RT60 < dryRT60 || p.DRRDB > gate {
			return
		}
		d, err := NewDenoiser(audio.NewBufferSource(audio.Buffer{wet}, fs), DenoiserOptions{Settings: Settings{Method: Static, ReductionDB: j.red}, Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		if d.dvm == nil {
			return
		}
		nf := len(wet)/(FFTSize(fs)/2) + 64
		dp := framePows(dry, nf)
		lo := d.dvm.lo
		var xs, ys, es []float32
		f := 0
		d.dvm.record = func(x []float32, e []float64) {
			defer func() { f++ }()
			if f%dvMaskEvery != 0 || f >= len(dp) {
				return
			}
			for u, eu := range e {
				var s float64
				for k := lo[u]; k < lo[u+1]; k++ {
					s += dp[f][k]
				}
				xs = append(xs, x[u*dvMaskIn:(u+1)*dvMaskIn]...)
				ys = append(ys, float32(min(1, math.Sqrt(s/max(eu, 1e-30)))))
				es = append(es, float32(eu))
			}
		}
		testaudio.ReadAll(t, d)
		var mean float64
		for _, e := range es {
			mean += float64(e)
		}
		mean /= float64(max(1, len(es)))
		ws := make([]float32, len(es))
		for k, e := range es {
			ws[k] = float32(min(*dvMaskMaxW, float64(e)/max(mean, 1e-30)))
		}
		part := dvMaskSet{x: xs, y: ys, w: ws, kind: make([]string, len(ys))}
		for k := range part.kind {
			part.kind[k] = kind
		}
		parts[i], servedBy[i] = part, true
	})
	var set dvMaskSet
	served := 0
	for i, part := range parts {
		if !servedBy[i] {
			continue
		}
		served++
		set.x = append(set.x, part.x...)
		set.y = append(set.y, part.y...)
		set.w = append(set.w, part.w...)
		set.kind = append(set.kind, part.kind...)
	}
	t.Logf("%d of %d mixes served (room model at DRR %.1f dB or under), %d examples", served, n, gate, set.len())
	return set
}

// dvMaskFitGate is the room model's DRR at and under which the fit's
// mixes are examples: -dvmaskfitdrr, or where the model fitted serves.
func dvMaskFitGate() float64 {
	switch {
	case !math.IsNaN(*dvMaskFitDRR):
		return *dvMaskFitDRR
	case *fitDvMaskLong:
		return dvMaskLongDRR
	}
	return dvMaskDRR
}

// dvMaskCommand is the command that fits the model, with the flags given.
func dvMaskCommand() string {
	cmd := "go test ./dsp/spectral -run TestFitDvMask -args"
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "fitdvmask") || strings.HasPrefix(f.Name, "dvmask") {
			if f.Value.String() == "true" {
				cmd += " -" + f.Name
			} else {
				cmd += " -" + f.Name + " " + f.Value.String()
			}
		}
	})
	return cmd
}

// dvMaskDropped returns the inputs -dvmaskdrop leaves out.
func dvMaskDropped(t testing.TB) []int {
	var out []int
	for _, f := range strings.Split(*dvMaskDrop, ",") {
		if f == "" {
			continue
		}
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= dvMaskIn {
			t.Fatalf("-dvmaskdrop %q: %q is no input", *dvMaskDrop, f)
		}
		out = append(out, i)
	}
	return out
}

// dvMaskLoss is the network's weighted squared error on s, overall and
// by kind of room.
func dvMaskLoss(m *dvMaskNet, s dvMaskSet) (float64, map[string]float64) {
	var sc dvMaskScratch
	return dvMaskLossOf(s, func(x []float32) float32 { return m.unit(x, &sc) })
}

func dvMaskLossOf(s dvMaskSet, f func(x []float32) float32) (float64, map[string]float64) {
	var all float64
	sum, cnt := map[string]float64{}, map[string]float64{}
	for i := range s.len() {
		d := float64(f(s.x[i*dvMaskIn:(i+1)*dvMaskIn]) - s.y[i])
		e := float64(s.w[i]) * d * d
		all += e
		sum[s.kind[i]] += e
		cnt[s.kind[i]]++
	}
	for k := range sum {
		sum[k] /= cnt[k]
	}
	return all / float64(max(1, s.len())), sum
}

// dvMaskFlat is m's weights as one slice.
func dvMaskFlat(m *dvMaskNet) []float32 {
	return unsafe.Slice(&m.mean[0], unsafe.Sizeof(*m)/4)
}

// dvMaskSpeakers are the speakers of c's clips, sorted.
func dvMaskSpeakers(c *realaudio.Corpus) []string {
	var spk []string
	for _, cl := range c.Clips() {
		if !slices.Contains(spk, cl.Speaker) {
			spk = append(spk, cl.Speaker)
		}
	}
	slices.Sort(spk)
	return spk
}

// dvMaskSplit splits c's clips by speaker as TestFitDvMask does: the
// speakers sorted, every fourth to validation.
func dvMaskSplit(c *realaudio.Corpus) (fit, val []realaudio.Clip) {
	spk := dvMaskSpeakers(c)
	for _, cl := range c.Clips() {
		if slices.Index(spk, cl.Speaker)%4 == 3 {
			val = append(val, cl)
		} else {
			fit = append(fit, cl)
		}
	}
	return fit, val
}

// dvMaskPoolClips returns the fit-only pool's voices named (all if none
// is) cut into clips as isolation cuts them (isoCutClips), grouped by
// voice in FitVoices' order.
func dvMaskPoolClips(t testing.TB, voices []string) []realaudio.Clip {
	var sets []string
	for _, v := range realaudio.FitVoices {
		if (len(voices) == 0 || slices.Contains(voices, v.Speaker)) && !slices.Contains(sets, v.Set) {
			sets = append(sets, v.Set)
		}
	}
	speech, err := realaudio.FitSpeech(sets...)
	if err != nil {
		t.Fatal(err)
	}
	var out []realaudio.Clip
	for i, us := range speech {
		// Each voice's utterances let go once cut: the pool is 0.7 GB.
		speech[i] = nil
		if len(us) == 0 || len(voices) > 0 && !slices.Contains(voices, us[0].Speaker) {
			continue
		}
		var x []float64
		for _, u := range us {
			x = append(x, u.Samples...)
		}
		out = append(out, isoCutClips(us[0].Speaker, x)...)
	}
	return out
}

func TestFitDvMask(t *testing.T) {
	if !*fitDvMask {
		t.Skip("-fitdvmask fits the learned reverb mask and writes dvmaskmodel.go")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	fitC, valC := dvMaskSplit(c)
	spk := dvMaskSpeakers(c)
	nr := *dvMaskRooms
	img := dvMaskImageRooms(nr, dvMaskFitSeed, 0.3, 1.2, 0.8, 3)
	imgV := dvMaskImageRooms(max(1, nr/5), dvMaskFitSeed+1, 0.3, 1.2, 0.8, 3)
	rs := rand.New(rand.NewPCG(dvMaskFitSeed, 0x50c))
	sox := dvMaskSoxRooms(t, dvMaskSoxN, rs)
	soxV := dvMaskSoxRooms(t, dvMaskSoxN/3, rs)
	t.Logf("speakers %d to fit on, %d to validate on; %d+%d image-source rooms, %d+%d sox settings", len(spk)-len(spk)/4, len(spk)/4, len(img), len(imgV), len(sox), len(soxV))
	// The pool's voices: those of fold -dvmaskfold validate (never
	// fitted), the others join the fit at -dvmaskpoolshare.
	var poolFit, poolVal []realaudio.Clip
	if *dvMaskPoolShare > 0 || *dvMaskValPool {
		if *dvMaskFold < 1 || *dvMaskFold >= len(isoFolds) {
			t.Fatalf("-dvmaskfold %d: 1 to %d", *dvMaskFold, len(isoFolds)-1)
		}
		for _, cl := range dvMaskPoolClips(t, nil) {
			if slices.Contains(isoFolds[*dvMaskFold], cl.Speaker) {
				poolVal = append(poolVal, cl)
			} else {
				poolFit = append(poolFit, cl)
			}
		}
		t.Logf("the pool: %d clips to fit on (at %.2f of the mixes), %d of fold %d %v to validate on", len(poolFit), *dvMaskPoolShare, len(poolVal), *dvMaskFold, isoFolds[*dvMaskFold])
	}
	if *dvMaskValPool {
		fitC = append(fitC, valC...)
		t.Logf("-dvmaskvalpool: all %d speakers fitted on; the validation (and the epoch kept) is fold %d's", len(spk), *dvMaskFold)
	}
	train := dvMaskExamplesWith(t, fitC, poolFit, *dvMaskPoolShare, img, sox, *dvMaskMixes, dvMaskFitSeed)
	val := dvMaskExamples(t, valC, imgV, soxV, max(1, *dvMaskMixes/5), dvMaskFitSeed+1)
	if *dvMaskValPool {
		val = dvMaskExamples(t, poolVal, imgV, soxV, max(1, *dvMaskMixes/5), dvMaskFitSeed+2)
	}
	rule := func(x []float32) float32 { return x[0] }
	rl, rby := dvMaskLossOf(val, rule)
	t.Logf("the rule's gains: validation %.4f (image-source %.4f, sox %.4f)", rl, rby["image-source"], rby["sox"])
	// The model in use, on the same examples: a baseline for the fit
	// (inputs it was not given have a scale of zero).
	ml, mby := dvMaskLoss(&dvMaskModel, val)
	t.Logf("the model in dvmaskmodel.go: validation %.4f (image-source %.4f, sox %.4f)", ml, mby["image-source"], mby["sox"])
	if *fitDvMaskLong {
		ml, mby := dvMaskLoss(&dvMaskLongModel, val)
		t.Logf("the model in dvmasklongmodel.go: validation %.4f (image-source %.4f, sox %.4f)", ml, mby["image-source"], mby["sox"])
	}
	type fit struct {
		seed uint64
		drop bool
	}
	var seeds []fit
	for _, f := range strings.Split(*dvMaskSeeds, ",") {
		drop := strings.HasSuffix(f, "d")
		v, err := strconv.ParseUint(strings.TrimSuffix(f, "d"), 10, 64)
		if err != nil {
			t.Fatalf("-dvmaskseeds %q: %v", *dvMaskSeeds, err)
		}
		seeds = append(seeds, fit{v, drop})
	}
	// The fits share the examples and run side by side (each on one
	// core); each keeps its epoch of lowest validation loss.
	var wg sync.WaitGroup
	for k, f := range seeds {
		var drop []int
		if f.drop {
			drop = dvMaskDropped(t)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dvMaskFitOne(t, train, val, f.seed, k == 0, drop, rl, len(spk), len(img), len(sox), len(imgV), len(soxV))
		}()
	}
	wg.Wait()
}

// dvMaskFitOne fits one network with seed on train, validated on val,
// and writes it (and with -dvmaskswa its weights averaged over the
// epochs at the lowered rate).
func dvMaskFitOne(t *testing.T, train, val dvMaskSet, seed uint64, first bool, drop []int, rl float64, nSpk, nImg, nSox, nImgV, nSoxV int) {
	m := new(dvMaskNet)
	var sc dvMaskScratch
	// The inputs dropped are read at their mean (mlpFit's standardisation
	// sets it): the network sees zero there.
	var held [dvMaskIn]float32
	feed := func(x []float32) []float32 {
		if len(drop) == 0 {
			return x
		}
		copy(held[:], x[:dvMaskIn])
		for _, i := range drop {
			held[i] = m.mean[i]
		}
		return held[:]
	}
	n := mlpCarve(dvMaskFlat(m), dvMaskIn, dvMaskH1, dvMaskH2, func(x []float32) (float32, []float32, []float32, []float32) {
		return m.unit(feed(x), &sc), sc.x[:], sc.h1[:], sc.h2[:]
	})
	valLoss := func() (float64, map[string]float64) {
		return dvMaskLossOf(val, func(x []float32) float32 { return m.unit(feed(x), &sc) })
	}
	// The average of the weights after each epoch at the lowered rate
	// (mlpFit's last third).
	swa := make([]float64, len(dvMaskFlat(m)))
	swaN := 0
	loss, epoch := mlpFit(t, n, train.x, train.y, train.w, mlpOpts{
		seed:   seed,
		epochs: *dvMaskEpochs,
		decay:  *dvMaskDecay,
		noise:  *dvMaskNoise,
		val: func() (float64, map[string]float64) {
			l, by := valLoss()
			t.Logf("seed %d: validation by room: image-source %.4f, sox %.4f", seed, by["image-source"], by["sox"])
			return l, by
		},
		epoch: func(e int) {
			if e > *dvMaskEpochs*2/3 {
				for i, v := range dvMaskFlat(m) {
					swa[i] += float64(v)
				}
				swaN++
			}
		},
	})
	// An input held at zero stood at its mean throughout: with its scale
	// zero the model reads none of it and gives what it gave in the fit.
	for _, i := range drop {
		m.mean[i], m.scale[i] = 0, 0
	}
	t.Logf("seed %d: validation loss %.4f at epoch %d (the rule's %.4f)", seed, loss, epoch, rl)
	base, file := "dvMaskModel", "dvmaskmodel"
	if *fitDvMaskLong {
		base, file = "dvMaskLongModel", "dvmasklongmodel"
	}
	name, out := base, *dvMaskOut
	if *fitDvMaskLong && out == "dvmaskmodel.go" {
		out = file + ".go"
	}
	if !first || len(drop) > 0 {
		name, out = fmt.Sprintf("%s%d", base, seed), fmt.Sprintf("%s%d.go", file, seed)
		if len(drop) > 0 {
			name, out = name+"d", strings.TrimSuffix(out, ".go")+"d.go"
		}
	}
	gate := dvMaskFitGate()
	soxUse, dropped := "their mixes examples too", ""
	if !*dvMaskSox {
		soxUse = "their mixes not examples"
	}
	if len(drop) > 0 {
		dropped = fmt.Sprintf("; inputs %v not given", drop)
	}
	write := func(m *dvMaskNet, name, out, kept string, loss float64) {
		header := fmt.Sprintf("%s was fitted on %d units' gains (every %d-th frame) of %d mixes of the tuning\n"+
			"half's speech (%d speakers) in %d image-source rooms (RT60 0.3-1.2 s, talker 0.8-3 m) and %d\n"+
			"settings of sox's reverb (%s; examples where the room model put the room at DRR %.1f dB or under%s),\n"+
			"seed %d (the fit's start and batches %d); validated on %d units of %d mixes of %d other\n"+
			"speakers in %d other rooms and %d other settings. AdamW (decay %g), batches of %d, %d epochs; %s:\n"+
			"validation loss %.4f (the squared error of the units' gains weighted by their power, at most\n"+
			"%g times their mix's mean; the rule's gains %.4f).",
			name, train.len(), dvMaskEvery, *dvMaskMixes, nSpk-nSpk/4, nImg, nSox, soxUse, gate, dropped, dvMaskFitSeed, seed,
			val.len(), max(1, *dvMaskMixes/5), nSpk/4, nImgV, nSoxV, *dvMaskDecay, isoFitBatch, *dvMaskEpochs, kept, loss, *dvMaskMaxW, rl)
		if *dvMaskPoolShare > 0 || *dvMaskValPool || *dvMaskNoise > 0 {
			header += fmt.Sprintf("\nOf the fit's mixes a share %.2f took the fit-only pool's voices outside fold %d %v;", *dvMaskPoolShare, *dvMaskFold, isoFolds[*dvMaskFold])
			if *dvMaskValPool {
				header += fmt.Sprintf(" all %d of the half's speakers were fitted on and the validation\nwas the fold's voices' mixes;", nSpk)
			}
			header += fmt.Sprintf(" input noise %g (standardised).", *dvMaskNoise)
		}
		src := mlpModel{command: dvMaskCommand(), name: name, typ: "dvMaskNet",
			in: "dvMaskIn", h1: "dvMaskH1", h2: "dvMaskH2", digits: -1}.source(mlpCarve(dvMaskFlat(m), dvMaskIn, dvMaskH1, dvMaskH2, nil), header)
		t.Logf("%s: %d bytes", out, len(src))
		if err := os.WriteFile(out, src, 0o644); err != nil {
			t.Error(err) // not Fatal: a fit's own goroutine
		}
	}
	write(m, name, out, fmt.Sprintf("kept epoch %d", epoch), loss)
	if *dvMaskSWA && swaN > 0 {
		a := new(dvMaskNet)
		for i, v := range swa {
			dvMaskFlat(a)[i] = float32(v / float64(swaN))
		}
		copy(a.mean[:], m.mean[:])
		copy(a.scale[:], m.scale[:])
		l, _ := dvMaskLoss(a, val)
		t.Logf("seed %d: weights averaged over the last %d epochs: validation loss %.4f", seed, swaN, l)
		write(a, fmt.Sprintf("dvMaskSWA%d", seed), fmt.Sprintf("dvmaskswa%d.go", seed), fmt.Sprintf("the weights averaged over the last %d epochs", swaN), l)
	}
}
