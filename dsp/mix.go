package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// MixInput is one input of a Mix. Source can be any node, so an input
// whose level must change over time (ducking under speech) is a gain node
// wrapped around the source, and an input at another rate is a Resampler.
type MixInput struct {
	// Source is the input; the Mix owns it from then on (Close closes it).
	Source audio.Source
	// GainDB is the input's gain; -Inf mutes it.
	GainDB float64
	// Pan places the input between the left (-1) and right (+1) channels
	// of the output, 0 being the centre; see Mix for the law.
	Pan float64
	// Offset is where the input starts, in frames of the output from its
	// start; inputs may overlap or leave gaps of silence.
	Offset int64
}

// MixOptions configure a Mix.
type MixOptions struct {
	// SampleRate is the rate of the mix; every input must have it (put a
	// Resampler in front of one that does not). 0 means the rate of the
	// first input.
	SampleRate int
	// Channels is the channel count of the mix; 0 means the largest
	// channel count of the inputs.
	Channels int
}

// Mix sums several sources, each with its own gain, pan and start offset,
// into one: music under speech, an intro before it, a jingle on top.
//
// The mix ends when the last input ends: its length is the largest
// Offset plus input length over the inputs (an empty input with an
// offset still extends the mix to that offset). Each sample is the sum of
// the inputs' contributions in the order of the inputs, so the output is
// the same whatever the block size and however the inputs split their
// reads. Upstream short reads are never taken for the end of an input.
//
// Channel mapping, with the constant-power pan law θ = (Pan+1)·π/4:
//
//   - Mono into stereo (or more): the input goes to channels 0 and 1 with
//     gains cos θ and sin θ, so the centre is -3 dB on each side and the
//     input's power (and BS.1770 loudness) is the same at every pan
//     position. Other output channels get nothing.
//   - Stereo into stereo (or more): channel c goes to channel c, Pan is
//     the balance: channel 0 is scaled by √2·cos θ and channel 1 by
//     √2·sin θ, which is unity at the centre, keeps the power of
//     uncorrelated channels, and raises the near side by 3 dB at the
//     extremes.
//   - Stereo into mono: the transpose of the mono pan, cos θ·L + sin θ·R,
//     i.e. (L+R)/√2 at the centre: the BS.1770 loudness of a dual-mono
//     recording is kept (a full-scale dual-mono input peaks at +3 dBFS,
//     so a limiter belongs after the mix).
//   - Equal channel counts otherwise (mono into mono, 5.1 into 5.1):
//     channel c to channel c; with three channels or more, Pan is the
//     balance of channels 0 and 1 as for stereo. Pan means nothing
//     between mono and mono and is ignored there.
//   - Fewer channels into more (stereo into 5.1): channel c to channel c,
//     the rest silent.
//   - More channels into fewer, other than stereo into mono: an error.
//
// Nothing is clipped; the sum can exceed full scale.
//
// Each input is read up to 1024 frames ahead of the output, so a node
// that changes an input's gain should do it on its own timeline (at a
// frame index, as PlanGain does), not when the mix's consumer happens to
// call Read.
type Mix struct {
	format audio.Format
	ins    []*mixIn
	pos    int64 // output frames produced
	err    error
	done   bool
}

// mixIn is the state of one input: a block read ahead and where it is.
type mixIn struct {
	src   audio.Source
	terms []mixTerm
	buf   audio.Buffer // pending frames are buf[.][start:end]
	start int
	end   int
	t     int64 // output frame of buf[.][start] (or of the next frame read)
	eof   bool
}

// mixTerm adds gain times input channel in to output channel out.
type mixTerm struct {
	in, out int
	gain    float64
}

// mixBlock is the read-ahead of each input, in frames.
const mixBlock = 1024

// NewMix returns the mix of inputs. It fails with ErrInvalidParameter
// when there are no inputs, when an input's rate differs from the mix's,
// when a gain, pan or offset is out of range (gain NaN or +Inf, pan
// outside [-1, 1], negative offset), or when channels cannot be mapped.
func NewMix(inputs []MixInput, opts MixOptions) (*Mix, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: a mix needs at least one input", ErrInvalidParameter)
	}
	f := audio.Format{SampleRate: opts.SampleRate, Channels: opts.Channels}
	for i, in := range inputs {
		if in.Source == nil {
			return nil, fmt.Errorf("%w: mix input %d has no source", ErrInvalidParameter, i)
		}
		inf := in.Source.Format()
		if f.SampleRate == 0 {
			f.SampleRate = inf.SampleRate
		}
		if opts.Channels == 0 {
			f.Channels = max(f.Channels, inf.Channels)
		}
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: mix format: %w", ErrInvalidParameter, err)
	}
	m := &Mix{format: f}
	for i, in := range inputs {
		inf := in.Source.Format()
		if inf.SampleRate != f.SampleRate {
			return nil, fmt.Errorf("%w: mix input %d is at %d Hz, the mix at %d Hz (resample it first)", ErrInvalidParameter, i, inf.SampleRate, f.SampleRate)
		}
		if err := inf.Validate(); err != nil {
			return nil, fmt.Errorf("%w: mix input %d: %w", ErrInvalidParameter, i, err)
		}
		if math.IsNaN(in.GainDB) || math.IsInf(in.GainDB, 1) {
			return nil, fmt.Errorf("%w: mix input %d gain %v dB", ErrInvalidParameter, i, in.GainDB)
		}
		if !(in.Pan >= -1 && in.Pan <= 1) {
			return nil, fmt.Errorf("%w: mix input %d pan %v outside [-1, 1]", ErrInvalidParameter, i, in.Pan)
		}
		if in.Offset < 0 {
			return nil, fmt.Errorf("%w: mix input %d offset %d frames", ErrInvalidParameter, i, in.Offset)
		}
		terms, err := mixTerms(inf.Channels, f.Channels, DBToGain(in.GainDB), in.Pan)
		if err != nil {
			return nil, fmt.Errorf("mix input %d: %w", i, err)
		}
		m.ins = append(m.ins, &mixIn{
			src:   in.Source,
			terms: terms,
			buf:   audio.NewBuffer(inf.Channels, mixBlock),
			t:     in.Offset,
		})
	}
	return m, nil
}

// mixTerms returns the gains that map an input of in channels into an
// output of out channels (see Mix for the rules).
func mixTerms(in, out int, g, pan float64) ([]mixTerm, error) {
	th := (pan + 1) * math.Pi / 4
	cl, cr := math.Cos(th), math.Sin(th)
	switch pan { // exact where the law is exact
	case -1:
		cl, cr = 1, 0
	case 0:
		cl, cr = math.Sqrt2/2, math.Sqrt2/2
	case 1:
		cl, cr = 0, 1
	}
	var t []mixTerm
	switch {
	case in == 1 && out >= 2:
		t = []mixTerm{{0, 0, g * cl}, {0, 1, g * cr}}
	case in == 2 && out == 1:
		t = []mixTerm{{0, 0, g * cl}, {1, 0, g * cr}}
	case in <= out:
		for c := 0; c < in; c++ {
			t = append(t, mixTerm{c, c, g})
		}
		if in >= 2 {
			t[0].gain *= math.Sqrt2 * cl
			t[1].gain *= math.Sqrt2 * cr
			if pan == 0 {
				t[0].gain, t[1].gain = g, g
			}
		}
	default:
		return nil, fmt.Errorf("%w: cannot mix %d channels into %d", ErrInvalidParameter, in, out)
	}
	return t, nil
}

// Format implements audio.Source.
func (m *Mix) Format() audio.Format { return m.format }

// Close closes every input.
func (m *Mix) Close() error {
	srcs := make([]audio.Source, len(m.ins))
	for i, in := range m.ins {
		srcs[i] = in.src
	}
	return closeSources(srcs...)
}

// Read implements audio.Source.
func (m *Mix) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, m.format.Channels); err != nil {
		return 0, err
	}
	want := dst.Frames()
	n := 0
	for n < want && !m.done && m.err == nil {
		// Every input that has reached the current frame and has nothing
		// pending reads its next block.
		for i, in := range m.ins {
			if in.eof || in.start < in.end || in.t > m.pos {
				continue
			}
			k, err := in.src.Read(in.buf)
			switch {
			case k > 0:
				in.start, in.end = 0, k
			case errors.Is(err, io.EOF):
				in.eof = true
			case err != nil:
				m.err = fmt.Errorf("mix input %d: %w", i, err)
			default:
				m.err = fmt.Errorf("%w: mix input %d returned no frames and no error", audio.ErrMalformed, i)
			}
			if m.err != nil {
				break
			}
		}
		if m.err != nil {
			break
		}
		// Mix up to where the first live input runs out of known frames:
		// the end of its pending block, or its start.
		span := int64(want - n)
		live := false
		for _, in := range m.ins {
			if !in.eof {
				live = true
				span = min(span, in.t+int64(in.end-in.start)-m.pos)
			}
		}
		if !live {
			m.done = true
			break
		}
		k := int(span)
		for c := range dst {
			clear(dst[c][n : n+k])
		}
		for _, in := range m.ins {
			if in.start == in.end {
				continue
			}
			// An input with pending frames is at the current frame.
			for _, tm := range in.terms {
				if tm.gain == 0 {
					continue
				}
				o := dst[tm.out][n : n+k]
				x := in.buf[tm.in][in.start : in.start+k]
				for j := range o {
					o[j] += tm.gain * x[j]
				}
			}
			in.start += k
			in.t += int64(k)
		}
		n += k
		m.pos += int64(k)
	}
	if n > 0 {
		return n, nil
	}
	if m.err != nil {
		return 0, m.err
	}
	if m.done {
		return 0, io.EOF
	}
	return 0, nil
}
