package conversation

import (
	"fmt"
	"math"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Programme is a live show made of real recordings: speakers of one half
// of the corpus (realaudio) taking turns at levels that jump by 10 to 12
// dB, with the pauses the recordings have, music between some turns and
// under others, and, when asked, a real noise under every turn. It is
// mono at realaudio.Rate.
type Programme struct {
	Input []float64
	// Phrases are where the speech is (the clean recordings' active
	// stretches, 10 ms frames within phraseDB of their active level,
	// gaps under 250 ms bridged), Turns where each turn starts and the
	// level it was set to, Music where music plays alone.
	Phrases []audio.Span
	Turns   []testaudio.Turn
	Music   []audio.Span
	// Speakers names each turn's speaker.
	Speakers []string
	Origins  []realaudio.Origin
}

// ProgrammeOptions say what a Programme holds besides its speech.
type ProgrammeOptions struct {
	// Music puts a piece of music (12 s) after every third turn and a
	// music bed realaudio.BedBelowDB under the speech of every fourth.
	Music bool
	// NoiseBelowDB, when above 0, puts one of the half's stationary noise
	// recordings this far under each turn's speech, scaled with the turn
	// as a microphone's own noise is.
	NoiseBelowDB float64
	// MinDensity, when above 0, replaces minDensity: the least share of a
	// clip its phrases must cover. Lower, it lets in speakers who pause
	// between short sentences (0.6 takes the tuning half's codec2/cross
	// and hts1, 2.5 s sentences with 0.4 to 0.8 s of room around them).
	MinDensity float64
}

// turnLevels are the turns' levels in dB, cycling: every other turn is
// the host's at 0 dB, the guests' between them 10 to 12 dB louder or
// quieter, so that every change of speaker jumps by 10 to 12 dB.
var turnLevels = []float64{0, 12, 0, -10, 0, 11, 0, -12, 0, 10, 0, -11}

// turnSeconds is the shortest turn: clips of its speaker are joined until
// it is reached.
const turnSeconds = 12

// minDensity is the least share of a clip its phrases cover: talk, not
// words read one by one with seconds between them (klettres's letters),
// whose short-term loudness no leveler should bring to a target (that
// would raise the pauses).
const minDensity = 0.75

// density is the share of x its phrases cover.
func density(x []float64) float64 {
	var n int64
	for _, s := range phrases(x) {
		n += s.Len()
	}
	return float64(n) / float64(max(len(x), 1))
}

// phraseDB is how far under a clip's active level a 10 ms frame may lie
// and count as speech.
const phraseDB = 20.0

// RealProgramme returns about seconds of a live show from c's recordings:
// turns of one speaker each (clips of realaudio's Clips joined up to at
// least turnSeconds),
// the half's most abundant speaker (the host) taking every other turn and
// the others (the guests) taking the turns between, at turnLevels. Clips
// with digital silence in them are left out (a live microphone always
// carries its room), and so are clips that are mostly pauses (see
// minDensity). The whole is scaled so that its peak lies at -1 dBFS
// or under (the unscaled speech is at realaudio.SpeechDB).
func RealProgramme(c *realaudio.Corpus, seconds float64, o ProgrammeOptions) Programme {
	const rate = realaudio.Rate
	bySpeaker := map[string][]realaudio.Clip{}
	var order []string
	least := minDensity
	if o.MinDensity > 0 {
		least = o.MinDensity
	}
	for _, cl := range c.Clips() {
		if hasDigitalSilence(cl.Samples) || density(cl.Samples) < least {
			continue
		}
		if bySpeaker[cl.Speaker] == nil {
			order = append(order, cl.Speaker)
		}
		bySpeaker[cl.Speaker] = append(bySpeaker[cl.Speaker], cl)
	}
	host := order[0]
	for _, s := range order {
		if len(bySpeaker[s]) > len(bySpeaker[host]) {
			host = s
		}
	}
	var guests []string
	for _, s := range order {
		if s != host {
			guests = append(guests, s)
		}
	}
	var stationary []realaudio.Noise
	for _, n := range c.Noises {
		if n.Stationary {
			stationary = append(stationary, n)
		}
	}
	var music []realaudio.Music
	for _, m := range c.Music {
		music = append(music, m)
	}
	var p Programme
	n := int(seconds * rate)
	used := map[string]int{}
	next := func(speaker string) realaudio.Clip {
		cs := bySpeaker[speaker]
		cl := cs[used[speaker]%len(cs)]
		used[speaker]++
		return cl
	}
	for k := 0; len(p.Input) < n; k++ {
		speaker := host
		if k%2 == 1 && len(guests) > 0 {
			speaker = guests[(k/2)%len(guests)]
		}
		db := turnLevels[k%len(turnLevels)]
		g := math.Pow(10, db/20)
		start := len(p.Input)
		p.Turns = append(p.Turns, testaudio.Turn{Start: start, GainDB: db})
		p.Speakers = append(p.Speakers, speaker)
		var turn []float64
		for len(turn) < turnSeconds*rate {
			cl := next(speaker)
			for _, sp := range phrases(cl.Samples) {
				p.Phrases = append(p.Phrases, audio.Span{Start: int64(start+len(turn)) + sp.Start, End: int64(start+len(turn)) + sp.End})
			}
			turn = append(turn, cl.Samples...)
			p.Origins = append(p.Origins, cl.Origins...)
		}
		if o.Music && k%4 == 3 {
			m := music[(k/4)%len(music)]
			bed := realaudio.Loop(m.Samples, len(turn), k*rate/3)
			scale(bed, math.Sqrt(realaudio.ActiveLevel(turn)*math.Pow(10, -realaudio.BedBelowDB/10)/meanPow(bed)))
			for i := range turn {
				turn[i] += bed[i]
			}
			p.Origins = append(p.Origins, m.Origins...)
		}
		if o.NoiseBelowDB > 0 && len(stationary) > 0 {
			nz := stationary[k%len(stationary)]
			noise := realaudio.Loop(nz.Samples, len(turn), k*rate/7)
			scale(noise, math.Sqrt(realaudio.ActiveLevel(turn)*math.Pow(10, -o.NoiseBelowDB/10)/meanPow(noise)))
			for i := range turn {
				turn[i] += noise[i]
			}
			p.Origins = append(p.Origins, nz.Origins...)
		}
		scale(turn, g)
		p.Input = append(p.Input, turn...)
		if o.Music && k%3 == 2 && len(p.Input) < n {
			m := music[(k/3+1)%len(music)]
			x := realaudio.Loop(m.Samples, 12*rate, k*rate/5)
			fade(x, rate/50)
			// Music as loud as the speech around it, give or take 3 dB.
			lv := realaudio.SpeechDB + db + float64(k%7-3)
			scale(x, math.Sqrt(math.Pow(10, lv/10)/realaudio.ActiveLevel(x)))
			p.Music = append(p.Music, audio.Span{Start: int64(len(p.Input)), End: int64(len(p.Input) + len(x))})
			p.Input = append(p.Input, x...)
			p.Origins = append(p.Origins, m.Origins...)
		}
	}
	p.Input = p.Input[:n]
	var phr []audio.Span
	for _, sp := range p.Phrases {
		if sp.End <= int64(n) {
			phr = append(phr, sp)
		}
	}
	p.Phrases = phr
	for len(p.Turns) > 1 && p.Turns[len(p.Turns)-1].Start >= n {
		p.Turns = p.Turns[:len(p.Turns)-1]
		p.Speakers = p.Speakers[:len(p.Speakers)-1]
	}
	peak := 0.0
	for _, v := range p.Input {
		peak = max(peak, math.Abs(v))
	}
	if top := math.Pow(10, -1.0/20); peak > top {
		scale(p.Input, top/peak)
	}
	return p
}

// String describes the programme: its turns and speakers.
func (p Programme) String() string {
	seen := map[string]bool{}
	var names []string
	for _, s := range p.Speakers {
		if !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	return fmt.Sprintf("%.0f s, %d turns of %d speakers (%s), %d music segments", float64(len(p.Input))/realaudio.Rate,
		len(p.Turns), len(names), strings.Join(names, ", "), len(p.Music))
}

// hasDigitalSilence reports whether x holds a 10 ms frame of zeros.
func hasDigitalSilence(x []float64) bool {
	const w = realaudio.Rate / 100
	for i := 0; i+w <= len(x); i += w {
		zero := true
		for _, v := range x[i : i+w] {
			if v != 0 {
				zero = false
				break
			}
		}
		if zero {
			return true
		}
	}
	return false
}

// phrases finds the speech of a clean clip: 10 ms frames within phraseDB
// of its active level, gaps under 250 ms bridged, stretches under 100 ms
// dropped.
func phrases(x []float64) []audio.Span {
	const w = realaudio.Rate / 100
	thr := realaudio.ActiveLevel(x) * math.Pow(10, -phraseDB/10)
	var out []audio.Span
	for i := 0; i+w <= len(x); i += w {
		if meanPow(x[i:i+w]) < thr {
			continue
		}
		if k := len(out) - 1; k >= 0 && int64(i)-out[k].End < realaudio.Rate/4 {
			out[k].End = int64(i + w)
			continue
		}
		out = append(out, audio.Span{Start: int64(i), End: int64(i + w)})
	}
	keep := out[:0]
	for _, sp := range out {
		if sp.Len() >= realaudio.Rate/10 {
			keep = append(keep, sp)
		}
	}
	return keep
}

func meanPow(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s / float64(max(len(x), 1))
}

func scale(x []float64, g float64) {
	for i := range x {
		x[i] *= g
	}
}

// fade ramps the first and last n samples of x in and out.
func fade(x []float64, n int) {
	n = min(n, len(x)/2)
	for i := range n {
		g := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(n))
		x[i] *= g
		x[len(x)-1-i] *= g
	}
}
