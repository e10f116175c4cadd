package speech

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Cue is one subtitle: the words shown together, from Start to End.
type Cue struct {
	Start, End time.Duration
	// Words are the cue's words, in order; their times drive the word
	// highlighting of burned-in subtitles.
	Words []Word
	// Lines are the cue's text broken into lines.
	Lines []string
	// Speaker is the speaker of every word of the cue (cues break where
	// the speaker changes), empty for single-track audio.
	Speaker string
}

// Text returns the cue's lines joined by a space.
func (c Cue) Text() string { return strings.Join(c.Lines, " ") }

// CueOptions shape subtitle cues. Zero fields take the defaults.
type CueOptions struct {
	// MaxLineChars is the longest line in characters (default 42, the
	// common broadcast limit).
	MaxLineChars int
	// MaxLines is the number of lines of a cue (default 2).
	MaxLines int
	// MaxDuration is the longest a cue stays (default 7 s).
	MaxDuration time.Duration
	// MaxGap is the pause between two words that starts a new cue
	// (default 1 s): a subtitle does not hang over a silence.
	MaxGap time.Duration
	// MinDuration is the shortest a cue is shown (default 0.7 s): a
	// shorter cue is extended, never past the start of the next one.
	MinDuration time.Duration
}

// Defaults of CueOptions.
const (
	DefaultMaxLineChars = 42
	DefaultMaxLines     = 2
	DefaultMaxDuration  = 7 * time.Second
	DefaultMaxGap       = time.Second
	DefaultMinDuration  = 700 * time.Millisecond
)

func (o CueOptions) withDefaults() CueOptions {
	if o.MaxLineChars <= 0 {
		o.MaxLineChars = DefaultMaxLineChars
	}
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMaxLines
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.MaxGap <= 0 {
		o.MaxGap = DefaultMaxGap
	}
	if o.MinDuration <= 0 {
		o.MinDuration = DefaultMinDuration
	}
	return o
}

// Cues groups words into subtitle cues. A cue starts at its first word
// and ends at its last (extended to MinDuration when that does not reach
// the next cue); a new cue begins at a pause of MaxGap or more, at a new
// speaker, when the text would not fit in MaxLines lines of MaxLineChars,
// when the cue would last longer than MaxDuration, and after a sentence
// end once the cue holds at least half a line. Words with empty text are
// skipped.
func Cues(words []Word, opts CueOptions) []Cue {
	o := opts.withDefaults()
	var cues []Cue
	var cur []Word
	flush := func() {
		if len(cur) == 0 {
			return
		}
		cues = append(cues, Cue{
			Start:   cur[0].Start,
			End:     cur[len(cur)-1].End,
			Words:   cur,
			Lines:   breakLines(cur, o.MaxLineChars, o.MaxLines),
			Speaker: cur[0].Speaker,
		})
		cur = nil
	}
	for _, w := range words {
		if w.Text == "" {
			continue
		}
		if n := len(cur); n > 0 {
			prev := cur[n-1]
			text := joinWords(cur)
			switch {
			case w.Speaker != prev.Speaker,
				w.Start-prev.End >= o.MaxGap,
				w.End-cur[0].Start > o.MaxDuration,
				!fits(append(cur[:n:n], w), o.MaxLineChars, o.MaxLines),
				sentenceEnd(prev.Text) && utf8.RuneCountInString(text) >= o.MaxLineChars/2:
				flush()
			}
		}
		cur = append(cur, w)
	}
	flush()
	for i := range cues {
		c := &cues[i]
		if c.End < c.Start {
			c.End = c.Start
		}
		if c.End-c.Start < o.MinDuration {
			end := c.Start + o.MinDuration
			if i+1 < len(cues) {
				end = min(end, cues[i+1].Start)
			}
			c.End = max(c.End, end)
		}
	}
	return cues
}

func sentenceEnd(s string) bool {
	s = strings.TrimRight(s, `"')]»”’`)
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "…")
}

// fits reports whether the words fill at most maxLines lines of maxChars
// when filled greedily. A single word longer than a line fits alone.
func fits(ws []Word, maxChars, maxLines int) bool {
	return len(greedyLines(ws, maxChars)) <= maxLines
}

func greedyLines(ws []Word, maxChars int) [][]Word {
	var lines [][]Word
	var cur []Word
	n := 0
	for _, w := range ws {
		l := utf8.RuneCountInString(w.Text)
		if len(cur) > 0 && n+1+l > maxChars {
			lines = append(lines, cur)
			cur, n = nil, 0
		}
		if len(cur) > 0 {
			n++
		}
		cur = append(cur, w)
		n += l
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// breakLines lays out a cue's words: one line when it fits, two balanced
// lines (the break that makes the longer line shortest) when two lines
// are allowed, greedy lines otherwise.
func breakLines(ws []Word, maxChars, maxLines int) []string {
	text := joinWords(ws)
	if utf8.RuneCountInString(text) <= maxChars || len(ws) < 2 {
		return []string{text}
	}
	if maxLines == 2 {
		best, bestLen := -1, 0
		for i := 1; i < len(ws); i++ {
			a := utf8.RuneCountInString(joinWords(ws[:i]))
			b := utf8.RuneCountInString(joinWords(ws[i:]))
			if a > maxChars || b > maxChars {
				continue
			}
			if l := max(a, b); best < 0 || l < bestLen {
				best, bestLen = i, l
			}
		}
		if best > 0 {
			return []string{joinWords(ws[:best]), joinWords(ws[best:])}
		}
	}
	var out []string
	for _, l := range greedyLines(ws, maxChars) {
		out = append(out, joinWords(l))
	}
	return out
}

// Paragraph is a run of words of one speaker without a long pause: the
// unit of transcripts and of the segments of speech data.
type Paragraph struct {
	Start, End time.Duration
	Speaker    string
	Words      []Word
}

// Text returns the paragraph's words joined by spaces.
func (p Paragraph) Text() string { return joinWords(p.Words) }

// DefaultParagraphGap is the pause that starts a new paragraph.
const DefaultParagraphGap = 2 * time.Second

// maxParagraphWords bounds a paragraph of a speaker who never pauses: past
// it, the next sentence end (or the word after twice as many) breaks.
const maxParagraphWords = 120

// Paragraphs groups words into paragraphs, breaking where the speaker
// changes, at pauses of gap or more (DefaultParagraphGap when gap <= 0)
// and after a sentence end once a paragraph is long.
func Paragraphs(words []Word, gap time.Duration) []Paragraph {
	if gap <= 0 {
		gap = DefaultParagraphGap
	}
	var out []Paragraph
	var cur []Word
	flush := func() {
		if len(cur) > 0 {
			out = append(out, Paragraph{Start: cur[0].Start, End: cur[len(cur)-1].End, Speaker: cur[0].Speaker, Words: cur})
			cur = nil
		}
	}
	for _, w := range words {
		if w.Text == "" {
			continue
		}
		if n := len(cur); n > 0 {
			prev := cur[n-1]
			if w.Speaker != prev.Speaker || w.Start-prev.End >= gap ||
				(n >= maxParagraphWords && sentenceEnd(prev.Text)) || n >= 2*maxParagraphWords {
				flush()
			}
		}
		cur = append(cur, w)
	}
	flush()
	return out
}
