package classify

import (
	"math"

	"github.com/audiopost/audiopost/internal/quickselect"
)

// Pauses on a recording's own floor. Voice activity measures sound
// against a floor found in stretches that sound like background (flat or
// steady), and a real steady noise under the whole file (a machine, a
// crowd, a room whose tone is periodic) may give it none: then every
// pause is sound, and the silence cutter found no pause to shorten once
// the noise rose over the absolute gate (issue 30: at 40 dB under the
// speech a pause of 2.4 s stayed whole). The silence cutter therefore
// also takes as pause what sits near the quietest levels the recording
// itself shows around it and carries no voice, whatever its spectrum.
//
// A fluctuating noise (wind, applause, traffic, birds) has no such floor:
// its 100 ms levels spread over 5 to 10 dB, so its pauses sit as often
// 10 dB over their quietest twentieth as near it, and at 30-40 dB under
// the speech the tuning half's fluctuating noises left 2.0-3.2 s pauses
// whole. What they keep is their distance from the voice: a pause is
// also what lies pauseUnderDB under the speech's loud level around it,
// with no vowel of the voice in it (a voiced run within vowelUnderDB of
// that loud level: a bus's or a bird's periodicity, far under the voice,
// is no vowel).

const (
	// nearFloorDB: a pause's level, averaged over floorAvg sub-blocks,
	// lies within this of the floor. Steady real noise fluctuates: its
	// 10 ms levels spread over about 10 dB, their 100 ms mean about 3 dB
	// over their 5th percentile; speech 30 dB over the noise reaches this
	// close to the floor only in its silences.
	nearFloorDB = 6.0
	// floorPct is the percentile of the sub-block levels taken for the
	// floor: the quietest twentieth, which pauses fill in any recording
	// that has them.
	floorPct = 0.05
	// floorAvg is the window, in sub-blocks, of the level average and the
	// voicing count: 110 ms, shorter than a syllable's vowel and
	// consonants together.
	floorAvg = 11
	// floorSpan is the half width, in sub-blocks, of the window the floor
	// is taken over (10 s), and floorStep how often it is taken.
	floorSpan = 1000
	floorStep = 100
	// loudPct is the percentile of the sub-block levels within floorSpan
	// taken for the speech's loud level.
	loudPct = 0.95
	// pauseUnderDB: a pause's level, averaged over floorAvg sub-blocks,
	// lies this far under the loud level or more. Speech has 110 ms this
	// quiet only in closures and its silences, and a cut keeps half of
	// KeepPause next to the words besides; a noise 30 dB under the voice
	// rises this close only in its loudest bursts.
	pauseUnderDB = 20.0
	// vowelUnderDB: the voiced sub-blocks of a vowel lie within this of
	// the loud level.
	vowelUnderDB = 25.0
)

// floorPauses marks the sub-blocks that lie on the recording's own floor
// or far under its voice: their level averaged over floorAvg sub-blocks
// within nearFloorDB of the floorPct percentile of the levels within
// floorSpan or pauseUnderDB under their loudPct percentile, and no vowel
// in that window (minVowel voiced sub-blocks in a row within vowelUnderDB
// of the loud level: a periodic machine reads as voiced now and then, a
// vowel for its whole length).
func (r *Result) floorPauses() []bool {
	ns := r.feats.len()
	out := make([]bool, ns)
	if ns == 0 {
		return out
	}
	lv := make([]float64, ns)
	pw := make([]float64, ns+1) // prefix sums of power
	for j := range ns {
		lv[j] = float64(r.feat(j).band)
		pw[j+1] = pw[j] + math.Pow(10, lv[j]/10)
	}
	// The floor and the loud level every floorStep sub-blocks, held between.
	floors := make([]float64, (ns+floorStep-1)/floorStep)
	louds := make([]float64, len(floors))
	tmp := make([]float64, 0, 2*floorSpan+floorStep)
	for i := range floors {
		c := i*floorStep + floorStep/2
		tmp = append(tmp[:0], lv[max(0, c-floorSpan):min(ns, c+floorSpan)]...)
		floors[i] = quickselect.Nth(tmp, int(floorPct*float64(len(tmp)-1)))
		louds[i] = quickselect.Nth(tmp, int(loudPct*float64(len(tmp)-1)))
	}
	vc := make([]int, ns+1) // prefix counts of sub-blocks in vowels
	run := 0                // voiced sub-blocks in a row up to j
	for j := range ns {
		f := r.feat(j)
		vc[j+1] = vc[j]
		if run = run + 1; f.voicing <= voicedAt || lv[j] < louds[j/floorStep]-vowelUnderDB {
			run = 0
		}
		if run == minVowel {
			vc[j+1] += minVowel
		} else if run > minVowel {
			vc[j+1]++
		}
	}
	const h = floorAvg / 2
	for j := range ns {
		fl := max(floors[j/floorStep]+nearFloorDB, louds[j/floorStep]-pauseUnderDB)
		lo, hi := max(0, j-h), min(ns, j+h+1)
		if vc[hi]-vc[lo] > 0 {
			continue
		}
		if toDB((pw[hi]-pw[lo])/float64(hi-lo)) < fl {
			out[j] = true
		}
	}
	return out
}
