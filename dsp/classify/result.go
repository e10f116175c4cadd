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

// Result is what an Analyzer found in a recording.
type Result struct {
	// SampleRate and Frames describe the analysed stream.
	SampleRate int
	Frames     int64
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

	feats    []feature
	floorSub []float32 // noise floor per sub-block, dB
	subStart func(int) int64
}

// SubBlockStart returns the first frame of sub-block j (j may be
// len(Activity), giving Frames' upper bound for the last sub-block).
func (r *Result) SubBlockStart(j int) int64 {
	return min(r.subStart(j), r.Frames)
}

// BlockStart returns the first frame of block i.
func (r *Result) BlockStart(i int) int64 {
	return min(int64(i)*int64(r.BlockLen), r.Frames)
}

func newResult(sampleRate int, frames int64, blockLen int, mode Mode, feats []feature, subStart func(int) int64) *Result {
	r := &Result{SampleRate: sampleRate, Frames: frames, BlockLen: blockLen, Mode: mode, feats: feats, subStart: subStart}
	nb := int(frames / int64(blockLen))
	if rem := frames - int64(nb)*int64(blockLen); rem > 0 && rem >= int64(blockLen/4) {
		nb++
	}
	r.activity(nb)
	r.classify(nb)
	return r
}

// blockOf returns the block of sub-block j.
func blockOf(j int) int { return j / SubBlocks }

// activity computes the noise floor and the sub-block and block activity.
func (r *Result) activity(nb int) {
	ns := len(r.feats)
	nbAll := (ns + SubBlocks - 1) / SubBlocks
	blockDB := make([]float64, nbAll)
	for b := range blockDB {
		var s float64
		lo, hi := b*SubBlocks, min(ns, (b+1)*SubBlocks)
		for _, f := range r.feats[lo:hi] {
			s += math.Pow(10, float64(f.band)/10)
		}
		blockDB[b] = toDB(s / float64(hi-lo))
	}
	floor := noiseFloor(blockDB, r.background(nbAll))
	r.floorSub = make([]float32, ns)
	for j := range r.floorSub {
		// Interpolate between block centres.
		pos := (float64(j)+0.5)/SubBlocks - 0.5
		b := int(math.Floor(pos))
		fr := pos - float64(b)
		lo, hi := floor[max(0, min(b, nbAll-1))], floor[max(0, min(b+1, nbAll-1))]
		r.floorSub[j] = float32(lo + fr*(hi-lo))
	}
	change := r.changing(nbAll)

	act := make([]bool, ns)
	on := false
	for j, f := range r.feats {
		c := float64(f.band) - float64(r.floorSub[j])
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

	// Block activity: a block with 30 ms of activity is active; gaps up
	// to 300 ms inside a phrase are closed, and isolated blocks dropped.
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

// background marks the blocks that may be background: most of their
// sub-blocks have a flat spectrum (flatness over 0.2) and little
// periodicity (voicing under 0.4), the level is steady (within 5 dB, no
// spectral jump over 8 dB), and at least three such blocks follow each
// other. Speech, tonal music, hum and drum hits fail the test; room tone,
// hiss, fans and digital silence pass.
func (r *Result) background(nb int) []bool {
	out := make([]bool, nb)
	for b := range out {
		lo, e := b*SubBlocks, min(len(r.feats), (b+1)*SubBlocks)
		n := 0
		minB, maxB, maxF := math.Inf(1), math.Inf(-1), 0.0
		for _, f := range r.feats[lo:e] {
			if f.flat > 0.2 && f.voicing < 0.4 {
				n++
			}
			minB, maxB = min(minB, float64(f.band)), max(maxB, float64(f.band))
			maxF = max(maxF, float64(f.flux))
		}
		out[b] = 2*n > e-lo && maxB-minB < 5 && maxF < 8
	}
	dropShort(out, 3)
	return out
}

// changing marks blocks around which the spectrum changes (note onsets,
// phoneme transitions): the 80th percentile of the flux in a block, at its
// highest within +-0.5 s, above 4 dB. It keeps a steady hum, which is
// tonal too, from counting as a tonal foreground.
func (r *Result) changing(nb int) []bool {
	hi := make([]float64, nb)
	var tmp [SubBlocks]float64
	for b := range hi {
		lo, e := b*SubBlocks, min(len(r.feats), (b+1)*SubBlocks)
		n := 0
		for _, f := range r.feats[lo:e] {
			tmp[n] = float64(f.flux)
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

// Segment is a stretch of speech or music.
type Segment struct {
	Label      Label
	Start, End int64 // frames, [Start, End)
}
