package realaudio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// both loads the two halves; only the split's own tests read both.
func both(t *testing.T) (tune, held *Corpus) {
	t.Helper()
	return Load(t, Tuning), Load(t, HeldOut)
}

func TestSplitIsDisjointBySource(t *testing.T) {
	tune, held := both(t)
	speakers := map[string]Half{}
	for _, c := range []*Corpus{tune, held} {
		for _, us := range c.Speakers {
			for _, u := range us {
				if h, ok := speakers[u.Speaker]; ok && h != c.Half {
					t.Errorf("speaker %s in both halves", u.Speaker)
				}
				speakers[u.Speaker] = c.Half
			}
		}
	}
	// Every recording (file, or sound of a catalogue file) and every
	// sample a piece plays lies in one half only.
	seen := map[string]Half{}
	mark := func(h Half, o Origin) {
		key := o.Path
		if strings.HasPrefix(o.Note, "sound ") {
			key += "#" + strings.SplitN(o.Note, ":", 2)[0]
		}
		if g, ok := seen[key]; ok && g != h {
			t.Errorf("%s in both halves", key)
		}
		seen[key] = h
	}
	for _, c := range []*Corpus{tune, held} {
		for _, us := range c.Speakers {
			for _, u := range us {
				mark(c.Half, u.Origin)
			}
		}
		for _, n := range c.Noises {
			for _, o := range n.Origins {
				mark(c.Half, o)
			}
		}
		for _, m := range c.Music {
			if m.Recorded {
				for _, o := range m.Origins {
					mark(c.Half, o)
				}
			}
		}
		for _, s := range samplesOf(c.Half) {
			mark(c.Half, Origin{Path: s})
		}
	}
	// Each half has every kind of material.
	for _, c := range []*Corpus{tune, held} {
		kinds := map[string]bool{}
		for _, m := range c.Music {
			kinds[m.Kind] = true
		}
		for _, k := range MusicKinds {
			if !kinds[k] {
				t.Errorf("%s: no %s music", c.Half, k)
			}
		}
		var stat, nonstat int
		for _, n := range c.Noises {
			if n.Stationary {
				stat++
			} else {
				nonstat++
			}
		}
		if stat == 0 || nonstat == 0 {
			t.Errorf("%s: %d stationary and %d non-stationary noises", c.Half, stat, nonstat)
		}
		if len(c.Speakers) < 8 {
			t.Errorf("%s: %d speakers", c.Half, len(c.Speakers))
		}
	}
}

// The split does not move: the same speakers and files on every build.
func TestSplitIsDeterministic(t *testing.T) {
	needPackages(t)
	a, err := speechOf(Tuning)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		b, err := speechOf(Tuning)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("run %d: %d speakers, then %d", i, len(a), len(b))
		}
		for k := range a {
			if a[k][0].Speaker != b[k][0].Speaker || len(a[k]) != len(b[k]) {
				t.Errorf("run %d: speaker %d was %s, now %s", i, k, a[k][0].Speaker, b[k][0].Speaker)
			}
		}
	}
}

func TestNoisySpeechSNRs(t *testing.T) {
	c := Load(t, Tuning)
	mixes := c.NoisySpeech()
	if len(mixes) != len(SNRs)*len(Interferers)*2 {
		t.Fatalf("%d mixes", len(mixes))
	}
	for _, m := range mixes {
		got := dbPow(ActiveLevel(m.Clean) / meanPow(m.Noise))
		if math.Abs(got-m.SNR) > 0.1 {
			t.Errorf("%s: SNR %.2f dB, asked %g", m.ID, got, m.SNR)
		}
		for i := range m.Input {
			if math.Abs(m.Input[i]-(m.Clean[i]+m.Noise[i])) > 1e-12 {
				t.Fatalf("%s: input is not clean + noise at %d", m.ID, i)
			}
		}
		if p := peak(m.Input); p > 0.9 {
			t.Errorf("%s: peaks at %.2f", m.ID, p)
		}
		if rms(m.Noise) == 0 {
			t.Errorf("%s: silent noise", m.ID)
		}
	}
}

func TestRoomsRT60(t *testing.T) {
	for _, h := range []Half{Tuning, HeldOut} {
		needPackages(t)
		c := &Corpus{Half: h}
		rooms, irs, err := c.Rooms()
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rooms {
			got := SchroederRT60(irs[i], Rate)
			if math.Abs(got/r.RT60-1) > 0.1 {
				t.Errorf("%s room %v: RT60 %.3f s by Schroeder, asked %.2f", h, r.Size, got, r.RT60)
			}
			if irs[i][irLead] < 0.9 {
				t.Errorf("%s room %v: direct path %.2f at %d", h, r.Size, irs[i][irLead], irLead)
			}
		}
	}
}

// An exponentially decaying noise of known RT60 is measured as such.
func TestSchroederRT60(t *testing.T) {
	r := newRand(3)
	for _, rt := range []float64{0.3, 0.8, 1.5} {
		h := make([]float64, int(1.5*rt*Rate))
		for i := range h {
			h[i] = r.gauss() * math.Exp(-6.91*float64(i)/(rt*Rate))
		}
		if got := SchroederRT60(h, Rate); math.Abs(got/rt-1) > 0.03 {
			t.Errorf("RT60 %.2f measured %.3f", rt, got)
		}
	}
}

func TestHumDrift(t *testing.T) {
	for _, base := range []float64{50, 60} {
		h := makeHum(12*Rate, base, HumDrift, 9)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, f := range h.Freq {
			lo, hi = min(lo, f), max(hi, f)
		}
		if math.Abs(hi-lo-HumDrift) > 1e-9 || math.Abs((hi+lo)/2-base) > 1e-9 {
			t.Errorf("%g Hz: the frequency spans %.3f..%.3f", base, lo, hi)
		}
		if h.Harmonics != int(HumMaxHz/base) {
			t.Errorf("%g Hz: %d harmonics", base, h.Harmonics)
		}
		// The signal's measured frequency follows the track: over each
		// second, the tone's peak is the track's mean.
		var mlo, mhi = math.Inf(1), math.Inf(-1)
		for s := 0; s+Rate <= len(h.Samples); s += Rate {
			var mean float64
			for _, f := range h.Freq[s : s+Rate] {
				mean += f
			}
			mean /= Rate
			got := ToneFreq(h.Samples[s:s+Rate], base, 1.5)
			if math.Abs(got-mean) > 0.05 {
				t.Errorf("%g Hz, second %d: tone at %.3f Hz, track %.3f", base, s/Rate, got, mean)
			}
			mlo, mhi = min(mlo, got), max(mhi, got)
		}
		if mhi-mlo < 0.6*HumDrift {
			t.Errorf("%g Hz: measured frequency wanders only %.2f Hz", base, mhi-mlo)
		}
	}
}

func TestHummedLevels(t *testing.T) {
	c := Load(t, Tuning)
	for _, m := range c.Hummed() {
		got := dbPow(ActiveLevel(m.Clean) / meanPow(m.Hum.Samples))
		if math.Abs(got-HumBelowDB) > 0.1 {
			t.Errorf("%s: hum %.2f dB under the speech, asked %g", m.ID, got, HumBelowDB)
		}
	}
}

func TestProgrammeLabels(t *testing.T) {
	c := Load(t, Tuning)
	for _, p := range c.Programmes() {
		at := 0
		kinds := map[string]bool{}
		for _, s := range p.Segments {
			if s.Start != at || s.End <= s.Start {
				t.Fatalf("%s: segment %+v after %d", p.ID, s, at)
			}
			at = s.End
			if (s.Label == "speech") != (s.What == "speech" || s.What == "speech+bed") {
				t.Errorf("%s: %s labelled %s", p.ID, s.What, s.Label)
			}
			kinds[s.What] = true
		}
		if at != len(p.Input) {
			t.Errorf("%s: segments end at %d of %d", p.ID, at, len(p.Input))
		}
		for _, k := range append([]string{"speech", "speech+bed"}, MusicKinds...) {
			if !kinds[k] {
				t.Errorf("%s: no %s", p.ID, k)
			}
		}
		if len(p.Labels) != len(p.Input)/Rate {
			t.Errorf("%s: %d labels for %d s", p.ID, len(p.Labels), len(p.Input)/Rate)
		}
		for s, l := range p.Labels {
			mid := s*Rate + Rate/2
			for _, g := range p.Segments {
				// A second wholly inside a segment has its label.
				if g.Start <= s*Rate && (s+1)*Rate <= g.End && g.Label != l {
					t.Errorf("%s: second %d labelled %s inside %s", p.ID, s, l, g.Label)
				}
				_ = mid
			}
		}
	}
}

// Every origin names a file of an installed package whose copyright file
// grants the licence it records.
func TestOriginsAndLicences(t *testing.T) {
	tune, held := both(t)
	check := func(o Origin) {
		if !strings.HasPrefix(o.Path, "/") {
			return // a speaker or a General MIDI program, not a file
		}
		if _, err := os.Stat(o.Path); err != nil {
			t.Errorf("%s: %v", o, err)
		}
		cp, err := os.ReadFile(filepath.Join("/usr/share/doc", o.Package, "copyright"))
		if err != nil {
			t.Errorf("%s: %v", o, err)
			return
		}
		lic := strings.TrimSuffix(o.License, "+")
		if !strings.Contains(strings.Join(strings.Fields(string(cp)), " "), lic) {
			t.Errorf("%s: /usr/share/doc/%s/copyright does not mention %s", o, o.Package, lic)
		}
	}
	for _, c := range []*Corpus{tune, held} {
		for _, us := range c.Speakers {
			for _, u := range us {
				check(u.Origin)
			}
		}
		for _, n := range c.Noises {
			for _, o := range n.Origins {
				check(o)
			}
		}
		for _, m := range c.Music {
			for _, o := range m.Origins {
				check(o)
			}
		}
	}
}

func TestLoopToIsSeamless(t *testing.T) {
	r := newRand(1)
	x := make([]float64, Rate)
	for i := range x {
		x[i] = r.gauss()
	}
	y := Loop(x, 5*Rate, 1234)
	// The level of 10 ms frames never dips or jumps by more than a noise
	// frame's spread: no hole or double at a wrap.
	lv := frameDB(y, Rate/100)
	for i, v := range lv {
		if math.Abs(v) > 1.5 {
			t.Fatalf("frame %d at %.2f dB", i, v)
		}
	}
}

func TestSoxRT60(t *testing.T) {
	needPackages(t)
	for _, rt := range SoxRT60s {
		rev, got, err := soxReverberance(rt)
		if err != nil {
			t.Fatal(err)
		}
		h, err := soxImpulse(rev)
		if err != nil {
			t.Fatal(err)
		}
		if m := SchroederRT60(h, Rate); math.Abs(m/rt-1) > 0.1 || m != got {
			t.Errorf("sox reverberance %.1f: RT60 %.3f s (%.3f), asked %.2f", rev, m, got, rt)
		}
	}
}

// The breaths are labelled as findBreaths's numbers say, and each is
// followed by the word onset it guards.
func TestBreathLabels(t *testing.T) {
	c := Load(t, HeldOut)
	bs, err := c.Breathy()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range bs {
		if len(b.Words) != len(b.Breaths) {
			t.Fatalf("%s: %d word onsets for %d breaths", b.ID, len(b.Words), len(b.Breaths))
		}
		fs := features(b.Input)
		for i, br := range b.Breaths {
			n++
			ms := (br.End - br.Start) * 1000 / Rate
			if ms < brMinMs || ms > brMaxMs || br.UnderDB < brUnderMin || br.UnderDB > brUnderMax || br.ZCR >= brMaxZCR {
				t.Errorf("%s: breath %+v (%d ms)", b.ID, br, ms)
			}
			for f := br.Start / featFrame; f < br.End/featFrame; f++ {
				if fs[f].voicing >= brVoicing+0.05 {
					t.Errorf("%s: breath %d voiced at %.2f s", b.ID, i, float64(f)/100)
					break
				}
			}
			if w := b.Words[i]; w.Start <= br.End || w.End > int64(len(b.Input)) {
				t.Errorf("%s: word onset %+v after breath %+v", b.ID, w, br.Span)
			}
		}
	}
	if n < 10 {
		t.Errorf("%d breaths", n)
	}
	if _, err := Load(t, Tuning).Breathy(); !errors.Is(err, ErrNoMaterial) {
		t.Errorf("tuning breaths: %v", err)
	}
}

func TestPausedSpans(t *testing.T) {
	for _, h := range []Half{Tuning, HeldOut} {
		c := Load(t, h)
		ps := c.Paused()
		if len(ps) == 0 {
			t.Fatalf("%s: no paused speech", h)
		}
		for _, p := range ps {
			if len(p.Pauses) == 0 {
				t.Errorf("%s: no pause over 1 s", p.ID)
			}
			for _, s := range p.Pauses {
				if s.End-s.Start <= Rate {
					t.Errorf("%s: pause %+v", p.ID, s)
				}
				// a pause is quiet: 25 dB under the speech
				if lv := dbPow(meanPow(p.Input[s.Start:s.End]) / ActiveLevel(p.Input)); lv > -25 {
					t.Errorf("%s: pause %.1f dB under the speech", p.ID, -lv)
				}
			}
			if (h == HeldOut) != (p.Transcript != "") {
				t.Errorf("%s: transcript %q", p.ID, p.Transcript)
			}
		}
	}
}

func TestPausedOtherLanguages(t *testing.T) {
	c := Load(t, Tuning)
	ps := c.PausedOtherLanguages()
	if len(ps) < 6 {
		t.Fatalf("%d files of French and Italian prompts, want 6 or more", len(ps))
	}
	for _, p := range ps {
		if len(p.Pauses) == 0 || len(p.Phrases) != 6 || p.Transcript == "" {
			t.Errorf("%s: %d pauses over 1 s, %d phrases, transcript %q", p.ID, len(p.Pauses), len(p.Phrases), p.Transcript)
		}
	}
	if ps := Load(t, HeldOut).PausedOtherLanguages(); len(ps) != 0 {
		t.Errorf("held-out: %d files, but its only prompt voice is English", len(ps))
	}
}

func TestPausedUnder(t *testing.T) {
	for _, h := range []Half{Tuning, HeldOut} {
		c := Load(t, h)
		clean := c.Paused()
		for _, under := range NoiseUnderDBs {
			ps := c.PausedUnder(under)
			if len(ps) != len(clean) {
				t.Fatalf("%s %g dB: %d files, Paused has %d", h, under, len(ps), len(clean))
			}
			for i, p := range ps {
				// the pauses hold the noise: its level within 1 dB of
				// under dB below the phrases' active level
				var speech, noise []float64
				for _, s := range p.Phrases {
					speech = append(speech, clean[i].Input[s.Start:s.End]...)
				}
				for k := range p.Input {
					noise = append(noise, p.Input[k]-clean[i].Input[k])
				}
				if lv := dbPow(ActiveLevel(speech) / meanPow(noise)); math.Abs(lv-under) > 1 {
					t.Errorf("%s: noise %.1f dB under the speech, want %g", p.ID, lv, under)
				}
				if p.Transcript != clean[i].Transcript || len(p.Pauses) != len(clean[i].Pauses) {
					t.Errorf("%s: transcript or pauses differ from Paused's", p.ID)
				}
			}
		}
	}
}
