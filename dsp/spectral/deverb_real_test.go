package spectral

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// reverbCase is reverberant speech with its dry reference lined up with
// the direct path.
type reverbCase struct {
	id     string
	method string // "image-source" or "sox"
	rt60   float64
	dry    []float64
	input  []float64
	// impulse is the room's: from the direct path on (image-source) or
	// the wet part alone, which the input adds to the dry speech (sox).
	impulse []float64
}

// deverbRT60s is the range of reverberation times issue 30 asks +3 dB of
// SI-SDR at.
const deverbLoRT60, deverbHiRT60 = 0.5, 1.0

// deverbCases returns the half's reverberant speech at RT60 0.5 to 1.0 s:
// the corpus's scenarios (realaudio's Reverberant, image-source rooms,
// and SoxReverberant, sox's reverb; two clips per room, the quality
// report's set), and with more, extra clips of the half through the same
// rooms' impulse responses (more of them per room: extra clips each).
// Without all (the plain run), one clip per room.
func deverbCases(t testing.TB, c *realaudio.Corpus, all bool, extra int) []reverbCase {
	t.Helper()
	img, err := c.Reverberant()
	if err != nil {
		t.Fatal(err)
	}
	sox, err := c.SoxReverberant()
	if err != nil {
		t.Fatal(err)
	}
	var rooms []realaudio.Reverb
	for _, rv := range append(img, sox...) {
		if rv.RT60 >= deverbLoRT60-1e-9 && rv.RT60 <= deverbHiRT60+1e-9 {
			rooms = append(rooms, rv)
		}
	}
	var out []reverbCase
	seen := map[string]bool{}
	for _, rv := range rooms {
		room := fmt.Sprintf("%s %.1f", rv.Method, rv.RT60)
		if !all && seen[room] {
			continue
		}
		seen[room] = true
		out = append(out, reverbCase{id: rv.ID, method: rv.Method, rt60: rv.RT60, dry: rv.Dry, input: rv.Input, impulse: rv.Impulse})
	}
	if extra == 0 {
		return out
	}
	// More clips through the same impulse responses: the image-source
	// impulse holds the direct path (at its peak), sox's is its wet part
	// alone (the corpus adds the dry speech to it).
	clips := c.Clips()
	k := 0
	done := map[string]bool{}
	for _, rv := range rooms {
		room := fmt.Sprintf("%s %.1f", rv.Method, rv.RT60)
		if done[room] {
			continue
		}
		done[room] = true
		lead := 0
		if rv.Method == "image-source" {
			for j, v := range rv.Impulse {
				if math.Abs(v) > math.Abs(rv.Impulse[lead]) {
					lead = j
				}
			}
		}
		for range extra {
			cl := clips[(k*11+5)%len(clips)]
			k++
			x := cl.Samples
			wet := convolve(x, rv.Impulse)
			dry := x
			if rv.Method == "sox" {
				for j := range wet {
					wet[j] += x[j]
				}
			} else {
				dry = make([]float64, len(x))
				copy(dry[lead:], x)
			}
			out = append(out, reverbCase{id: fmt.Sprintf("%s/%s%.1fs", cl.ID, strings.Fields(rv.Method)[0], rv.RT60), method: rv.Method, rt60: rv.RT60, dry: dry, input: wet, impulse: rv.Impulse})
		}
	}
	return out
}

// deverbFloorDB is the mean SI-SDR gain, per kind of room, that each
// method and noise setting keeps on the held-out half: the worst of the
// -realfull run rounded down (the issue asks +3 dB, which sox's rooms
// reach and the image-source rooms do not yet). -realfull, on 30 rooms,
// measures image-source +2.96 to +3.06 (static +3.05/+3.03 with noise
// reduction automatic/off, dynamic +3.06/+3.04, speech_isolation
// +3.05/+2.96) and sox +3.90 to +4.25 (static +4.16/+4.16, dynamic
// +4.25/+4.19, speech_isolation +4.04/+3.90; its klettres clips,
// recorded in rooms of their own, lose up to 2.3 dB; the image-source
// rooms of 0.5 s gain +0.4 to +2.0: their early reflections, which the
// reference does not hold, are most of their reverberation, see
// TestDeverbOracle), one look after the choice of WPE's 8 s blocks at
// DRR 0 dB and under (wpeBlockFor, chosen on simulated rooms with the
// tuning half's speech); the tuning half's -realfull image-source +3.97
// to +4.20 -> +4.11 to +4.36, sox +4.99 to +5.40 -> +5.04 to +5.45.
// Before, on 2 s blocks: held-out image-source +2.67 to +2.78 (static
// +2.78/+2.75, dynamic +2.78/+2.75, speech_isolation +2.77/+2.67), sox
// +3.67 to +4.02 (static +3.93/+3.93, dynamic +4.02/+3.97,
// speech_isolation +3.81/+3.67). The floors are the look's worst
// rounded down with room to spare: the plain run's three image-source
// clips (the first of each room) measured +2.8 to +3.0 in its per-clip
// figures, which are to 0.1 dB. Before WPE predicted from 6 hops and
// the rule's tail was fed as 3 dB further under the speech in rooms
// the room model puts over 7.5 dB DRR (wpeClearDRR), held-out sox
// gained +3.27 to +3.66 (static +3.58/+3.58, dynamic +3.66/+3.62,
// speech_isolation +3.40/+3.27), tuning sox +4.56 to +5.04, the
// image-source rooms the same (held-out, one look after the choice);
// the plain run measured image-source +2.86/+2.79, sox +5.20/+5.20,
// whose three sox clips (the first of each room) gain +5.7, +5.6, +5.8
// in that look, static, noise reduction automatic and off alike.
// Before the learned mask read 4 hops
// ahead (dvmask.go) the held-out -realfull measured image-source +2.55
// to +2.64 (static +2.64/+2.61, dynamic +2.64/+2.62, speech_isolation
// +2.62/+2.55), sox +3.24 to +3.61 (static +3.51/+3.50, dynamic
// +3.61/+3.56, speech_isolation +3.37/+3.24), the plain run
// image-source +2.64/+2.59 and sox +5.20/+5.20; the tuning half's
// image-source +3.79 to +4.06, sox +4.51 to +5.00. Before the learned mask
// after the rule (dvmask.go) image-source gained +2.27 to +2.31 (static
// +2.29/+2.29), sox +3.23 to +3.54 (static +3.47/+3.46), the plain run
// image-source +2.31/+2.31. Before WPE averaged the
// dry variance over +-20 frames at DRR 0 dB and under (wpeContextFor) and
// Static's presence profile lost the tails there too (tailsOff),
// image-source gained +2.00 to +2.07, sox +3.38 to +3.71 (static
// +3.61/+3.59): the two held-out klettres sox clips the room model puts
// at 0 dB lose 1-2 dB more. Sox's rooms gained +1.34 to +1.64 before WPE
// predicted from five hops in rooms over 4.5 dB DRR and removed all it
// predicts (wpeDelayFor, reverbStrength). The room model fitted against
// the measured noise floor (the fades around digital silence left out)
// from a second of signal per band, the Profile's noise lowered to that
// floor where a room is found, with WPE on 24 frames.
var deverbFloorDB = map[string]float64{"image-source": 2.7, "sox": 3.8}

// Real speech in rooms of RT60 0.5 to 1.0 s (image-source and sox's
// reverb) through the real node, as the engine runs it (the Profiler with
// the classifier's voice activity, then the Denoiser at full reverb
// reduction), with noise reduction automatic and off (ReductionDB -1):
// the mean SI-SDR gain against the dry speech lined up with the direct
// path, per kind of room. The plain run measures one clip per room under
// static; -realfull the corpus's whole set and three more clips per room
// under static, dynamic and speech_isolation.
func TestRealDeverb(t *testing.T) {
	c := realCorpus(t)
	methods := []Method{Static}
	extra := 0
	if *realFull {
		methods = []Method{Static, Dynamic, SpeechIsolation}
		extra = 3
	}
	cases := deverbCases(t, c, *realFull, extra)
	reductions := []float64{0, -1}
	var tab table
	parallel(len(cases), func(i int) {
		rc := cases[i]
		p := analyse(t, audio.Buffer{rc.input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{rc.input})})
		in := testaudio.SISDR(rc.dry, rc.input)
		line := fmt.Sprintf("%-34s RT60 %.1f s, estimated %.2f; input %5.1f dB;", rc.id, rc.rt60, p.RT60, in)
		for _, m := range methods {
			for _, red := range reductions {
				y, _ := denoise(t, rc.input, DenoiserOptions{Settings: Settings{Method: m, ReductionDB: red}, Profile: p})
				g := testaudio.SISDR(rc.dry, y) - in
				tab.add(rc.method, deverbColumn(m, red), g)
				line += fmt.Sprintf(" %s %+.1f", deverbColumn(m, red), g)
			}
		}
		t.Log(line)
	})
	t.Logf("%s half, %d rooms, mean SI-SDR gain (dB):\n%s", c.Half, len(cases), tab.String())
	for _, row := range tab.rows {
		for _, col := range tab.cols {
			if g := tab.mean(row, col); g < deverbFloorDB[row] {
				t.Errorf("%s, %s: mean SI-SDR gain %+.2f dB, want %+.1f or more", row, col, g, deverbFloorDB[row])
			}
		}
	}
}

func deverbColumn(m Method, red float64) string {
	if red < 0 {
		return m.String() + " nr off"
	}
	return m.String() + " nr auto"
}

// deverbDryUnder is how many results of the held-out half's dry speech
// may fall under 25 dB SI-SDR with the reverb reduction at full: none
// (plain run, 11 clips under static: worst 38.5 dB; -realfull, 70 clips
// under three methods: worst 27.6 dB, 28.1 before the learned reverb
// mask read ahead; 27.1 dB in the look after wpeClearDRR, which changes
// only clips fitted over 7.5 dB: whether the 0.5 dB is its doing was not
// looked at again). Before the fit's floor left out the fades around
// digital silence, the four klettres/fr clips (each
// letter's file fades its hiss in and out) were fitted as rooms of 0.4 to
// 0.5 s and fell to 10.3 to 17.0 dB: 1 and 12 results under 25 dB.
var deverbDryUnder = [2]int{0, 0}

// Real speech recorded dry (the corpus's clean clips, floor realaudio.NoiseFreeDB
// under the speech, close to the microphone) comes through the reverb
// reduction at its default (full) at 25 dB SI-SDR or more: the Profiler
// must find no room to remove. The plain run measures one clip per
// speaker under static (the methods share the reverb reduction);
// -realfull every clip under static, dynamic and speech_isolation.
func TestRealDeverbDry(t *testing.T) {
	c := realCorpus(t)
	methods := []Method{Static}
	if *realFull {
		methods = []Method{Static, Dynamic, SpeechIsolation}
	}
	var clips []realaudio.Clip
	seen := map[string]bool{}
	for _, cl := range c.Clips() {
		if realaudio.FloorBelowDB(cl.Samples) < realaudio.NoiseFreeDB || (!*realFull && seen[cl.Speaker]) {
			continue
		}
		seen[cl.Speaker] = true
		clips = append(clips, cl)
	}
	type result struct {
		rt60 float64
		sdr  []float64
	}
	got := make([]result, len(clips))
	parallel(len(clips), func(i int) {
		x := clips[i].Samples
		p := analyse(t, audio.Buffer{x}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{x})})
		got[i].rt60 = p.RT60
		for _, m := range methods {
			y, _ := denoise(t, x, DenoiserOptions{Settings: Settings{Method: m}, Profile: p})
			got[i].sdr = append(got[i].sdr, testaudio.SISDR(x, y))
		}
	})
	under, worst := 0, math.Inf(1)
	for i, cl := range clips {
		for j, m := range methods {
			worst = min(worst, got[i].sdr[j])
			if got[i].sdr[j] < 25 {
				under++
				t.Logf("%s (RT60 estimated %.2f s), %s: SI-SDR %.1f dB", cl.ID, got[i].rt60, m, got[i].sdr[j])
			}
		}
	}
	t.Logf("%s half, %d dry clips x %d methods: worst SI-SDR %.1f dB, %d under 25 dB", c.Half, len(clips), len(methods), worst, under)
	full := 0
	if *realFull {
		full = 1
	}
	if allowed := deverbDryUnder[full]; c.Half == realaudio.HeldOut && under > allowed {
		t.Errorf("%d results under 25 dB SI-SDR, want %d or fewer", under, allowed)
	}
}

// deverbNoisyLossDB is how much mean SI-SDR gain the reverb reduction at
// its default (full) may cost the half's noisy speech of each kind of
// interferer against the reverb reduction off, under static: recorded
// without a room, it holds none to remove. The tuning half loses nothing
// (no mix is fitted a room). The held-out half, measured after the
// choice of deepShare (the same figures before and after a rebase that
// brought the learned mask's look-ahead), lost 0.44 dB on babble: one of
// its 6 babble mixes (klettres/de#58 at 15 dB SNR) was still fitted a
// room of 0.4 s and fell from +2.80 to +0.18 dB. Measured once after the
// choice of the spectral continuity (rt60.go's babbleLike), none of its
// 24 mixes is fitted a room and none loses anything (babble +2.40 dB
// with the reverb reduction and without): both halves hold 0.1 dB, so
// that a change that takes any of them for a room fails.
var deverbNoisyLossDB = map[realaudio.Half]float64{realaudio.Tuning: 0.1, realaudio.HeldOut: 0.1}

// Real speech under the noisy-speech scenarios' interferers (recorded dry,
// the interferers added) loses no SI-SDR gain to the reverb reduction at
// its default: the Profiler must take none of them for a room (babble,
// which fills the target's pauses, was: see deepShare). On the tuning
// half, before deepShare, 4 of the 6 babble mixes were fitted rooms
// (RT60 0.4-0.6 s, DRR +3 dB) and the reduction cost the 6 a mean 0.42
// dB under static (+1.08 against +1.50 dB; dynamic 0.39, speech_isolation
// 0.74; klettres/ml#91 alone 2.5-3.1 dB); with it none is fitted a room,
// and the 6 gain +1.53, +1.42, +2.94 dB under static, dynamic and
// speech_isolation (the Profile's noise is no longer lowered to a room's
// floor either).
func TestRealNoisyNoRoom(t *testing.T) {
	c := realCorpus(t)
	mixes := c.NoisySpeech()
	type result struct {
		rt60, on, off float64
	}
	got := make([]result, len(mixes))
	parallel(len(mixes), func(i int) {
		m := mixes[i]
		p := analyse(t, audio.Buffer{m.Input}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{m.Input})})
		in := testaudio.SISDR(m.Clean, m.Input)
		got[i].rt60 = p.RT60
		y, _ := denoise(t, m.Input, DenoiserOptions{Settings: Settings{Method: Static}, Profile: p})
		got[i].on = testaudio.SISDR(m.Clean, y) - in
		y, _ = denoise(t, m.Input, DenoiserOptions{Settings: Settings{Method: Static, DeverbDB: -1}, Profile: p})
		got[i].off = testaudio.SISDR(m.Clean, y) - in
	})
	var tab table
	rooms := 0
	for i, m := range mixes {
		if got[i].rt60 > 0 {
			rooms++
			t.Logf("%s: fitted a room of RT60 %.2f s; static %+.2f dB, reverb reduction off %+.2f", m.ID, got[i].rt60, got[i].on, got[i].off)
		}
		tab.add(m.Interferer, "default", got[i].on)
		tab.add(m.Interferer, "deverb off", got[i].off)
	}
	t.Logf("%s half, %d noisy mixes, %d fitted a room; mean SI-SDR gain under static (dB):\n%s", c.Half, len(mixes), rooms, tab.String())
	for _, row := range tab.rows {
		if d := tab.mean(row, "default") - tab.mean(row, "deverb off"); d < -deverbNoisyLossDB[c.Half] {
			t.Errorf("%s: the reverb reduction at its default costs %.2f dB of SI-SDR gain, want %.1f or less", row, -d, deverbNoisyLossDB[c.Half])
		}
	}
}
