package spectral

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

var dvRooms = flag.Bool("dvrooms", false, "TestDeverbRoomParams: compare the two halves' image-source rooms and speech by their parameters")

// irParams are an impulse response's parameters: its direct-to-
// reverberant ratio (the direct path's +-1 ms against the rest), the
// early reflections' energy (1 to 50 ms after the direct path) and the
// late reverberation's (after 50 ms), both in dB against the direct path.
func irParams(h []float64) (drr, early, late float64) {
	lead := 0
	for j, v := range h {
		if math.Abs(v) > math.Abs(h[lead]) {
			lead = j
		}
	}
	ms := fs / 1000
	var d, e, l float64
	for j, v := range h {
		switch {
		case j < lead-ms:
		case j <= lead+ms:
			d += v * v
		case j <= lead+50*ms:
			e += v * v
		default:
			l += v * v
		}
	}
	db := func(x float64) float64 { return 10 * math.Log10(x/d) }
	return -db(e + l), db(e), db(l)
}

// speechParams are a clip's: the share of its 20 ms frames more than 30
// dB under its loudest, and the 10th, 50th and 90th percentiles of its
// pitch over the frames an autocorrelation finds voiced (60-400 Hz).
func speechParams(x []float64) (pause float64, f0 [3]float64) {
	n := fs / 50
	var pows []float64
	top := 0.0
	for i := 0; i+n <= len(x); i += n {
		var p float64
		for _, v := range x[i : i+n] {
			p += v * v
		}
		pows = append(pows, p)
		top = max(top, p)
	}
	var quiet int
	for _, p := range pows {
		if p < top*1e-3 {
			quiet++
		}
	}
	pause = float64(quiet) / float64(max(1, len(pows)))
	w := fs / 25 // 40 ms windows
	var pitches []float64
	for i := 0; i+w+fs/60 <= len(x); i += n {
		if pows[min(i/n, len(pows)-1)] < top*1e-2 {
			continue
		}
		var e0 float64
		for _, v := range x[i : i+w] {
			e0 += v * v
		}
		best, lag := 0.0, 0
		for l := fs / 400; l <= fs/60; l++ {
			var c, e1 float64
			for j := range w {
				c += x[i+j] * x[i+j+l]
				e1 += x[i+j+l] * x[i+j+l]
			}
			if r := c / math.Sqrt(e0*e1+1e-20); r > best {
				best, lag = r, l
			}
		}
		if best > 0.6 {
			pitches = append(pitches, float64(fs)/float64(lag))
		}
	}
	sort.Float64s(pitches)
	if len(pitches) > 0 {
		for k, q := range []float64{0.1, 0.5, 0.9} {
			f0[k] = pitches[int(q*float64(len(pitches)-1))]
		}
	}
	return pause, f0
}

// TestDeverbRoomParams compares the two halves' image-source rooms of
// RT60 0.5 to 1.0 s and the speech TestRealDeverb -realfull puts in them
// by their parameters alone, no quality figure (go test -run
// TestDeverbRoomParams -v -args -dvrooms): the rooms' size, the talker's
// distance, the impulse responses' DRR, early and late energy; the
// clips' speakers, pauses and pitch; and what the room model (the
// Profiler) estimates of each clip. The held-out half is not the harder
// one by its rooms: its 0.5 s room has DRR -6.7 dB (tuning -5.8), its
// 0.7 s -2.4 (-5.1) and its 1.0 s -14.1 (-17.8); but its 0.7 s room's
// early reflections stand 3 dB over its late reverberation (+0.6 and
// -2.4 dB against the direct path) where the tuning half's stand under
// it (+3.4 and +0.2), a kind of room the tuning half does not hold. The
// room model puts all its rooms at DRR 0 dB (one at -6), the tuning
// half's at 0 and +3: WPE predicts from two hops at full strength in
// both. Its speakers: allison and three klettres voices (60-71% pauses
// over 9 s), against june, carlo and two shorter klettres voices.
func TestDeverbRoomParams(t *testing.T) {
	if !*dvRooms {
		t.Skip("-dvrooms: a measurement of the corpus, not a test")
	}
	for _, h := range []realaudio.Half{realaudio.Tuning, realaudio.HeldOut} {
		c := realaudio.Load(t, h)
		rooms, irs, err := c.Rooms()
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rooms {
			drr, early, late := irParams(irs[i])
			v := r.Size[0] * r.Size[1] * r.Size[2]
			d := math.Sqrt(sq(r.Source[0]-r.Mic[0]) + sq(r.Source[1]-r.Mic[1]) + sq(r.Source[2]-r.Mic[2]))
			t.Logf("%-8s room RT60 %.1f s: %4.1fx%4.1fx%3.1f m (%4.0f m3), talker %.2f m, critical distance %.2f m; DRR %+5.1f dB, early %+5.1f, late %+5.1f",
				c.Half, r.RT60, r.Size[0], r.Size[1], r.Size[2], v, d, 0.057*math.Sqrt(v/r.RT60), drr, early, late)
		}
		cases := deverbCases(t, c, true, 3)
		// The image-source clips first, then sox's (the room model's
		// estimate only: their rooms are sox's).
		var ics []reverbCase
		for _, m := range []string{"image-source", "sox"} {
			for _, rc := range cases {
				if rc.method == m {
					ics = append(ics, rc)
				}
			}
		}
		lines := make([]string, len(ics))
		parallel(len(ics), func(i int) {
			rc := ics[i]
			p := analyse(t, audio.Buffer{rc.input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{rc.input})})
			pause, f0 := speechParams(rc.dry)
			lines[i] = fmt.Sprintf("%-8s %-34s RT60 %.1f: %4.1f s, pauses %3.0f%%, pitch %3.0f/%3.0f/%3.0f Hz; room model RT60 %.2f DRR %+5.1f (WPE delay %d, strength %.2f)",
				c.Half, rc.id, rc.rt60, float64(len(rc.dry))/fs, 100*pause, f0[0], f0[1], f0[2], p.RT60, p.DRRDB, wpeDelayFor(p.DRRDB), reverbStrength(p.DRRDB))
		})
		for _, l := range lines {
			t.Log(l)
		}
	}
}

func sq(x float64) float64 { return x * x }

var (
	dvWide       = flag.Bool("dvwide", false, "TestDeverbWideRooms: measure the reverb reduction over many simulated rooms")
	dvWideRooms  = flag.Int("dvwiderooms", 36, "TestDeverbWideRooms: how many rooms")
	dvWideSeed   = flag.Uint64("dvwideseed", 30, "TestDeverbWideRooms: the rooms' seed")
	dvWideNR     = flag.String("dvwidenr", "auto,off", "TestDeverbWideRooms: the noise reductions (auto, off)")
	dvWideSox    = flag.Bool("dvwidesox", true, "TestDeverbWideRooms: also the half's sox rooms of RT60 0.5 to 1.0 s, five clips each")
	dvWideMask   = flag.String("dvwidemask", "on", "TestDeverbWideRooms: the learned reverb mask on, off, or both (on,off)")
	dvWideSoxN   = flag.Int("dvwidesoxn", 0, "TestDeverbWideRooms: also this many settings of sox's reverb drawn at random (RT60 0.3 to 1.2 s), a clip of the half each")
	dvWideLow    = flag.Float64("dvwidelow", math.NaN(), "TestDeverbWideRooms: WPE's long variance context and the StaticNoise cut at this DRR (dB) and under (wpeLowDRR)")
	dvWideDRR    = flag.Float64("dvwidemaskdrr", math.NaN(), "TestDeverbWideRooms: the learned mask at this DRR (dB) and under (dvMaskDRR)")
	dvWideVar    = flag.String("dvwidevar", "", "TestDeverbWideRooms: variants of the rooms the mask does not serve, comma-separated, each key=value joined by +")
	dvWideClips  = flag.Int("dvwideclips", 1, "TestDeverbWideRooms: clips of the speaker one after the other in each image-source room")
	dvWideSpeech = flag.String("dvwidespeech", "", "TestDeverbWideRooms: the speech in the image-source rooms: the half's (empty), the tuning half's speakers TestFitDvMask fits on (fit) or validates on (val), or the fit-only pool's voices: all (pool) or a fold of isoFolds (fold1, fold2)")
	dvWideLong   = flag.String("dvwidemasklong", "", "TestDeverbWideRooms: the learned mask of the rooms over dvMaskDRR at DRR,RT60: this DRR (dB) and under, that RT60 (s) and over (dvMaskLongDRR, dvMaskLongRT60)")
)

// dvVariant returns a Denoiser tune for a variant of -dvwidevar: keys
// joined by "+", each key=value: over (the late reverberation's scale),
// rt (the RT60's scale for the rule), kap (kappa's scale), str (WPE's
// strength), ctx, delay, taps, iters, block (s), forget and maxhz
// (WPE's: wpeParams), onset (hops back the rule predicts the late
// reverberation from), drr (dB added to the room model's DRR for the
// rule and WPE); wpeonly (no key=value) passes WPE's output
// with no gain after it and logs its energy against the input's. It
// changes only rooms no mask serves (DRR over dvMaskLongDRR: dvMaskFor),
// unless the key all is given, and only rooms of DRR from and more, to
// and less, where those keys are given. Variants joined by "/" apply in
// turn, each over its own rooms.
func dvVariant(t testing.TB, v string, p *Profile) func(d *Denoiser, rt float64) {
	if strings.Contains(v, "/") {
		var fs []func(d *Denoiser, rt float64)
		for _, part := range strings.Split(v, "/") {
			if f := dvVariant(t, part, p); f != nil {
				fs = append(fs, f)
			}
		}
		return func(d *Denoiser, rt float64) {
			for _, f := range fs {
				f(d, rt)
			}
		}
	}
	if v == "base" || v == "" {
		return nil
	}
	kv := map[string]float64{}
	for _, f := range strings.Split(v, "+") {
		k, val, _ := strings.Cut(f, "=")
		x := 1.0
		if val != "" {
			var err error
			if _, err = fmt.Sscan(val, &x); err != nil {
				t.Fatalf("variant %q: %v", v, err)
			}
		}
		kv[k] = x
	}
	if _, ok := kv["all"]; !ok && dvMaskFor(p.DRRDB, p.RT60) != nil {
		return nil
	}
	if x, ok := kv["from"]; ok && p.DRRDB < x {
		return nil
	}
	if x, ok := kv["to"]; ok && p.DRRDB > x {
		return nil
	}
	return func(d *Denoiser, rt float64) {
		drr := p.DRRDB
		if x, ok := kv["drr"]; ok {
			drr += x
			d.revStrength = reverbStrength(drr)
			d.wpeP.delay = wpeDelayFor(drr)
			d.wpeP.context = wpeContextFor(drr)
			d.wpeP.blockSec = wpeBlockFor(drr)
		}
		if x, ok := kv["rt"]; ok {
			rt *= x
		}
		if x, ok := kv["onset"]; ok {
			d.revOnset = int(x)
		}
		if rt >= dryRT60 {
			delta := 3 * math.Ln10 / rt
			d.revFactor = math.Exp(-2 * delta * float64(d.revOnset*d.hop) / float64(d.fs))
			d.revStep = math.Exp(-2 * delta * float64(d.hop) / float64(d.fs))
			d.revKappa = reverbKappa(d.revStep, drr)
		}
		if x, ok := kv["kap"]; ok {
			d.revKappa = min(1, d.revKappa*x)
		}
		if x, ok := kv["over"]; ok {
			d.revOver = x
		}
		if x, ok := kv["str"]; ok {
			d.revStrength = x
		}
		if x, ok := kv["ctx"]; ok {
			d.wpeP.context = int(x)
		}
		if x, ok := kv["delay"]; ok {
			d.wpeP.delay = int(x)
		}
		if x, ok := kv["taps"]; ok {
			d.wpeP.taps = int(x)
		}
		if x, ok := kv["iters"]; ok {
			d.wpeP.iters = int(x)
		}
		if x, ok := kv["block"]; ok {
			d.wpeP.blockSec = x
		}
		if x, ok := kv["forget"]; ok {
			d.wpeP.forget = x
		}
		if x, ok := kv["maxhz"]; ok {
			d.wpeP.maxHz = x
		}
		if _, ok := kv["wpeonly"]; ok {
			d.onGain = func(g []float64) {
				for k := range g {
					g[k] = 1
				}
			}
		}
	}
}

// wideRoom is an image-source room of the wide set with its impulse
// response and parameters.
type wideRoom struct {
	room               realaudio.Room
	h                  []float64
	drr, early, late   float64
	distance, measured float64
}

// wideRooms draws n image-source rooms of RT60 0.5 to 1.0 s the way the
// corpus draws its own (realaudio.Rooms): a shoebox 4 to 13 m long, its
// width 0.7 to 0.8 of that, 2.5 to 4.5 m high, the talker at 1.6 m in
// its first third, the microphone 1.5 to 2.5 m away at an azimuth of
// +-0.3 rad, 0.2 m lower; the wall coefficient by Eyring's formula,
// corrected until the measured RT60 is within 2% of the one drawn.
func wideRooms(t testing.TB, n int, seed uint64) []wideRoom {
	out := make([]wideRoom, n)
	parallel(n, func(i int) {
		rr := rand.New(rand.NewPCG(seed, uint64(100+i)))
		for {
			l := 4 + 9*rr.Float64()
			size := [3]float64{l, l * (0.7 + 0.1*rr.Float64()), 2.5 + 2*rr.Float64()*min(1, l/9)}
			rt := 0.5 + 0.5*rr.Float64()
			src := [3]float64{size[0] * (0.25 + 0.1*rr.Float64()), size[1] * (0.3 + 0.2*rr.Float64()), 1.6}
			az := 0.6 * (rr.Float64() - 0.5)
			d := 1.5 + rr.Float64()
			mic := [3]float64{src[0] + d*math.Cos(az), src[1] + d*math.Sin(az), src[2] - 0.2}
			v := size[0] * size[1] * size[2]
			s := 2 * (size[0]*size[1] + size[0]*size[2] + size[1]*size[2])
			room := realaudio.Room{Size: size, Source: src, Mic: mic, RT60: rt, Beta: math.Sqrt(math.Exp(-0.161 * v / (s * rt)))}
			var h []float64
			ok := false
			for range 6 {
				h = room.Impulse()
				got := realaudio.SchroederRT60(h, fs)
				if got == 0 {
					break
				}
				if math.Abs(got/rt-1) < 0.02 {
					ok = true
					break
				}
				room.Beta = math.Exp(math.Log(room.Beta) * got / rt)
			}
			if !ok {
				continue
			}
			w := wideRoom{room: room, h: h, distance: d, measured: realaudio.SchroederRT60(h, fs)}
			w.drr, w.early, w.late = irParams(h)
			out[i] = w
			return
		}
	})
	return out
}

// wideCases puts one of clips (the half's speech) in each room (the clips
// taken in turn, speakers alternating), as the corpus does: the dry
// speech lined up with the direct path, both scaled to a peak of 0.89.
func wideCases(clips []realaudio.Clip, rooms []wideRoom) []reverbCase {
	return wideCasesLong(clips, rooms, 1)
}

// wideCasesLong is wideCases with n clips of the speaker in each room,
// one after the other: a recording longer than WPE's first blocks.
func wideCasesLong(clips []realaudio.Clip, rooms []wideRoom, n int) []reverbCase {
	// Alternate the speakers: the clips come grouped by speaker.
	bySpk := map[string][]realaudio.Clip{}
	var spks []string
	for _, cl := range clips {
		if bySpk[cl.Speaker] == nil {
			spks = append(spks, cl.Speaker)
		}
		bySpk[cl.Speaker] = append(bySpk[cl.Speaker], cl)
	}
	var out []reverbCase
	for i, w := range rooms {
		cs := bySpk[spks[i%len(spks)]]
		cl := cs[(i/len(spks)*7+3)%len(cs)]
		samples := cl.Samples
		for j := 1; j < n; j++ {
			samples = append(slices.Clip(samples), cs[(i/len(spks)*7+3+5*j)%len(cs)].Samples...)
		}
		lead := 0
		for j, v := range w.h {
			if math.Abs(v) > math.Abs(w.h[lead]) {
				lead = j
			}
		}
		x := append(append([]float64(nil), samples...), make([]float64, lead)...)
		wet := convolve(x, w.h)
		dry := make([]float64, len(x))
		copy(dry[lead:], samples)
		pk := 0.0
		for _, v := range wet {
			pk = max(pk, math.Abs(v))
		}
		g := 0.89 / max(pk, 0.89)
		for j := range wet {
			wet[j] *= g
			dry[j] *= g
		}
		out = append(out, reverbCase{id: fmt.Sprintf("%s/wide%d", cl.ID, i), method: "image-source", rt60: w.room.RT60, dry: dry, input: wet, impulse: w.h})
	}
	return out
}

// dvWideVoices is the speech -dvwidespeech puts in the wide rooms: the
// half's clips, the tuning half's fitting or validation speakers of
// TestFitDvMask (dvMaskSplit), or voices of the fit-only pool (isoFolds):
// whether the learned mask gains on voices it was not fitted on.
func dvWideVoices(t *testing.T, c *realaudio.Corpus) []realaudio.Clip {
	switch s := *dvWideSpeech; s {
	case "":
		return c.Clips()
	case "fit", "val":
		if c.Half != realaudio.Tuning {
			t.Fatalf("-dvwidespeech %s: the tuning half's speakers (-realhalf tuning)", s)
		}
		fit, val := dvMaskSplit(c)
		if s == "val" {
			return val
		}
		return fit
	case "pool":
		return dvMaskPoolClips(t, nil)
	case "fold1", "fold2":
		return dvMaskPoolClips(t, isoFolds[s[4]-'0'])
	default:
		t.Fatalf("-dvwidespeech %q: empty, fit, val, pool, fold1 or fold2", s)
	}
	return nil
}

// TestDeverbWideRooms measures the reverb reduction (static, the room
// model's estimate as the engine runs it) over many image-source rooms
// the simulation draws the way the corpus draws its own, with the
// half's speech (go test -run TestDeverbWideRooms -v -args -dvwide
// -realhalf tuning): the corpus holds three rooms of RT60 0.5 to 1.0 s
// per half, too few for what is chosen on them to hold on others. The
// rooms are grouped by how their early reflections (1 to 50 ms) stand
// against their late reverberation. Over 36 rooms (seed 30) with the
// tuning half's speech, static gained +2.61/+2.73 dB (noise reduction
// automatic/off), nearer the held-out half's +2.00/+2.04 than the
// tuning half's own three rooms (+3.43): clip to clip +0.1 to +8.9.
// With WPE's variance over +-20 frames at DRR 0 dB and under
// (wpeContextFor) and Static's presence profile lowered there
// (tailsOff): +2.85/+2.86; the half's 15 sox clips +4.63/+4.91.
// -dvwidesoxn adds settings of sox's reverb drawn at random, -dvwidemask
// on,off runs each case with and without the learned mask after the rule
// (dvmask.go), -dvwidelow and -dvwidemaskdrr move the room model's DRR
// gates (wpeLowDRR, dvMaskDRR), -dvwidevar runs variants of the rule and
// WPE side by side (dvVariant), -dvwideclips puts that many of the
// speaker's clips one after the other in each image-source room (the
// half's clips last 3 to 18 s, 9 s at the median: a few of WPE's blocks),
// -dvwidespeech puts other speech there (dvWideVoices). Each room's line
// says whether the mask serves it (served: dvMaskModel; served long:
// dvMaskLongModel), and a sox room's its true DRR (the dry speech
// against the wet impulse's energy), to set against the room model's.
func TestDeverbWideRooms(t *testing.T) {
	if !*dvWide {
		t.Skip("-dvwide: a measurement over simulated rooms, not a test")
	}
	setMinSignal(t)
	if !math.IsNaN(*dvWideLow) {
		defer func(v float64) { wpeLowDRR = v }(wpeLowDRR)
		wpeLowDRR = *dvWideLow
	}
	if !math.IsNaN(*dvWideDRR) {
		defer func(v float64) { dvMaskDRR = v }(dvMaskDRR)
		dvMaskDRR = *dvWideDRR
	}
	if *dvWideLong != "" {
		var drr, rt float64
		if _, err := fmt.Sscanf(*dvWideLong, "%g,%g", &drr, &rt); err != nil {
			t.Fatalf("-dvwidemasklong %q: %v", *dvWideLong, err)
		}
		defer func(d, r float64) { dvMaskLongDRR, dvMaskLongRT60 = d, r }(dvMaskLongDRR, dvMaskLongRT60)
		dvMaskLongDRR, dvMaskLongRT60 = drr, rt
	}
	c := realCorpus(t)
	rooms := wideRooms(t, *dvWideRooms, *dvWideSeed)
	cases := wideCasesLong(dvWideVoices(t, c), rooms, *dvWideClips)
	if *dvWideSox {
		for _, rc := range deverbCases(t, c, true, 3) {
			if rc.method == "sox" {
				cases = append(cases, rc)
			}
		}
	}
	if n := *dvWideSoxN; n > 0 {
		clips := c.Clips()
		for i, rm := range dvMaskSoxRooms(t, n, rand.New(rand.NewPCG(*dvWideSeed, 0x50c5))) {
			cl := clips[(i*7+2)%len(clips)]
			x := append(append([]float64(nil), cl.Samples...), make([]float64, fs/4)...)
			wet := convolve(x, rm.h)
			pk := 0.0
			for j := range wet {
				wet[j] += x[j]
				pk = max(pk, math.Abs(wet[j]))
			}
			g := 0.89 / max(pk, 0.89)
			dry := make([]float64, len(x))
			for j := range wet {
				wet[j] *= g
				dry[j] = x[j] * g
			}
			cases = append(cases, reverbCase{id: fmt.Sprintf("%s/soxwide%d", cl.ID, i), method: "sox", rt60: realaudio.SchroederRT60(rm.h, fs), dry: dry, input: wet, impulse: rm.h})
		}
	}
	var reds []float64
	for _, s := range strings.Split(*dvWideNR, ",") {
		switch s {
		case "auto":
			reds = append(reds, 0)
		case "off":
			reds = append(reds, -1)
		}
	}
	var tab table
	lines := make([]string, len(cases))
	parallel(len(cases), func(i int) {
		rc := cases[i]
		p := analyse(t, audio.Buffer{rc.input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{rc.input})})
		in := testaudio.SISDR(rc.dry, rc.input)
		line := fmt.Sprintf("%-30s RT60 %.2f; model %.2f %+4.0f; input %5.1f dB;", rc.id, rc.rt60, p.RT60, p.DRRDB, in)
		group := "sox"
		if i < len(rooms) {
			w := rooms[i]
			line = fmt.Sprintf("%-30s RT60 %.2f %4.1fx%4.1fx%3.1f d %.1f DRR %+5.1f early %+5.1f late %+5.1f; model %.2f %+4.0f; input %5.1f dB;",
				rc.id, rc.rt60, w.room.Size[0], w.room.Size[1], w.room.Size[2], w.distance, w.drr, w.early, w.late, p.RT60, p.DRRDB, in)
			group = "late over early"
			if w.early > w.late {
				group = "early over late"
			}
		}
		served := "unserved"
		net := dvMaskFor(p.DRRDB, p.RT60)
		switch net {
		case &dvMaskModel:
			served = "served"
		case &dvMaskLongModel:
			served = "served long"
		}
		if group == "sox" {
			var e float64
			for _, v := range rc.impulse {
				e += v * v
			}
			line += fmt.Sprintf(" true DRR %+5.1f;", -10*math.Log10(e))
		}
		line += " " + served + ";"
		for _, red := range reds {
			for _, mask := range strings.Split(*dvWideMask, ",") {
				for _, v := range strings.Split(*dvWideVar, ",") {
					d, err := NewDenoiser(audio.NewBufferSource(audio.Buffer{rc.input}, fs), DenoiserOptions{Settings: Settings{Method: Static, ReductionDB: red}, Profile: p, tune: dvVariant(t, v, p)})
					if err != nil {
						t.Fatal(err)
					}
					if mask == "off" {
						d.dvm = nil
					}
					y := testaudio.ReadAll(t, d)[0]
					g := testaudio.SISDR(rc.dry, y) - in
					col := deverbColumn(Static, red) + " mask " + mask
					if v != "" {
						col += " " + v
					}
					kind := group
					if group != "sox" {
						kind = "image-source"
						tab.add(kind, col, g)
					}
					tab.add(group, col, g)
					tab.add(kind+" "+served, col, g)
					if net == &dvMaskModel {
						// The rooms of the first mask (dvMaskDRR), which the
						// held-out half's image-source clips all are.
						tab.add(kind+" first mask", col, g)
					}
					line += fmt.Sprintf(" %+.2f", g)
					if strings.Contains(v, "wpeonly") {
						t.Logf("%s %s %s: output/input energy %+.2f dB", rc.id, col, served, 10*math.Log10(sumSquares(y)/sumSquares(rc.input)))
					}
				}
			}
		}
		lines[i] = line
	})
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("%s half's speech, %d simulated rooms, mean SI-SDR gain (dB):\n%s", c.Half, len(cases), tab.String())
}

// deverbShortGainDB is how much SI-SDR the reverb reduction must gain,
// mean over TestRealDeverbShort's pieces, with the room model's short
// rule (clearShort) against without it (rtMinShort at rtMinSignal).
// Measured: tuning half +2.49 dB (7 pieces, +1.62 against -0.87),
// held-out +15.77 (its one piece in the range, +15.88 against +0.11):
// the held-out half holds few such pieces. Since WPE's 8 s blocks at DRR
// 0 dB and under (wpeBlockFor) the tuning half's +2.13 (+1.26 against
// -0.87: a 3 s piece lies in one block with the zeros after its end,
// where on 2 s blocks its first 2 s had a block to themselves; pieces
// 13, 39, 43 lose 0.2 to 2.1 dB); the held-out half was not run.
var deverbShortGainDB = 1.0

// TestRealDeverbShort measures the reverb reduction on short recordings
// in rooms (issue 30): the half's speech in the 36 image-source rooms of
// TestDeverbWideRooms (seed 30), cut into pieces of 3 s, wet and dry
// alike; of those, the pieces with rtMinShort to rtMinSignal signal
// frames a band, which the room model judges by clearShort: the mean
// SI-SDR gain under static (reverb reduction full, noise reduction
// automatic) with clearShort and with the old gate (nothing said under
// rtMinSignal).
func TestRealDeverbShort(t *testing.T) {
	c := realCorpus(t)
	cases := wideCases(c.Clips(), wideRooms(t, 36, 30))
	type piece struct{ wet, dry []float64 }
	var pieces []piece
	const l = 3 * fs
	for _, rc := range cases {
		for k := 0; (k+1)*l <= len(rc.input); k++ {
			pieces = append(pieces, piece{rc.input[k*l : (k+1)*l], rc.dry[k*l : (k+1)*l]})
		}
	}
	type result struct {
		in       bool
		rt       [2]float64
		gain     [2]float64
		sig      int
		inputSDR float64
	}
	res := make([]result, len(pieces))
	gate := rtMinShort
	for pass := range 2 {
		if pass == 1 {
			rtMinShort = rtMinSignal
		}
		parallel(len(pieces), func(i int) {
			pc := pieces[i]
			a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{pc.wet})})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(audio.Buffer{pc.wet}, fs)); err != nil {
				t.Fatal(err)
			}
			p := a.Finish()
			r := &res[i]
			r.sig = a.rt.sig
			r.in = r.sig >= gate*rtBands && r.sig < rtMinSignal*rtBands
			if !r.in {
				return
			}
			r.inputSDR = testaudio.SISDR(pc.dry, pc.wet)
			y, _ := denoise(t, pc.wet, DenoiserOptions{Settings: Settings{Method: Static}, Profile: p})
			r.rt[pass] = p.RT60
			r.gain[pass] = testaudio.SISDR(pc.dry, y) - r.inputSDR
		})
	}
	rtMinShort = gate
	var n, fitted int
	var with, without float64
	for i, r := range res {
		if !r.in {
			continue
		}
		n++
		if r.rt[0] > 0 {
			fitted++
		}
		with += r.gain[0]
		without += r.gain[1]
		t.Logf("piece %3d: signal frames %d, input %5.1f dB; RT60 %.2f: %+.2f dB, without clearShort %+.2f", i, r.sig, r.inputSDR, r.rt[0], r.gain[0], r.gain[1])
	}
	if n == 0 {
		t.Fatalf("none of %d pieces has %d to %d signal frames", len(pieces), gate*rtBands, rtMinSignal*rtBands)
	}
	with /= float64(n)
	without /= float64(n)
	t.Logf("%s half, %d of %d pieces of 3 s under rtMinSignal, %d fitted a room: mean SI-SDR gain %+.2f dB, without clearShort %+.2f", c.Half, n, len(pieces), fitted, with, without)
	if with-without < deverbShortGainDB {
		t.Errorf("clearShort gains %+.2f dB on short pieces in rooms, want %+.1f or more", with-without, deverbShortGainDB)
	}
}
