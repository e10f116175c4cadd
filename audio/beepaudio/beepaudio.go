// Package beepaudio connects audiopost to gopxl/beep
// (github.com/gopxl/beep/v2): NewSource makes an audio.Source of a
// beep.Streamer, so beep's decoders and effects can feed audiopost's nodes,
// and NewStreamer makes a beep.Streamer of an audio.Source, so audiopost's
// output can go to beep's speaker, mixer or encoders. The core of audiopost
// imports none of this; only programs that import this package depend on
// beep. The package is not called beep, so that it does not collide with
// beep's own package in user code.
//
// # Channels
//
// A beep stream is always two channels of float64 ([2]float64 frames, left
// and right), whatever beep.Format.NumChannels says (that field only tells
// beep's encoders how many to write, and beep's decoders put a mono file's
// sample on both sides).
//
// From beep (NewSource), the ChannelMode decides:
//   - Stereo gives 2 channels, left and right, as they are;
//   - MonoAverage gives 1 channel, (left+right)/2;
//   - MonoLeft gives 1 channel, the left one.
//
// ModeFor picks MonoAverage for a beep.Format with NumChannels 1 (both sides
// hold the same sample, so the average is that sample exactly) and Stereo
// otherwise.
//
// To beep (NewStreamer), by the Source's channel count:
//   - 1 channel goes to both sides;
//   - 2 channels go to left and right as they are;
//   - 3 to 8 channels are downmixed in the speaker layouts audiopost's WAV
//     encoder declares (audio/wav.DefaultChannelMask: 3.0, quad, 5.0, 5.1,
//     6.1, 7.1) with the ITU-R BS.775 coefficients: front left and right at
//     1 on their side, the centre channels (front, back) and the surround
//     channels (back, side) at 1/sqrt(2) (-3 dB), a centre on both sides,
//     each surround on its own side, the back centre at 1/2 on each side,
//     and the LFE channel dropped. The downmix is not normalised: loud
//     surround material can exceed full scale, as with any BS.775 downmix.
//
// # Samples
//
// Samples are float64 on both sides and pass unchanged: stereo goes through
// NewStreamer and NewSource bit-exact, and so does mono (x on both sides,
// averaged back, is x). Both adapters convert in blocks through a buffer
// allocated once: Read and Stream allocate nothing.
package beepaudio

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gopxl/beep/v2"

	"github.com/audiopost/audiopost/audio"
)

// ChannelMode says how the two channels of a beep stream become audiopost
// channels.
type ChannelMode int

// The channel modes of NewSource.
const (
	// Stereo keeps left and right as two channels.
	Stereo ChannelMode = iota
	// MonoAverage makes one channel of (left+right)/2.
	MonoAverage
	// MonoLeft makes one channel of the left side.
	MonoLeft
)

// String names the mode.
func (m ChannelMode) String() string {
	switch m {
	case Stereo:
		return "stereo"
	case MonoAverage:
		return "mono-average"
	case MonoLeft:
		return "mono-left"
	}
	return fmt.Sprintf("ChannelMode(%d)", int(m))
}

// ModeFor returns the mode that keeps what a beep stream of format f
// carries: MonoAverage when f.NumChannels is 1, Stereo otherwise.
func ModeFor(f beep.Format) ChannelMode {
	if f.NumChannels == 1 {
		return MonoAverage
	}
	return Stereo
}

// block is the most frames the adapters convert at once.
const block = 512

// maxStalls is how many empty but successful reads in a row the adapters
// accept before they give up with io.ErrNoProgress.
const maxStalls = 100

// Source is an audio.Source that reads a beep.Streamer.
type Source struct {
	st      beep.Streamer
	format  audio.Format
	mode    ChannelMode
	frames  [block][2]float64
	drained bool
	stalls  int
	err     error // sticky: io.EOF or the streamer's error
}

// NewSource returns a Source that reads s, a stream at the given sample
// rate, with the channels mode makes of it. The Source ends with io.EOF
// when s is drained, or with s.Err() if that is not nil.
func NewSource(s beep.Streamer, sampleRate beep.SampleRate, mode ChannelMode) (*Source, error) {
	if s == nil {
		return nil, errors.New("beepaudio: nil Streamer")
	}
	f := audio.Format{SampleRate: int(sampleRate), Channels: 2}
	switch mode {
	case Stereo:
	case MonoAverage, MonoLeft:
		f.Channels = 1
	default:
		return nil, fmt.Errorf("%w: %v", audio.ErrUnsupported, mode)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &Source{st: s, format: f, mode: mode}, nil
}

// Format implements audio.Source.
func (s *Source) Format() audio.Format { return s.format }

// Read implements audio.Source.
func (s *Source) Read(dst audio.Buffer) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(dst) != s.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), s.format.Channels)
	}
	want := dst.Frames()
	n := 0
	for n < want && !s.drained {
		m := min(want-n, block)
		k, ok := s.st.Stream(s.frames[:m])
		k = max(0, min(k, m))
		s.store(dst, n, k)
		n += k
		switch {
		case !ok:
			s.drained = true
		case k == 0:
			if s.stalls++; s.stalls > maxStalls {
				s.err = io.ErrNoProgress
				s.drained = true
			}
		case k < m:
			// beep: a short read means the stream is drained; the next
			// Stream returns (0, false).
			s.stalls = 0
			return n, nil
		default:
			s.stalls = 0
		}
	}
	if n > 0 || want == 0 && !s.drained {
		return n, nil
	}
	if s.err == nil {
		s.err = io.EOF
		if err := s.st.Err(); err != nil {
			s.err = err
		}
	}
	return 0, s.err
}

// store converts k beep frames into dst from frame off.
func (s *Source) store(dst audio.Buffer, off, k int) {
	fr := s.frames[:k]
	switch s.mode {
	case Stereo:
		l, r := dst[0][off:off+k], dst[1][off:off+k]
		for i, f := range fr {
			l[i], r[i] = f[0], f[1]
		}
	case MonoAverage:
		out := dst[0][off : off+k]
		for i, f := range fr {
			out[i] = (f[0] + f[1]) / 2
		}
	case MonoLeft:
		out := dst[0][off : off+k]
		for i, f := range fr {
			out[i] = f[0]
		}
	}
}

// Streamer is a beep.Streamer that reads an audio.Source.
type Streamer struct {
	src     audio.Source
	format  audio.Format
	buf     audio.Buffer
	view    audio.Buffer
	lw, rw  []float64 // downmix coefficients for more than two channels
	done    bool
	pending error // the Source's failure, reported once the frames before it are out
	err     error
}

// NewStreamer returns a beep.Streamer that plays src, with the channel
// mapping of the package documentation. Its Err is the Source's error if
// the Source fails (not io.EOF).
func NewStreamer(src audio.Source) (*Streamer, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	s := &Streamer{src: src, format: f, buf: audio.NewBuffer(f.Channels, block), view: make(audio.Buffer, f.Channels)}
	if f.Channels > 2 {
		s.lw, s.rw = downmix(f.Channels)
	}
	return s, nil
}

// Format returns the beep.Format of the stream: its sample rate, 1 channel
// for a mono Source and 2 otherwise, and a precision of 2 bytes (16-bit)
// for beep's encoders; set Precision to 3 for 24-bit files.
func (s *Streamer) Format() beep.Format {
	return beep.Format{SampleRate: beep.SampleRate(s.format.SampleRate), NumChannels: min(s.format.Channels, 2), Precision: 2}
}

// Stream implements beep.Streamer: it fills samples unless the Source ends.
func (s *Streamer) Stream(samples [][2]float64) (n int, ok bool) {
	if s.done {
		s.err = s.pending
		return 0, false
	}
	for n < len(samples) {
		m := min(len(samples)-n, block)
		k, err := s.src.Read(s.buf.SliceInto(s.view, 0, m))
		s.load(samples[n:n+k], k)
		n += k
		if err != nil {
			s.done = true
			if !errors.Is(err, io.EOF) {
				s.pending = err
			}
			break
		}
	}
	if n == 0 && s.done {
		s.err = s.pending
		return 0, false
	}
	return n, true
}

// load maps k frames of the block buffer to beep frames.
func (s *Streamer) load(out [][2]float64, k int) {
	switch len(s.buf) {
	case 1:
		for i, x := range s.buf[0][:k] {
			out[i] = [2]float64{x, x}
		}
	case 2:
		l, r := s.buf[0][:k], s.buf[1][:k]
		for i := range out {
			out[i] = [2]float64{l[i], r[i]}
		}
	default:
		clear(out)
		for c, ch := range s.buf {
			lw, rw := s.lw[c], s.rw[c]
			if lw == 0 && rw == 0 {
				continue // LFE
			}
			for i, x := range ch[:len(out)] {
				out[i][0] += lw * x
				out[i][1] += rw * x
			}
		}
	}
}

// Err implements beep.Streamer.
func (s *Streamer) Err() error { return s.err }

// downmix returns the left and right coefficients of each channel for a
// stream of 3 to 8 channels (see the package documentation).
func downmix(channels int) (lw, rw []float64) {
	const g = math.Sqrt2 / 2
	type pos int
	const (
		fl pos = iota
		fr
		fc
		lfe
		bl
		br
		bc
		sl
		sr
	)
	layouts := map[int][]pos{
		3: {fl, fr, fc},
		4: {fl, fr, bl, br},
		5: {fl, fr, fc, bl, br},
		6: {fl, fr, fc, lfe, bl, br},
		7: {fl, fr, fc, lfe, bc, sl, sr},
		8: {fl, fr, fc, lfe, bl, br, sl, sr},
	}
	lw, rw = make([]float64, channels), make([]float64, channels)
	for c, p := range layouts[channels] {
		switch p {
		case fl:
			lw[c] = 1
		case fr:
			rw[c] = 1
		case fc:
			lw[c], rw[c] = g, g
		case bl, sl:
			lw[c] = g
		case br, sr:
			rw[c] = g
		case bc:
			lw[c], rw[c] = 0.5, 0.5
		}
	}
	return lw, rw
}
