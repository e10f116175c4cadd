package classify

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/audiopost/audiopost/audio"
)

// Reason says why a range is cut. Reasons are flags: when two cuts merge
// (a filler inside a long pause, a cough next to one) the merged cut keeps
// both, so the exported list still tells an editor what was removed.
type Reason uint8

const (
	// CutSilence shortens a pause longer than the natural length.
	CutSilence Reason = 1 << iota
	// CutFiller removes a filled pause: um, uh, er.
	CutFiller
	// CutCough removes a cough, a sneeze or a similar noise burst.
	CutCough
	// CutMusic removes a stretch of music.
	CutMusic
	// CutTrim removes the start or the end (the API's cut_start, cut_end).
	CutTrim
)

var reasonNames = []string{"silence", "filler", "cough", "music", "trim"}

// String returns the reason's name, several joined by "+" ("silence+filler").
func (r Reason) String() string {
	if r == 0 {
		return "none"
	}
	var parts []string
	for i, n := range reasonNames {
		if r&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := r &^ (1<<len(reasonNames) - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint8(rest)))
	}
	return strings.Join(parts, "+")
}

// ParseReason reads a reason as String writes it.
func ParseReason(s string) (Reason, error) {
	var r Reason
	for _, p := range strings.Split(s, "+") {
		i := slices.Index(reasonNames, p)
		if i < 0 {
			return 0, fmt.Errorf("classify: unknown cut reason %q", p)
		}
		r |= 1 << i
	}
	return r, nil
}

// Cut is a range of input frames [Start, End) to remove.
type Cut struct {
	Start, End int64  // input frames, End exclusive
	Reason     Reason // why; several when cuts merged
}

// Len returns the number of frames the cut removes.
func (c Cut) Len() int64 { return c.End - c.Start }

// Cuts is a cut list: sorted by Start, every cut non-empty, no two
// overlapping. Normalize makes one from any set of ranges; the Cutter,
// the time map and the exporters all take a list in this form, so the
// audio, the moved markers and the exported list agree to the frame.
type Cuts []Cut

// ErrInvalidCuts means a cut list is not sorted, has empty or negative
// ranges, or overlaps.
var ErrInvalidCuts = errors.New("classify: invalid cut list")

// Validate reports whether c is a proper cut list.
func (c Cuts) Validate() error {
	for i, x := range c {
		if x.Start < 0 || x.End <= x.Start {
			return fmt.Errorf("%w: cut %d is [%d, %d)", ErrInvalidCuts, i, x.Start, x.End)
		}
		if i > 0 && x.Start < c[i-1].End {
			return fmt.Errorf("%w: cut %d [%d, %d) overlaps or precedes cut %d [%d, %d)", ErrInvalidCuts, i, x.Start, x.End, i-1, c[i-1].Start, c[i-1].End)
		}
	}
	return nil
}

// Normalize returns the ranges of cuts as a proper cut list: sorted, empty
// ranges dropped, ranges that overlap or lie less than minGap frames apart
// merged into one (the gap goes with them: a sliver of audio between two
// cuts would only be two clicks), their reasons combined. cuts is not
// changed.
func Normalize(cuts []Cut, minGap int64) Cuts {
	s := make(Cuts, 0, len(cuts))
	for _, c := range cuts {
		c.Start = max(c.Start, 0)
		if c.End > c.Start {
			s = append(s, c)
		}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	out := s[:0]
	for _, c := range s {
		if n := len(out); n > 0 && c.Start-out[n-1].End < minGap {
			out[n-1].End = max(out[n-1].End, c.End)
			out[n-1].Reason |= c.Reason
			continue
		}
		out = append(out, c)
	}
	return out
}

// Clip returns the list limited to [0, frames): cuts past the end are
// dropped, a cut across the end ends there.
func (c Cuts) Clip(frames int64) Cuts {
	out := make(Cuts, 0, len(c))
	for _, x := range c {
		if x.Start >= frames {
			break
		}
		x.End = min(x.End, frames)
		out = append(out, x)
	}
	return out
}

// Removed returns the number of frames the list removes.
func (c Cuts) Removed() int64 {
	var n int64
	for _, x := range c {
		n += x.Len()
	}
	return n
}

// Kept returns the ranges of a recording of frames frames that survive
// the cuts, in order.
func (c Cuts) Kept(frames int64) []audio.Span {
	var out []audio.Span
	at := int64(0)
	for _, x := range c {
		if x.Start >= frames {
			break
		}
		if x.Start > at {
			out = append(out, audio.Span{Start: at, End: x.Start})
		}
		at = max(at, x.End)
	}
	if at < frames {
		out = append(out, audio.Span{Start: at, End: frames})
	}
	return out
}

// Trim returns the cuts that remove startSec seconds from the start and
// endSec seconds from the end of a recording of frames frames (the API's
// cut_start and cut_end), to be merged with other cuts by Normalize.
func Trim(frames int64, sampleRate int, startSec, endSec float64) Cuts {
	var out Cuts
	a := min(frames, int64(math.Round(max(0, startSec)*float64(sampleRate))))
	b := max(a, frames-int64(math.Round(max(0, endSec)*float64(sampleRate))))
	if a > 0 {
		out = append(out, Cut{0, a, CutTrim})
	}
	if b < frames {
		out = append(out, Cut{b, frames, CutTrim})
	}
	return out
}

// TimeMap moves input positions to where they land in the output of a
// Cutter that removes the cuts: chapters, denoise segments and speech
// timings move with the audio. A position inside a removed range maps to
// the join where that range was, which is where the audio after it
// begins; a position after a cut moves earlier by everything removed
// before it. The crossfade at a join is centred on the join, so content
// that starts at a cut's end starts at the mapped position, give or take
// half a fade.
type TimeMap struct {
	sampleRate int
	starts     []int64 // cut starts
	ends       []int64 // cut ends
	before     []int64 // frames removed before cut i
}

// NewTimeMap returns the map of a cut list (which must be valid).
func NewTimeMap(c Cuts, sampleRate int) (*TimeMap, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &TimeMap{sampleRate: sampleRate}
	var removed int64
	for _, x := range c {
		m.starts = append(m.starts, x.Start)
		m.ends = append(m.ends, x.End)
		m.before = append(m.before, removed)
		removed += x.Len()
	}
	return m, nil
}

// Frame maps an input frame to an output frame.
func (m *TimeMap) Frame(in int64) int64 {
	// The last cut starting at or before in.
	i := sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > in }) - 1
	if i < 0 {
		return in
	}
	if in < m.ends[i] {
		return m.starts[i] - m.before[i]
	}
	return in - m.before[i] - (m.ends[i] - m.starts[i])
}

// Seconds maps an input time to an output time, both in seconds, to
// the nearest frame.
func (m *TimeMap) Seconds(in float64) float64 {
	return float64(m.Frame(int64(math.Round(in*float64(m.sampleRate))))) / float64(m.sampleRate)
}
