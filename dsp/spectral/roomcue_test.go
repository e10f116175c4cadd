package spectral

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
)

var (
	roomCue      = flag.Bool("roomcue", false, "TestRoomCue: measure the room model's babble cues over dry noisy mixes and noisy rooms")
	roomCueSeeds = flag.String("roomcueseeds", "30", "TestRoomCue: the image-source rooms' seeds (wideRooms), comma-separated")
	roomCueRooms = flag.Int("roomcuerooms", 36, "TestRoomCue: image-source rooms per seed")
	roomCueSoxN  = flag.Int("roomcuesoxn", 24, "TestRoomCue: settings of sox's reverb drawn at random per seed")
	roomCueDry   = flag.Bool("roomcuedry", true, "TestRoomCue: the dry noisy mixes")
	roomCueHalf  = flag.Bool("roomcuehalf", true, "TestRoomCue: the half's own 30 rooms (TestRealDeverb's)")
	roomCueDraw  = flag.Int("roomcuedraw", 0, "TestRoomCue: which draw of the dry mixes' clips, babble and SNRs (0: the one chosen on)")
	roomCueClean = flag.Bool("roomcueclean", false, "TestRoomCue: also the half's clean clips (TestRealDeverbDry's), kind \"dry clean\"")
	roomCueShort = flag.String("roomcueshort", "", "TestRoomCue: also every recording cut into pieces of these lengths (s, comma-separated), kind \"... short\"")
	rtMinSig     = flag.Int("rtminsignal", 0, "TestRoomCue, TestDeverbWideRooms: the room model's rtMinSignal and rtMinShort (signal frames per band: a flat gate) if over 0")
)

// cueCase is a recording of TestRoomCue: dry speech under an interferer
// ("dry"), a room with or without noise ("room", "clean room").
type cueCase struct {
	id, kind string
	x        []float64
}

// cueResult is what the room model makes of a cueCase: the room it fits
// before deepShare judges it (fitted), deepShare's value, the spectral
// continuity cue, and the room it reports.
type cueResult struct {
	fitted            bool
	sig               int // signal band frames (rtMinSignal)
	rt, drr, deep     float64
	cue               float64
	offsets           int
	final             float64
	cueTime, duration time.Duration
}

func measureCue(t testing.TB, x []float64) cueResult {
	var res cueResult
	a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, ProfilerOptions{VAD: classifyVAD(t, audio.Buffer{x})})
	if err != nil {
		t.Fatal(err)
	}
	a.rt.probe = func(rt60, drr float64, noise [rtBands]float64, peak uint16) {
		res.fitted, res.rt, res.drr = true, rt60, drr
		res.deep = a.rt.deepShare(rt60, drr, noise, peak)
		start := time.Now()
		res.cue, res.offsets = a.rt.continuity(noise, peak)
		res.cueTime = time.Since(start)
	}
	if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(audio.Buffer{x}, fs)); err != nil {
		t.Fatal(err)
	}
	res.final = a.Finish().RT60
	res.sig = a.rt.sig
	res.duration = time.Duration(float64(len(x)) / fs * float64(time.Second))
	return res
}

// mixSNR adds noise (looped from offset) to x at snr dB under x's active
// level, the sum scaled to a peak of 0.89 at most.
func mixSNR(x, noise []float64, snr float64, offset int) []float64 {
	n := realaudio.Loop(noise, len(x), offset%max(1, len(noise)))
	var e float64
	for _, v := range n {
		e += v * v
	}
	g := math.Sqrt(realaudio.ActiveLevel(x) / (math.Pow(10, snr/10) * e / float64(len(n))))
	out := make([]float64, len(x))
	pk := 0.0
	for i := range x {
		out[i] = x[i] + g*n[i]
		pk = max(pk, math.Abs(out[i]))
	}
	if pk > 0.89 {
		for i := range out {
			out[i] *= 0.89 / pk
		}
	}
	return out
}

// TestRoomCue measures, over dry speech under babble, music and noise
// and over image-source and sox rooms with and without a real noise,
// the room the model fits before deepShare, deepShare's value and the
// spectral continuity cue (go test -run TestRoomCue -v -args -roomcue
// -realhalf tuning): one line per recording, for choosing the gate.
func TestRoomCue(t *testing.T) {
	if !*roomCue {
		t.Skip("-roomcue: a measurement, not a test")
	}
	setMinSignal(t)
	c := realCorpus(t)
	clips := c.Clips()
	var cases []cueCase
	if *roomCueClean {
		for _, cl := range clips {
			if realaudio.FloorBelowDB(cl.Samples) >= realaudio.NoiseFreeDB {
				cases = append(cases, cueCase{id: cl.ID, kind: "dry clean", x: cl.Samples})
			}
		}
	}
	if *roomCueDry {
		for _, m := range c.NoisySpeech() {
			cases = append(cases, cueCase{id: m.ID, kind: "dry", x: m.Input})
		}
		d := *roomCueDraw
		for k := range 40 {
			cl := clips[(k*11+5+d*17)%len(clips)]
			snr := float64(5 + 5*((k+d)%3))
			b := c.Babble(len(cl.Samples), cl.Speaker, uint64(7000+k+1000*d))
			cases = append(cases, cueCase{id: fmt.Sprintf("%s/babble/%gdB", cl.ID, snr), kind: "dry", x: mixSNR(cl.Samples, b, snr, 0)})
		}
		for k := range 20 {
			cl := clips[(k*13+2+d*29)%len(clips)]
			snr := float64(5 + 5*((k+d)%3))
			m := c.Music[(k+d)%len(c.Music)]
			cases = append(cases, cueCase{id: fmt.Sprintf("%s/music/%gdB", cl.ID, snr), kind: "dry", x: mixSNR(cl.Samples, m.Samples, snr, 997*k+d)})
		}
		pool, err := realaudio.FitSpeech("ktuberling", "prompts16k", "prompts8k")
		if err != nil {
			t.Fatal(err)
		}
		for i, us := range pool {
			// Clips of the pool as the corpus makes its own: utterances
			// end to end, 8 s or more, two a voice.
			var x []float64
			k := 0
			sub := us[min(len(us)-1, d*len(us)/3):]
			for j, u := range sub {
				x = append(x, u.Samples...)
				if len(x) < 8*fs && j+1 < len(sub) {
					continue
				}
				x = setActiveDB(x, realaudio.SpeechDB)
				snr := float64(5 + 5*((i+k+d)%3))
				b := c.Babble(len(x), "", uint64(9000+10*i+k+1000*d))
				cases = append(cases, cueCase{id: fmt.Sprintf("%s#%d/babble/%gdB", us[0].Speaker, k, snr), kind: "dry", x: mixSNR(x, b, snr, 0)})
				x = nil
				if k++; k == 2 {
					break
				}
			}
		}
	}
	var rooms []reverbCase
	for _, s := range strings.Split(*roomCueSeeds, ",") {
		var seed uint64
		fmt.Sscan(s, &seed)
		for _, rc := range wideCases(c.Clips(), wideRooms(t, *roomCueRooms, seed)) {
			rc.id += fmt.Sprintf("/s%d", seed)
			rooms = append(rooms, rc)
		}
		for i, rm := range dvMaskSoxRooms(t, *roomCueSoxN, rand.New(rand.NewPCG(seed, 0x50c5))) {
			cl := clips[(i*7+2)%len(clips)]
			x := append(append([]float64(nil), cl.Samples...), make([]float64, fs/4)...)
			wet := convolve(x, rm.h)
			for j := range x {
				wet[j] += x[j]
			}
			rooms = append(rooms, reverbCase{id: fmt.Sprintf("%s/soxwide%d/s%d", cl.ID, i, seed), method: "sox", input: wet[:len(x)]})
		}
	}
	if *roomCueHalf {
		rooms = append(rooms, deverbCases(t, c, true, 0)...)
	}
	for i, rc := range rooms {
		cases = append(cases, cueCase{id: rc.id, kind: "clean room", x: rc.input})
		nz := c.Noises[(i*5)%len(c.Noises)]
		snr := float64(10 + (i*7)%11)
		cases = append(cases, cueCase{id: fmt.Sprintf("%s/%s/%gdB", rc.id, nz.Class, snr), kind: "room", x: mixSNR(rc.input, nz.Samples, snr, 1237*i)})
	}
	if *roomCueShort != "" {
		// Short recordings, as a user's clip of a few words: pieces of
		// every recording above, end to end from its start.
		n := len(cases)
		for _, s := range strings.Split(*roomCueShort, ",") {
			var sec float64
			if _, err := fmt.Sscan(s, &sec); err != nil || sec <= 0 {
				t.Fatalf("-roomcueshort %q", *roomCueShort)
			}
			l := int(sec * fs)
			for _, cs := range cases[:n] {
				for k := 0; (k+1)*l <= len(cs.x); k++ {
					cases = append(cases, cueCase{id: fmt.Sprintf("%s/%gs%d", cs.id, sec, k), kind: cs.kind + " short", x: cs.x[k*l : (k+1)*l]})
				}
			}
		}
	}
	res := make([]cueResult, len(cases))
	parallel(len(cases), func(i int) { res[i] = measureCue(t, cases[i].x) })
	var cue, dur time.Duration
	for i, cs := range cases {
		r := res[i]
		cue += r.cueTime
		dur += r.duration
		if !r.fitted {
			t.Logf("CUE %-11s %-60s sig %4d nofit final %.2f", cs.kind, cs.id, r.sig, r.final)
			continue
		}
		t.Logf("CUE %-11s %-60s sig %4d fit %.2f %+4.0f deep %.3f cue %+6.2f n %3d final %.2f", cs.kind, cs.id, r.sig, r.rt, r.drr, r.deep, r.cue, r.offsets, r.final)
	}
	t.Logf("%d recordings, %.0f s of audio; the cue took %v (%.3f s per hour of audio)", len(cases), dur.Seconds(), cue, cue.Seconds()/dur.Hours())
}

// setMinSignal moves rtMinSignal and rtMinShort to -rtminsignal for the
// test, where set.
func setMinSignal(t testing.TB) {
	if *rtMinSig > 0 {
		v, w := rtMinSignal, rtMinShort
		t.Cleanup(func() { rtMinSignal, rtMinShort = v, w })
		rtMinSignal, rtMinShort = *rtMinSig, *rtMinSig
	}
}

// setActiveDB scales x to an active level of db dBFS.
func setActiveDB(x []float64, db float64) []float64 {
	g := math.Sqrt(math.Pow(10, db/10) / max(realaudio.ActiveLevel(x), 1e-30))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * g
	}
	return out
}

// BenchmarkRoomCue measures the room model's spectral continuity over an
// hour of audio (20 s of the nodes' test signal looped): the cue that
// runs once per file after the fit, where deepShare leaves it undecided,
// against the budget of 0.5 s an hour, and the third-octave levels every
// frame keeps for it (fine_s_per_hour: the estimator's write with them
// less without).
func BenchmarkRoomCue(b *testing.B) {
	in := stereoTest(fs, 20)[0]
	r := newRT60Estimator(fs)
	for range 180 {
		r.write(in)
	}
	var noise [rtBands]float64
	for i := range noise {
		noise[i] = r.bandQuantile(i, len(r.levels)/rtBands, rtFloorQuantile, nil)
	}
	var peak uint16
	for _, l := range r.levels {
		peak = max(peak, l)
	}
	b.Run("continuity", func(b *testing.B) {
		n := 0
		for b.Loop() {
			_, n = r.continuity(noise, peak)
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s_per_hour")
		b.ReportMetric(float64(n), "offsets")
	})
	b.Run("fine", func(b *testing.B) {
		frames := len(r.levels) / rtBands
		for b.Loop() {
			fine := r.fine[:0]
			for range frames {
				for k := range rtFineBands {
					var p float64
					for _, v := range r.pow[r.fineLo[k]:r.fineHi[k]] {
						p += v
					}
					fine = append(fine, uint16(min(math.MaxUint16, max(0, int(math.Round(100*(10*math.Log10(p+1e-30)-rtLevelLow)))))))
				}
			}
			r.fine = fine
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "fine_s_per_hour")
	})
}
