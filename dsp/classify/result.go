package classify

import (
	"math"
	"slices"
	"strconv"
)

// Label is what a block holds.
type Label uint8

const (
	// Silence is a block without foreground: digital silence, room tone,
	// background noise, a pause.
	Silence Label = iota
	// Speech is a block of voice.
	Speech
	// Music is a block of music.
	Music
)

// String returns the label's name as the API writes it.
func (l Label) String() string {
	switch l {
	case Silence:
		return "silence"
	case Speech:
		return "speech"
	case Music:
		return "music"
	}
	return "Label(" + strconv.Itoa(int(l)) + ")"
}

// Result is what an Classifier found in a recording.
type Result struct {
	// SampleRate is that of the analysed stream.
	SampleRate int
	// Frames is the length of the analysed stream.
	Frames int64
	// BlockLen is the length of a block in frames (BlockLen(SampleRate)).
	BlockLen int
	// Mode is the classifier setting the result was made with.
	Mode Mode

	// Labels has one label per block: every complete block, and a
	// trailing partial block if it is at least a quarter block long (the
	// rule of the dsp analysis, so the two grids have the same length).
	Labels []Label
	// Voiced is true for every block with foreground activity, speech or
	// music: Labels[i] != Silence. The leveler, the denoiser and the
	// dialog loudness take it as their voice activity; combined with
	// Labels it gives speech-only activity.
	Voiced []bool
	// NoiseFloor is the background level per block, dBFS in the speech
	// band (150 Hz to 4 kHz).
	NoiseFloor []float64
	// Activity has one value per sub-block (SubBlocks per block, every
	// sub-block with at least one frame): foreground activity at 10 ms
	// resolution, with little hangover, for cuts that must not clip a
	// word. SubBlockStart maps an index to frames.
	Activity []bool
	// Segments are the speech and music segments, in order, covering the
	// recording from frame 0 to Frames without gaps (a pause belongs to
	// the segment around it). See MergeSegments for the API's view.
	Segments []Segment

	feats *featStore
	// wordsKept is words() as it was when DropFeatures released the
	// features it reads.
	wordsKept []bool
	bflux     []float32 // spectral change per block, dB
	floor     []float64 // noise floor per block (every sub-block's block), dB
}

// DropFeatures releases the 10 ms features and noise floors that only
// filler and cough detection read (about 5.3 MB per hour of audio): a
// pipeline that will not cut calls it after the analysis, so that long
// productions stay small. Cuts afterwards finds no fillers or coughs;
// everything else is kept (the silence cutter's view of where words are
// takes one byte per 10 ms, as Activity does).
func (r *Result) DropFeatures() {
	if r.feats != nil {
		r.wordsKept = r.words()
	}
	r.feats, r.floor = nil, nil
}

// SubBlockStart returns the first frame of sub-block j (j may be
// len(Activity), giving Frames' upper bound for the last sub-block).
func (r *Result) SubBlockStart(j int) int64 {
	return min(subStart(r.BlockLen, j), r.Frames)
}

// BlockStart returns the first frame of block i.
func (r *Result) BlockStart(i int) int64 {
	return min(int64(i)*int64(r.BlockLen), r.Frames)
}

// feat returns the features of sub-block j.
func (r *Result) feat(j int) feature { return r.feats.at(j).unpack() }

func newResult(sampleRate int, frames int64, blockLen int, mode Mode, feats *featStore, bflux []float32) *Result {
	r := &Result{SampleRate: sampleRate, Frames: frames, BlockLen: blockLen, Mode: mode, feats: feats, bflux: bflux}
	nb := int(frames / int64(blockLen))
	if rem := frames - int64(nb)*int64(blockLen); rem > 0 && rem >= int64(blockLen/4) {
		nb++
	}
	r.activity(nb)
	r.classify(nb)
	return r
}

// floorAt returns the noise floor at sub-block j, dB: interpolated
// between block centres. Computed where it is read rather than stored,
// which would take 4 bytes per 10 ms (4.3 MB for three hours).
func (r *Result) floorAt(j int) float32 {
	nbAll := len(r.floor)
	pos := (float64(j)+0.5)/SubBlocks - 0.5
	b := int(math.Floor(pos))
	fr := pos - float64(b)
	lo, hi := r.floor[max(0, min(b, nbAll-1))], r.floor[max(0, min(b+1, nbAll-1))]
	return float32(lo + fr*(hi-lo))
}

// blockOf returns the block of sub-block j.
func blockOf(j int) int { return j / SubBlocks }

// activity computes the noise floor and the sub-block and block activity.
func (r *Result) activity(nb int) {
	ns := r.feats.len()
	nbAll := (ns + SubBlocks - 1) / SubBlocks
	blockDB := make([]float64, nbAll)
	for b := range blockDB {
		var s float64
		lo, hi := b*SubBlocks, min(ns, (b+1)*SubBlocks)
		for j := lo; j < hi; j++ {
			s += math.Pow(10, float64(r.feat(j).band)/10)
		}
		blockDB[b] = toDB(s / float64(hi-lo))
	}
	floor := noiseFloor(blockDB, r.background(nbAll, blockDB))
	r.floor = floor
	change := r.changing(nbAll)

	act := make([]bool, ns)
	on := false
	for j := range r.feats.len() {
		f := r.feat(j)
		c := float64(f.band) - float64(r.floorAt(j))
		tonal := f.flat < 0.12 && change[blockOf(j)]
		switch {
		case float64(f.band) < absoluteGate:
			on = false
		case c > activeDB || (tonal && c > tonalDB):
			on = true
		case on && c > holdDB:
		default:
			on = false
		}
		act[j] = on
	}
	// Sub-block activity: close gaps up to 80 ms (stops inside words),
	// drop blips shorter than 30 ms, and hang over 20 ms each side.
	fillGaps(act, 8)
	dropShort(act, 3)
	dilate(act, 2)
	r.Activity = act

	// Block activity: a block with 30 ms of activity is active, and gaps
	// of up to three blocks inside a phrase are closed (a pause shorter
	// than about 0.3-0.5 s keeps a phrase voiced).
	v := make([]bool, nb)
	for b := range v {
		n := 0
		for j := b * SubBlocks; j < min(ns, (b+1)*SubBlocks); j++ {
			if act[j] {
				n++
			}
		}
		v[b] = n >= 3
	}
	fillGaps(v, 3)
	r.Voiced = v
	r.NoiseFloor = slices.Clone(floor[:nb])
}

// bgFlat is the spectral flatness above which a sub-block sounds like
// noise: pink noise lies around 0.65, white near 0.9, speech and tonal
// music under 0.1, and tonal music over weaker noise around 0.2.
const bgFlat = 0.3

// background marks the blocks that may be background: runs of at least
// three (300 ms) that sound like noise (most sub-blocks with a flat
// spectrum, over bgFlat, and little periodicity, under 0.4) and hold
// their level (within 4 dB, no spectral jump over 6 dB), and steady runs
// of any spectrum (see steadyRuns). Speech, music and drum hits fail
// both tests; room tone, hiss, hum and digital silence pass.
func (r *Result) background(nb int, blockDB []float64) []bool {
	out := make([]bool, nb)
	for b := range out {
		lo, e := b*SubBlocks, min(r.feats.len(), (b+1)*SubBlocks)
		n := 0
		minB, maxB, maxF := math.Inf(1), math.Inf(-1), 0.0
		for j := lo; j < e; j++ {
			f := r.feat(j)
			if f.flat > bgFlat && f.voicing < 0.4 {
				n++
			}
			minB, maxB = min(minB, float64(f.band)), max(maxB, float64(f.band))
			maxF = max(maxF, float64(f.flux))
		}
		out[b] = 2*n > e-lo && maxB-minB < 4 && maxF < 6
	}
	dropShort(out, 3)
	for b, s := range steadyRuns(blockDB, r.bflux) {
		out[b] = out[b] || s
	}
	return out
}

// steadyRuns marks runs of at least steadyRun blocks whose level (the
// mean power of the block) stays within 1 dB and whose spectrum does not
// change by more than 2 dB in any band from one block to the next: hum,
// a test tone, a fan. Block means, because a 40 ms window sees the
// harmonics of mains hum beat against each other from one 10 ms
// sub-block to the next; the spectrum, because a held chord can keep its
// level while its notes move.
func steadyRuns(blockDB []float64, bflux []float32) []bool {
	out := make([]bool, len(blockDB))
	for i := 0; i+steadyRun <= len(blockDB); i++ {
		mn, mx := math.Inf(1), math.Inf(-1)
		ok := true
		for k, v := range blockDB[i : i+steadyRun] {
			mn, mx = min(mn, v), max(mx, v)
			if k > 0 && bflux[i+k] > 2 {
				ok = false
			}
		}
		if ok && mx-mn < 1 {
			for k := i; k < i+steadyRun; k++ {
				out[k] = true
			}
		}
	}
	return out
}

const steadyRun = 5

// changing marks blocks around which the spectrum changes (note onsets,
// phoneme transitions): the 80th percentile of the flux in a block, at its
// highest within +-0.5 s, above 4 dB. It keeps a steady hum, which is
// tonal too, from counting as a tonal foreground.
func (r *Result) changing(nb int) []bool {
	hi := make([]float64, nb)
	var tmp [SubBlocks]float64
	for b := range hi {
		lo, e := b*SubBlocks, min(r.feats.len(), (b+1)*SubBlocks)
		n := 0
		for j := lo; j < e; j++ {
			tmp[n] = float64(r.feat(j).flux)
			n++
		}
		s := tmp[:n]
		slices.Sort(s)
		hi[b] = s[int(0.8*float64(n-1))]
	}
	for i := range hi {
		hi[i] = -hi[i]
	}
	mx := slidingMin(hi, 5)
	out := make([]bool, nb)
	for i := range out {
		out[i] = -mx[i] > 4
	}
	return out
}

// Segment is a stretch of speech or music, frames [Start, End).
type Segment struct {
	Label      Label // Speech or Music
	Start, End int64 // frames, End exclusive
}

// Seconds returns the segment's start and end in seconds.
func (s Segment) Seconds(sampleRate int) (start, end float64) {
	return float64(s.Start) / float64(sampleRate), float64(s.End) / float64(sampleRate)
}

// MergeSegments returns segs with every segment shorter than minLen
// frames absorbed by its neighbours, shortest first: a short segment
// between two of the same label joins them, otherwise it goes to its
// longer neighbour. What remains alternates speech and music, each at
// least minLen long (unless the whole recording is shorter). segs is not
// changed. The API's music_speech statistics list segments longer than
// 20 s: merge with 20 s first, so that a 5 s jingle inside a long speech
// does not split it into two listed halves around a gap.
func MergeSegments(segs []Segment, minLen int64) []Segment {
	out := slices.Clone(segs)
	out = joinSame(out)
	for len(out) > 1 {
		k := -1
		for i, s := range out {
			if s.End-s.Start < minLen && (k < 0 || s.End-s.Start < out[k].End-out[k].Start) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		// Relabel the short segment as its longer neighbour.
		switch {
		case k == 0:
			out[k].Label = out[1].Label
		case k == len(out)-1:
			out[k].Label = out[k-1].Label
		case out[k-1].End-out[k-1].Start >= out[k+1].End-out[k+1].Start:
			out[k].Label = out[k-1].Label
		default:
			out[k].Label = out[k+1].Label
		}
		out = joinSame(out)
	}
	return out
}

// joinSame merges neighbouring segments of the same label.
func joinSame(segs []Segment) []Segment {
	out := segs[:0]
	for _, s := range segs {
		if n := len(out); n > 0 && out[n-1].Label == s.Label {
			out[n-1].End = s.End
			continue
		}
		out = append(out, s)
	}
	return out
}
