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
)

// floorPauses marks the sub-blocks that lie on the recording's own floor:
// their level averaged over floorAvg sub-blocks within nearFloorDB of the
// floorPct percentile of the levels within floorSpan, and no vowel in
// that window (minVowel voiced sub-blocks in a row: a periodic machine
// reads as voiced now and then, a vowel for its whole length). A recording whose pauses
// are digital silence has its floor far under the absolute gate, and
// nothing over the gate is marked.
func (r *Result) floorPauses() []bool {
	ns := r.feats.len()
	out := make([]bool, ns)
	if ns == 0 {
		return out
	}
	lv := make([]float64, ns)
	pw := make([]float64, ns+1) // prefix sums of power
	vc := make([]int, ns+1)     // prefix counts of sub-blocks in vowels
	run := 0                    // voiced sub-blocks in a row up to j
	for j := range ns {
		f := r.feat(j)
		lv[j] = float64(f.band)
		pw[j+1] = pw[j] + math.Pow(10, lv[j]/10)
		vc[j+1] = vc[j]
		if run = run + 1; f.voicing <= voicedAt {
			run = 0
		}
		if run == minVowel {
			vc[j+1] += minVowel
		} else if run > minVowel {
			vc[j+1]++
		}
	}
	// The floor every floorStep sub-blocks, held between.
	floors := make([]float64, (ns+floorStep-1)/floorStep)
	tmp := make([]float64, 0, 2*floorSpan+floorStep)
	for i := range floors {
		c := i*floorStep + floorStep/2
		tmp = append(tmp[:0], lv[max(0, c-floorSpan):min(ns, c+floorSpan)]...)
		floors[i] = quickselect.Nth(tmp, int(floorPct*float64(len(tmp)-1)))
	}
	const h = floorAvg / 2
	for j := range ns {
		fl := floors[j/floorStep]
		lo, hi := max(0, j-h), min(ns, j+h+1)
		if vc[hi]-vc[lo] > 0 {
			continue
		}
		if toDB((pw[hi]-pw[lo])/float64(hi-lo)) < fl+nearFloorDB {
			out[j] = true
		}
	}
	return out
}
