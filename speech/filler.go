package speech

import (
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/audiopost/audiopost/dsp/classify"
)

// fillers are the filled pauses the filler cutter removes, after
// normalisation (lower case, punctuation dropped, repeated letters
// collapsed: "Ummm," is "um", "hmm" is "hm", "mm" is "m").
var fillers = map[string]bool{"um": true, "uh": true, "uhm": true, "er": true, "erm": true, "hm": true, "m": true}

// IsFiller reports whether a recognised word is a filled pause: um, uh,
// er, erm, hmm and their spellings (umm, uhh, uhm, hm, mm, "Um,").
func IsFiller(word string) bool {
	var b strings.Builder
	var last rune
	for _, r := range strings.ToLower(word) {
		if !unicode.IsLetter(r) {
			continue
		}
		if r != last {
			b.WriteRune(r)
		}
		last = r
	}
	return fillers[b.String()]
}

// FillerOptions tune FillerCuts.
type FillerOptions struct {
	// MinConfidence skips fillers recognised with a lower confidence
	// (words without a confidence are always taken). 0 takes every one.
	MinConfidence float64
	// Pad widens each cut by this much on both sides, never into the
	// neighbouring words: recognizers place word edges to about 10 ms.
	Pad time.Duration
}

// FillerCuts returns the filler words among words as a cut list for the
// filler cutter: ranges of frames [start, end) at sampleRate with reason
// classify.CutFiller, sorted, touching or overlapping ranges merged.
// Words must be sorted by start, as recognizers return them.
func FillerCuts(words []Word, sampleRate int, opts FillerOptions) classify.Cuts {
	frame := func(d time.Duration) int64 {
		return int64(math.Round(d.Seconds() * float64(sampleRate)))
	}
	var cuts []classify.Cut
	for i, w := range words {
		if !IsFiller(w.Text) || (w.Confidence >= 0 && w.Confidence < opts.MinConfidence) {
			continue
		}
		start, end := w.Start-opts.Pad, w.End+opts.Pad
		if i > 0 && !IsFiller(words[i-1].Text) {
			start = max(start, min(w.Start, words[i-1].End))
		}
		if i+1 < len(words) && !IsFiller(words[i+1].Text) {
			end = min(end, max(w.End, words[i+1].Start))
		}
		cuts = append(cuts, classify.Cut{Start: frame(max(start, 0)), End: frame(end), Reason: classify.CutFiller})
	}
	return classify.Normalize(cuts, 1)
}

// ApplyCuts returns the transcript as it is after the cuts were rendered
// (classify.Cutter): words whose middle lies in a cut are dropped (the
// fillers, and words in cut music or trimmed ends), the others move with
// classify.TimeMap to their place in the output, and the duration
// shrinks by what the cuts remove. Recognise the input once, use
// FillerCuts for the filler cutter, and ApplyCuts for the subtitles,
// transcripts and burn-in of the cut output. cuts must be a valid list
// at sampleRate. t is not changed.
func ApplyCuts(t *Transcript, cuts classify.Cuts, sampleRate int) (*Transcript, error) {
	m, err := classify.NewTimeMap(cuts, sampleRate)
	if err != nil {
		return nil, err
	}
	fs := float64(sampleRate)
	frame := func(d time.Duration) int64 { return int64(math.Round(d.Seconds() * fs)) }
	back := func(f int64) time.Duration { return time.Duration(math.Round(float64(f) / fs * float64(time.Second))) }
	inCut := func(f int64) bool {
		for _, c := range cuts {
			if f >= c.Start && f < c.End {
				return true
			}
			if c.Start > f {
				break
			}
		}
		return false
	}
	out := *t
	out.Words = nil
	for _, w := range t.Words {
		if inCut(frame((w.Start + w.End) / 2)) {
			continue
		}
		w.Start, w.End = back(m.Frame(frame(w.Start))), back(m.Frame(frame(w.End)))
		out.Words = append(out.Words, w)
	}
	total := frame(t.Duration)
	out.Duration = back(total - cuts.Clip(total).Removed())
	return &out, nil
}
