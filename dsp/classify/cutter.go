package classify

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// CutMode is what a Cutter does with its cut list (the API's cut_mode).
type CutMode int

const (
	// ApplyCuts removes the cuts; every join is crossfaded.
	ApplyCuts CutMode = iota
	// SilenceCuts keeps the length and fades the cuts to silence, for
	// editors who want to see what would go.
	SilenceCuts
	// ExportCuts passes the audio through unchanged: the cut list goes
	// out as a file (WriteAudacityLabels, WriteEDL) for an editor to apply.
	ExportCuts
)

// String returns the API's name of the mode.
func (m CutMode) String() string {
	switch m {
	case ApplyCuts:
		return "apply_cuts"
	case SilenceCuts:
		return "set_cuts_to_silence"
	case ExportCuts:
		return "export_uncut_audio"
	}
	return fmt.Sprintf("CutMode(%d)", int(m))
}

// ParseCutMode reads the API's cut_mode (empty means apply_cuts).
func ParseCutMode(s string) (CutMode, error) {
	for m := ApplyCuts; m <= ExportCuts; m++ {
		if s == m.String() {
			return m, nil
		}
	}
	if s == "" {
		return ApplyCuts, nil
	}
	return 0, fmt.Errorf("classify: unknown cut_mode %q", s)
}

// FadeShape is the curve of the crossfade at a join.
type FadeShape int

const (
	// EqualPower fades with a quarter sine and cosine, whose squares sum
	// to one: the level of two unrelated signals stays constant through
	// the join. Joins fall in pauses, where both sides are room tone,
	// which is unrelated noise; a linear fade would dip it by 3 dB in the
	// middle, an audible breath in the background. It is the default.
	EqualPower FadeShape = iota
	// Linear fades with straight lines, whose sum is one: right for two
	// copies of the same signal in phase (a join inside a steady tone),
	// 3 dB low in the middle for anything else.
	Linear
)

// String returns the shape's name.
func (s FadeShape) String() string {
	switch s {
	case EqualPower:
		return "equal-power"
	case Linear:
		return "linear"
	}
	return fmt.Sprintf("FadeShape(%d)", int(s))
}

// DefaultFade is a crossfade length (seconds) long enough that a join
// inside room tone or a held note does not click, short enough that it
// never reaches into a word when the join sits in a pause.
const DefaultFade = 0.05

// CutterOptions configure a Cutter.
type CutterOptions struct {
	// Mode is what to do with the cuts.
	Mode CutMode
	// Fade is the crossfade length at a join in seconds (the API's
	// fadetime), centred on the join: half before, half after. A join
	// whose cut, or the audio kept next to it, is shorter than the fade
	// gets a shorter fade. 0 makes hard joins.
	Fade float64
	// Shape is the fade curve.
	Shape FadeShape
}

// join is one cut as the Cutter renders it.
type join struct {
	s, e int64 // the removed range
	h    int64 // half the crossfade, frames
}

// Cutter is a Source that renders its upstream without the cuts (or with
// them silenced): the node behind cut_mode. It reads the upstream once,
// skipping what a cut removes, holds two fade lengths of audio, and
// allocates nothing per Read. In ApplyCuts mode a join at cut [s, e)
// crossfades the audio from s-h on (fading out) with the audio from e-h
// on (fading in) over 2h frames, so the output has exactly Frames -
// Removed frames and content at e starts at TimeMap.Frame(e). A cut at the
// very start fades in after it; a cut that runs to the end fades out
// before it.
type Cutter struct {
	src    audio.Source
	format audio.Format
	mode   CutMode
	shape  FadeShape
	joins  []join

	ji      int   // next join to render
	in      int64 // input frames consumed
	eof     bool  // upstream ended
	err     error // upstream error held for the next Read
	bufA    audio.Buffer
	bufB    audio.Buffer
	pend    audio.Buffer // pending output, a prefix of bufA
	pendPos int
	scratch audio.Buffer
	view    audio.Buffer // header for slices of dst and scratch
	viewF   audio.Buffer // header fill slices with
	viewB   audio.Buffer // header of the used part of bufB
}

// NewCutter returns a Cutter over src. cuts must be a valid cut list
// (see Normalize); cuts past the end of src are ignored.
func NewCutter(src audio.Source, cuts Cuts, o CutterOptions) (*Cutter, error) {
	if err := cuts.Validate(); err != nil {
		return nil, err
	}
	f := src.Format()
	if o.Mode < ApplyCuts || o.Mode > ExportCuts {
		return nil, fmt.Errorf("classify: invalid cut mode %d", int(o.Mode))
	}
	if o.Shape < EqualPower || o.Shape > Linear {
		return nil, fmt.Errorf("classify: invalid fade shape %d", int(o.Shape))
	}
	if !(o.Fade >= 0) || o.Fade > 10 {
		return nil, fmt.Errorf("classify: fade %g s outside 0-10 s", o.Fade)
	}
	c := &Cutter{src: src, format: f, mode: o.Mode, shape: o.Shape}
	hmax := int64(math.Round(o.Fade*float64(f.SampleRate))) / 2
	// Touching cuts are one removal.
	for _, x := range cuts {
		if n := len(c.joins); n > 0 && c.joins[n-1].e == x.Start {
			c.joins[n-1].e = x.End
			continue
		}
		c.joins = append(c.joins, join{s: x.Start, e: x.End})
	}
	for i := range c.joins {
		j := &c.joins[i]
		h := hmax
		if j.s > 0 {
			h = min(h, (j.e-j.s)/2)
			if i == 0 {
				h = min(h, j.s)
			} else {
				h = min(h, (j.s-c.joins[i-1].e)/2)
			}
		}
		if i+1 < len(c.joins) {
			h = min(h, (c.joins[i+1].s-j.e)/2)
		}
		j.h = h
	}
	c.bufA = audio.NewBuffer(f.Channels, int(2*hmax))
	c.bufB = audio.NewBuffer(f.Channels, int(2*hmax))
	c.pend = make(audio.Buffer, f.Channels)
	c.view = make(audio.Buffer, f.Channels)
	c.viewF = make(audio.Buffer, f.Channels)
	c.viewB = make(audio.Buffer, f.Channels)
	if o.Mode == ApplyCuts && len(c.joins) > 0 {
		c.scratch = audio.NewBuffer(f.Channels, audio.DefaultBlock)
	}
	return c, nil
}

// Format implements audio.Source.
func (c *Cutter) Format() audio.Format { return c.format }

// Close closes the upstream if it is an io.Closer: a graph owns its inputs.
func (c *Cutter) Close() error {
	if cl, ok := c.src.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Read implements audio.Source.
func (c *Cutter) Read(dst audio.Buffer) (int, error) {
	if len(dst) != c.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), c.format.Channels)
	}
	switch c.mode {
	case ExportCuts:
		return c.src.Read(dst)
	case SilenceCuts:
		return c.readSilenced(dst)
	}
	want := dst.Frames()
	if want == 0 {
		if (c.eof || c.err != nil) && c.pendPos >= c.pend.Frames() {
			if c.err != nil {
				return 0, c.err
			}
			return 0, io.EOF
		}
		return 0, nil
	}
	n := 0
	for n < want {
		if p := c.pend.Frames(); c.pendPos < p {
			m := min(want-n, p-c.pendPos)
			for ch := range dst {
				copy(dst[ch][n:n+m], c.pend[ch][c.pendPos:c.pendPos+m])
			}
			n += m
			c.pendPos += m
			continue
		}
		if c.eof || c.err != nil {
			break
		}
		stop := int64(math.MaxInt64)
		if c.ji < len(c.joins) {
			stop = c.joins[c.ji].s - c.joins[c.ji].h
			if c.joins[c.ji].s == 0 {
				stop = 0
			}
		}
		if c.in < stop {
			m := int(min(int64(want-n), stop-c.in))
			got, err := c.src.Read(dst.SliceInto(c.view, n, n+m))
			c.in += int64(got)
			n += got
			c.upstream(err)
			continue
		}
		c.render(c.joins[c.ji])
		c.ji++
	}
	if n > 0 {
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	return 0, io.EOF
}

// upstream records the error of an upstream Read.
func (c *Cutter) upstream(err error) {
	if err == nil {
		return
	}
	if errors.Is(err, io.EOF) {
		c.eof = true
	} else {
		c.err = err
	}
}

// fill reads up to b.Frames() frames of upstream into b and returns how
// many it got (fewer only at the end of the stream or on an error).
func (c *Cutter) fill(b audio.Buffer) int {
	got := 0
	for got < b.Frames() && !c.eof && c.err == nil {
		n, err := c.src.Read(b.SliceInto(c.viewF, got, b.Frames()))
		got += n
		c.in += int64(n)
		c.upstream(err)
	}
	return got
}

// skip reads and drops n frames of upstream.
func (c *Cutter) skip(n int64) {
	for n > 0 && !c.eof && c.err == nil {
		m := int(min(n, int64(c.scratch.Frames())))
		got, err := c.src.Read(c.scratch.SliceInto(c.view, 0, m))
		c.in += int64(got)
		n -= int64(got)
		c.upstream(err)
	}
}

// gains returns the fade-out and fade-in gains at t in (0, 1).
func (c *Cutter) gains(t float64) (out, in float64) {
	if c.shape == Linear {
		return 1 - t, t
	}
	s, co := math.Sincos(math.Pi / 2 * t)
	return co, s
}

// render renders join j into pend; the upstream is at j.s-j.h (at 0 for
// a cut at the start).
func (c *Cutter) render(j join) {
	h := int(j.h)
	c.pendPos = 0
	if j.s == 0 {
		// Cut at the start: fade in after it.
		c.skip(j.e - c.in)
		a := c.bufA.SliceInto(c.pend, 0, h)
		got := c.fill(a)
		for k := 0; k < got; k++ {
			_, g := c.gains((float64(k) + 0.5) / float64(h))
			for ch := range a {
				a[ch][k] *= g
			}
		}
		c.pend = a.SliceInto(c.pend, 0, got)
		return
	}
	a := c.bufA.SliceInto(c.pend, 0, 2*h)
	gotA := c.fill(a)
	if gotA < h {
		// The stream ends before the cut: nothing to remove.
		c.pend = a.SliceInto(c.pend, 0, gotA)
		return
	}
	if !c.eof {
		c.skip(j.e - j.h - c.in)
	}
	gotB := 0
	if !c.eof {
		gotB = c.fill(c.bufB.SliceInto(c.viewB, 0, 2*h))
	}
	if gotB <= h {
		// The cut runs to the end: fade out before it.
		for k := 0; k < h; k++ {
			g, _ := c.gains((float64(k) + 0.5) / float64(h))
			for ch := range a {
				a[ch][k] *= g
			}
		}
		c.pend = a.SliceInto(c.pend, 0, h)
		return
	}
	for k := 0; k < gotB; k++ {
		go_, gi := c.gains((float64(k) + 0.5) / float64(2*h))
		for ch := range a {
			a[ch][k] = a[ch][k]*go_ + c.bufB[ch][k]*gi
		}
	}
	c.pend = a.SliceInto(c.pend, 0, gotB)
}

// readSilenced reads upstream and fades the cuts to silence: the gain
// falls over [s-h, s+h) and rises over [e-h, e+h).
func (c *Cutter) readSilenced(dst audio.Buffer) (int, error) {
	n, err := c.src.Read(dst)
	if n == 0 {
		return n, err
	}
	p0, p1 := c.in, c.in+int64(n)
	c.in = p1
	for c.ji < len(c.joins) && c.joins[c.ji].e+c.joins[c.ji].h <= p0 {
		c.ji++
	}
	for i := c.ji; i < len(c.joins); i++ {
		j := c.joins[i]
		out0 := j.s - j.h // the fade out starts
		if j.s == 0 {
			out0 = 0
		}
		if out0 >= p1 {
			break
		}
		if j.s > 0 {
			for p := max(p0, out0); p < min(p1, j.s+j.h); p++ {
				g, _ := c.gains((float64(p-out0) + 0.5) / float64(2*j.h))
				for ch := range dst {
					dst[ch][p-p0] *= g
				}
			}
		}
		in0 := j.s + j.h // silence starts
		if j.s == 0 {
			in0 = 0
		}
		if a, b := max(p0, in0), min(p1, j.e-j.h); a < b {
			for ch := range dst {
				clear(dst[ch][a-p0 : b-p0])
			}
		}
		for p := max(p0, j.e-j.h); p < min(p1, j.e+j.h); p++ {
			_, g := c.gains((float64(p-(j.e-j.h)) + 0.5) / float64(2*j.h))
			for ch := range dst {
				dst[ch][p-p0] *= g
			}
		}
	}
	return n, err
}
