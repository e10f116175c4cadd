package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// Intros and outros play in series with the processed main audio: intros
// in list order before it, outros after it. An intro's offset is how much
// of its end overlaps (is mixed with) the start of the audio after it; an
// outro's offset how much of its start overlaps the end of the audio
// before it. Intros and outros are not otherwise processed, but when the
// production normalises its loudness each is brought to the target by
// one gain (measured once per file with the production's loudness
// method), so a jingle mastered at -9 LUFS does not jump out of a -16
// LUFS programme. Their channels are mapped to the processed audio's
// (mono is copied to every channel, more channels are averaged to mono).
// One at another sample rate goes through dsp's resampler to the
// processed audio's rate.

// withIntroOutro returns main with the production's intros and outros.
// Their peaks are not controlled and overlaps add up, so the series goes
// through a true-peak limiter at the processed audio's ceiling: the
// maxpeak promise holds for the whole output.
func (r *run) withIntroOutro(ctx context.Context, main audio.Source, job ProcessJob) (audio.Source, error) {
	var segs []audio.Source
	var overlaps []int
	f := main.Format()
	add := func(m production.MultiInputFile, src audio.Source, what string) error {
		if r.normalize {
			g, err := r.introLevel(ctx, m, what)
			if err != nil {
				return err
			}
			if src, err = dsp.NewGain(src, g); err != nil {
				return err
			}
		}
		if sf := src.Format(); sf.SampleRate != f.SampleRate {
			rs, err := dsp.NewResampler(src, f.SampleRate, dsp.ResampleOptions{})
			if err != nil {
				return fmt.Errorf("%s has %d Hz, the input %d Hz: %w", what, sf.SampleRate, f.SampleRate, err)
			}
			src = rs
		}
		segs = append(segs, channelMap(src, f.Channels))
		return nil
	}
	frames := func(sec float64) int { return int(math.Round(math.Max(0, sec) * float64(f.SampleRate))) }
	for _, m := range r.p.MultiInputFiles {
		if m.Type != production.InputIntro {
			continue
		}
		what := "intro file " + m.ID
		d, err := r.open(ctx, r.in.Multi[m.ID], what)
		if err != nil {
			return nil, err
		}
		if err := add(m, d, what); err != nil {
			return nil, err
		}
		overlaps = append(overlaps, frames(m.Offset))
	}
	segs = append(segs, main)
	overlaps = append(overlaps, 0)
	for _, m := range r.p.MultiInputFiles {
		if m.Type != production.InputOutro {
			continue
		}
		what := "outro file " + m.ID
		d, err := r.open(ctx, r.in.Multi[m.ID], what)
		if err != nil {
			return nil, err
		}
		if err := add(m, d, what); err != nil {
			return nil, err
		}
		overlaps[len(overlaps)-1] = frames(m.Offset)
		overlaps = append(overlaps, 0)
	}
	if len(segs) == 1 {
		return main, nil
	}
	return dsp.NewLimiter(newSeries(f, segs, overlaps), job.ceiling())
}

// introLevel returns the gain that brings an intro or outro to the
// production's loudness target, measured by Settings.IntroMethod.
// Silence gets no gain.
func (r *run) introLevel(ctx context.Context, m production.MultiInputFile, what string) (float64, error) {
	if g, ok := r.introGain[m.ID]; ok {
		return g, nil
	}
	d, err := r.open(ctx, r.in.Multi[m.ID], what)
	if err != nil {
		return 0, err
	}
	res, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeI | loudness.ModeRMS})
	d.Close()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	level, err := res.Loudness(r.settings.IntroMethod)
	g := r.settings.Chain.TargetLUFS - level
	if err != nil || math.IsInf(g, 0) || math.IsNaN(g) {
		g = 0
	}
	if r.introGain == nil {
		r.introGain = map[string]float64{}
	}
	r.introGain[m.ID] = g
	return g, nil
}

// introOutroFrames estimates the frames intros and outros add (their
// lengths minus overlaps), from the probed lengths.
func (r *run) introOutroFrames() int64 {
	var sec float64
	for _, m := range r.p.MultiInputFiles {
		if m.Type == production.InputIntro || m.Type == production.InputOutro {
			sec += math.Max(0, m.InputLength-m.Offset)
		}
	}
	return int64(sec * float64(r.p.SampleRate))
}

// channelMap adapts a source to n channels.
func channelMap(src audio.Source, n int) audio.Source {
	if src.Format().Channels == n {
		return src
	}
	return &mapped{src: src, n: n, buf: audio.NewBuffer(src.Format().Channels, 0)}
}

type mapped struct {
	src audio.Source
	n   int
	buf audio.Buffer
}

func (m *mapped) Format() audio.Format {
	f := m.src.Format()
	f.Channels = m.n
	return f
}

func (m *mapped) Read(dst audio.Buffer) (int, error) {
	want := dst.Frames()
	if cap(m.buf[0]) < want {
		m.buf = audio.NewBuffer(len(m.buf), want)
	}
	in := m.buf
	for c := range in {
		in[c] = in[c][:want]
	}
	n, err := m.src.Read(in)
	switch {
	case len(in) == 1:
		for c := range dst {
			copy(dst[c][:n], in[0][:n])
		}
	default:
		// Average to mono, then copy to every output channel.
		for i := 0; i < n; i++ {
			var s float64
			for c := range in {
				s += in[c][i]
			}
			s /= float64(len(in))
			for c := range dst {
				dst[c][i] = s
			}
		}
	}
	return n, err
}

// series plays sources one after the other; overlaps[i] frames of the end
// of source i are mixed with the start of source i+1. It holds the last
// overlaps[i] frames of source i back in a ring until the source ends,
// then adds them to the start of the next (a carry), so no length needs to
// be known in advance.
type series struct {
	f        audio.Format
	segs     []audio.Source
	overlaps []int
	i        int

	ring           audio.Buffer // capacity: max overlap + block
	rStart, rCount int          // ring content (frames), modulo len
	carry          audio.Buffer
	cPos, cN       int
	scratch        audio.Buffer
	view           audio.Buffer
	err            error
}

const seriesBlock = 4096

func newSeries(f audio.Format, segs []audio.Source, overlaps []int) *series {
	maxO := 0
	for _, o := range overlaps {
		maxO = max(maxO, o)
	}
	return &series{
		f: f, segs: segs, overlaps: overlaps,
		ring:    audio.NewBuffer(f.Channels, maxO+seriesBlock),
		carry:   audio.NewBuffer(f.Channels, maxO),
		scratch: audio.NewBuffer(f.Channels, seriesBlock),
		view:    make(audio.Buffer, f.Channels),
	}
}

func (s *series) Format() audio.Format { return s.f }

func (s *series) Read(dst audio.Buffer) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	want := dst.Frames()
	if want == 0 {
		return 0, nil
	}
	for {
		// Emit what the ring holds beyond the current overlap.
		if hold := s.overlapNow(); s.rCount > hold {
			n := min(want, s.rCount-hold)
			s.pop(dst, n)
			return n, nil
		}
		if s.i >= len(s.segs) {
			s.err = io.EOF
			return 0, io.EOF
		}
		// Pull the next block of the current segment (plus carry).
		space := len(s.ring[0]) - s.rCount
		m := min(space, seriesBlock)
		in := s.scratch.SliceInto(s.view, 0, m)
		n, err := s.segs[s.i].Read(in)
		if err != nil && !errors.Is(err, io.EOF) {
			s.err = err
			return 0, err
		}
		if n == 0 && err != nil {
			// The segment ended: a carry longer than it is played out
			// as if it had silence there, then the ring becomes the carry.
			if s.cPos < s.cN {
				k := min(s.cN-s.cPos, m)
				for c := range in {
					clear(in[c][:k])
				}
				s.addCarry(in, k)
				s.push(in, k)
				continue
			}
			s.takeCarry()
			s.i++
			continue
		}
		s.addCarry(in, n)
		s.push(in, n)
	}
}

// overlapNow is how many frames the ring keeps back for the next segment.
func (s *series) overlapNow() int {
	if s.i >= len(s.segs) {
		return 0
	}
	return s.overlaps[s.i]
}

func (s *series) addCarry(in audio.Buffer, n int) {
	k := min(n, s.cN-s.cPos)
	for c := range in {
		for j := 0; j < k; j++ {
			in[c][j] += s.carry[c][s.cPos+j]
		}
	}
	s.cPos += k
}

func (s *series) push(in audio.Buffer, n int) {
	size := len(s.ring[0])
	for j := 0; j < n; j++ {
		at := (s.rStart + s.rCount + j) % size
		for c := range in {
			s.ring[c][at] = in[c][j]
		}
	}
	s.rCount += n
}

func (s *series) pop(dst audio.Buffer, n int) {
	size := len(s.ring[0])
	for j := 0; j < n; j++ {
		at := (s.rStart + j) % size
		for c := range dst {
			dst[c][j] = s.ring[c][at]
		}
	}
	s.rStart = (s.rStart + n) % size
	s.rCount -= n
}

// takeCarry moves the held-back tail into the carry.
func (s *series) takeCarry() {
	n := s.rCount
	s.pop(s.carry, n)
	s.cPos, s.cN = 0, n
}
