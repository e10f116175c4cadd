package realaudio

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/audiopost/audiopost/audio"
)

// Breathy is speech with labelled real breaths.
type Breathy struct {
	ID    string
	Input []float64
	// Breaths are the labelled inhalations.
	Breaths []Breath
	// Words are the first 200 ms of the phrase after each breath: the word
	// onsets breath removal must leave alone.
	Words   []audio.Span
	Origins []Origin
}

// breathSource is the held-out recording whose breaths are labelled where
// they are: a radio amateur's conversational English (codec2-examples),
// the one recording of the packages that breathes audibly between phrases
// (Allison's prompts were edited breath-free).
const breathSource = "codec2/ve9qrp"

// ErrNoMaterial is returned for material a half lacks.
var ErrNoMaterial = errors.New("realaudio: the half has no such material")

// Breathy returns the half's speech with labelled real breaths:
// breathSource cut into pieces of 8 to 12 s at its quietest moments, its
// breaths found by findBreaths. Only the held-out half has them: no other
// recording of the packages breathes between phrases (findBreaths finds 19
// breaths in ve9qrp's 112 s, none in 4000 s of everything else), and a
// speaker is never in both halves. For the tuning half it returns
// ErrNoMaterial.
func (c *Corpus) Breathy() ([]Breathy, error) {
	if speakerHalf[breathSource] != c.Half {
		return nil, fmt.Errorf("%w: no breathing speaker in the %s half", ErrNoMaterial, c.Half)
	}
	return c.naturalBreaths()
}

func (c *Corpus) naturalBreaths() ([]Breathy, error) {
	var u Utterance
	for _, us := range c.Speakers {
		if us[0].Speaker == breathSource {
			u = us[0]
		}
	}
	if u.Samples == nil {
		return nil, fmt.Errorf("realaudio: %s not in the %s half", breathSource, c.Half)
	}
	all := findBreaths(u.Samples)
	var out []Breathy
	at := 0
	for i, piece := range cutLong(u.Samples) {
		b := Breathy{ID: fmt.Sprintf("%s#breaths%d", breathSource, i), Input: setActive(append([]float64(nil), piece...), SpeechDB), Origins: []Origin{u.Origin}}
		for _, br := range all {
			if br.Start >= int64(at) && br.Onset+Rate/5 <= at+len(piece) {
				br.Start -= int64(at)
				br.End -= int64(at)
				br.Onset -= at
				b.Breaths = append(b.Breaths, br)
				b.Words = append(b.Words, frames(br.Onset, br.Onset+Rate/5))
			}
		}
		at += len(piece)
		if len(b.Breaths) > 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

func maxf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func meanZCR(x []float64) float64 {
	zc := 0
	for i := 1; i < len(x); i++ {
		if (x[i] >= 0) != (x[i-1] >= 0) {
			zc++
		}
	}
	return float64(zc) * Rate / float64(max(len(x), 1))
}

// firstVoiced returns the first sample of the first voiced frame of x.
func firstVoiced(x []float64) int {
	for i, f := range features(x) {
		if f.voicing > brVoiced {
			return i * featFrame
		}
	}
	return 0
}

// cutPhrases cuts speech at its pauses (runs of 250 ms or more of frames
// 30 dB under the speech) into phrases, each keeping 50 ms of its edges.
func cutPhrases(x []float64) [][]float64 {
	lv := frameDB(x, featFrame)
	s := append([]float64(nil), lv...)
	sortFloats(s)
	thr := s[len(s)*9/10] - 30
	var out [][]float64
	start := -1
	quiet := 0
	for i, v := range lv {
		if v >= thr {
			if start < 0 {
				start = max(0, i-5)
			}
			quiet = 0
			continue
		}
		quiet++
		if start >= 0 && quiet == 25 {
			end := min(len(x), (i-20)*featFrame)
			out = append(out, append([]float64(nil), x[start*featFrame:end]...))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, append([]float64(nil), x[start*featFrame:]...))
	}
	return out
}

// Paused is speech with long pauses, for the silence cutter.
type Paused struct {
	ID    string
	Input []float64
	// Transcript is what is said; empty in the tuning half, whose English
	// has no transcripts: there the recognizer's words on Input are the
	// reference a cut must keep.
	Transcript string
	// Phrases are where the recordings lie, Pauses the pauses of more
	// than a second between them.
	Phrases, Pauses []audio.Span
	Origins         []Origin
}

// pausesOf are the pauses between phrases of a Paused scenario, in
// seconds, in turn: short ones the cutter must keep, long ones it must
// shorten to a second.
var pausesOf = []float64{0.5, 1.6, 0.7, 2.4, 3.2, 1.3}

// Paused returns the half's English phrases joined by pauses (pausesOf),
// the pauses filled with the room tone of the recordings themselves (their
// quietest 200 ms, looped): HeldOut six files of six prompts each, with
// their transcripts; Tuning the half's English recordings.
func (c *Corpus) Paused() []Paused {
	var groups [][]Utterance
	for _, us := range c.Speakers {
		if us[0].Speaker == "asterisk/allison" {
			var short []Utterance // prompts under 8 s, to keep the recognizer's work small
			for _, u := range us {
				if len(u.Samples) < 8*Rate {
					short = append(short, u)
				}
			}
			for i := 0; i+6 <= len(short) && len(groups) < 6; i += 6 {
				groups = append(groups, short[i:i+6])
			}
		}
	}
	if len(groups) == 0 {
		var g []Utterance
		for _, us := range c.Speakers {
			if strings.HasPrefix(us[0].Speaker, "codec2/") && clean(us[0].Samples) {
				for _, ph := range cutPhrases(us[0].Samples) {
					u := us[0]
					u.Samples = ph
					g = append(g, u)
				}
			}
		}
		for i := 0; i+2 <= len(g); i += 4 {
			groups = append(groups, g[i:min(i+4, len(g))])
		}
	}
	return c.pausedOf(groups, "paused")
}

// PausedOtherLanguages is Paused made of the half's prompts in languages
// other than English (the tuning half's French and Italian asterisk
// voices), six of under 8 s to a file: more pauses and speakers to tune
// the silence cutter's pause decision on than the tuning half's English
// holds (one file), where no words need recognising. Transcript is in the
// prompts' language, which an English recogniser cannot score.
func (c *Corpus) PausedOtherLanguages() []Paused {
	var groups [][]Utterance
	for _, us := range c.Speakers {
		if !strings.HasPrefix(us[0].Speaker, "asterisk/") || strings.HasPrefix(us[0].Lang, "en") {
			continue
		}
		var short []Utterance
		for _, u := range us {
			if len(u.Samples) < 8*Rate {
				short = append(short, u)
			}
		}
		for i := 0; i+6 <= len(short) && i < 36; i += 6 {
			groups = append(groups, short[i:i+6])
		}
	}
	return c.pausedOf(groups, "paused-other")
}

// pausedOf joins each group's utterances by the pauses of pausesOf, filled
// with their room tone.
func (c *Corpus) pausedOf(groups [][]Utterance, name string) []Paused {
	var out []Paused
	for gi, g := range groups {
		p := Paused{ID: fmt.Sprintf("%s/%s%d", c.Half, name, gi)}
		var texts []string
		var tone []float64
		for _, u := range g {
			tone = append(tone, roomTone(u.Samples)...)
		}
		for i, u := range g {
			if i > 0 {
				n := int(pausesOf[(gi+i)%len(pausesOf)] * Rate)
				pause := Loop(tone, n, gi*Rate/7)
				if n > Rate {
					p.Pauses = append(p.Pauses, frames(len(p.Input), len(p.Input)+n))
				}
				p.Input = append(p.Input, pause...)
			}
			p.Phrases = append(p.Phrases, frames(len(p.Input), len(p.Input)+len(u.Samples)))
			p.Input = append(p.Input, u.Samples...)
			texts = append(texts, u.Transcript)
			p.Origins = append(p.Origins, u.Origin)
		}
		if g[0].Transcript != "" {
			p.Transcript = strings.Join(texts, " ")
		}
		if len(p.Pauses) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// roomTone returns a recording's room tone: its quietest 200 ms in which
// no 10 ms frame is digital silence, when that lies within 3 dB of the
// recording's floor (the 10th percentile of its frame levels); otherwise
// the recording's pauses are digital silence, and so is its room tone.
func roomTone(x []float64) []float64 {
	const w = 20 // frames
	lv := frameDB(x, featFrame)
	if len(lv) < w {
		return make([]float64, w*featFrame)
	}
	s := append([]float64(nil), lv...)
	sortFloats(s)
	floor := s[len(s)/10]
	best, at := math.Inf(1), -1
	for i := 0; i+w <= len(lv); i++ {
		var p float64
		ok := true
		for _, v := range lv[i : i+w] {
			if v < -180 {
				ok = false
				break
			}
			p += math.Pow(10, v/10)
		}
		if ok && p < best {
			best, at = p, i
		}
	}
	if at < 0 || dbPow(best/w) > floor+3 {
		return make([]float64, w*featFrame)
	}
	return x[at*featFrame : (at+w)*featFrame]
}

// clean says whether a recording's floor (the 10th percentile of its 10 ms
// levels) lies 40 dB or more under its speech (the 90th): clean enough to
// be a reference.
func clean(x []float64) bool {
	lv := frameDB(x, featFrame)
	if len(lv) < 10 {
		return false
	}
	sortFloats(lv)
	return lv[len(lv)*9/10]-lv[len(lv)/10] >= cleanDB
}

// cleanDB is how far under the speech a reference recording's floor lies.
const cleanDB = 35.0

// NoiseUnderDBs are how far under the speech's active level the steady
// noise of PausedUnder lies: a home recording 30-40 dB, a podcaster's room
// 40-60 dB.
var NoiseUnderDBs = []float64{30, 40, 50}

// PausedUnder returns Paused with a real steady noise under the whole of
// each file, speech and pauses alike, as a room or a noisy home recording
// has it: the half's stationary noises in turn (looped from a point of
// their own), at a mean power under dB below the file's active speech
// level (ActiveLevel of the phrases). Pauses, Phrases and Transcript are
// Paused's; the ID and Origins name the noise.
func (c *Corpus) PausedUnder(under float64) []Paused {
	var stat []Noise
	for _, n := range c.Noises {
		if n.Stationary {
			stat = append(stat, n)
		}
	}
	return c.NoiseUnder(c.Paused(), under, stat)
}

// NoiseUnder returns the paused files ps (of Paused or
// PausedOtherLanguages) with the given noises under them as PausedUnder
// lays its steady ones, the fluctuating ones too (wind, applause,
// traffic): the files take noises[0], noises[1], ... and round again. Nil
// when noises is empty; ps is not changed.
func (c *Corpus) NoiseUnder(ps []Paused, under float64, noises []Noise) []Paused {
	if len(noises) == 0 {
		return nil
	}
	ps = append([]Paused(nil), ps...)
	r := newRand(uint64(c.Half)*1000 + 77)
	for i := range ps {
		p := &ps[i]
		nz := noises[i%len(noises)]
		noise := Loop(nz.Samples, len(p.Input), r.intn(len(nz.Samples)))
		var speech []float64
		for _, s := range p.Phrases {
			speech = append(speech, p.Input[s.Start:s.End]...)
		}
		g := math.Sqrt(ActiveLevel(speech) / (math.Pow(10, under/10) * meanPow(noise)))
		x := make([]float64, len(p.Input))
		for k := range x {
			x[k] = p.Input[k] + g*noise[k]
		}
		p.Input = x
		p.ID = fmt.Sprintf("%s/%s/%gdB", p.ID, nz.ID, under)
		p.Origins = append(append([]Origin(nil), p.Origins...), nz.Origins...)
	}
	return ps
}
