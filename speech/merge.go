package speech

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// Track is the transcript of one track of a multitrack production and the
// speaker it belongs to.
type Track struct {
	Speaker    string
	Transcript *Transcript
}

// Merge combines the transcripts of the tracks of a multitrack production
// into one: every word is marked with its track's speaker and the words
// of all tracks are sorted by start time (ties keep track order). The
// language and recognizer are the first track's; the duration is the
// longest. Nil transcripts are skipped.
func Merge(tracks ...Track) *Transcript {
	out := &Transcript{}
	for _, tr := range tracks {
		t := tr.Transcript
		if t == nil {
			continue
		}
		if out.Recognizer == "" {
			out.Language, out.Recognizer, out.Model = t.Language, t.Recognizer, t.Model
		}
		out.Duration = max(out.Duration, t.Duration)
		for _, w := range t.Words {
			w.Speaker = tr.Speaker
			out.Words = append(out.Words, w)
		}
	}
	slices.SortStableFunc(out.Words, func(a, b Word) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// normWord lowers a word and drops everything but letters and digits
// (apostrophes inside words are kept: "don't").
func normWord(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			b.WriteRune(r)
		}
	}
	return strings.Trim(b.String(), "'")
}

// NormalizeWords splits text into words for scoring: lower case, without
// punctuation.
func NormalizeWords(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		if w := normWord(f); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// WordErrorRate is the word error rate of a hypothesis against a
// reference text: (substitutions + deletions + insertions) / reference
// words, after NormalizeWords. It also returns the edit count and the
// reference length. An empty reference gives a rate of 0 for an empty
// hypothesis and 1 otherwise.
func WordErrorRate(reference, hypothesis string) (rate float64, edits, words int) {
	ref, hyp := NormalizeWords(reference), NormalizeWords(hypothesis)
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	edits = prev[len(hyp)]
	if len(ref) == 0 {
		if edits > 0 {
			return 1, edits, 0
		}
		return 0, 0, 0
	}
	return float64(edits) / float64(len(ref)), edits, len(ref)
}
