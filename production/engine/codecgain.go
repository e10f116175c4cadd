package engine

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// Lossy encoders do not keep the level they are given: LAME at constant
// bitrates up to 192 kb/s decodes 0.3-0.45 dB below its input (at 256 kb/s
// and in VBR it does not), so an MP3 of a production normalized to
// -16 LUFS would measure -16.45. The engine therefore feeds each lossy
// encoder through a gain that undoes the encoder's own drift, measured
// once per process for each encoder configuration on a tone probe, and verifyLossy corrects what the probe did not predict for the
// actual programme.

// codecGainKey is an encoder configuration whose level drift is cached.
type codecGainKey struct {
	format         string
	bitrate        int
	channels, rate int
}

// maxCodecGain bounds the compensation: a larger drift means a broken
// encoder, which should be visible in the output, not hidden.
const maxCodecGain = 1.5

var codecGains sync.Map // codecGainKey -> float64 (dB)

// codecGainDB returns the gain in dB that makes the encoder of format,
// at bitrate kbps for streams of f, decode at the loudness it was given.
func codecGainDB(ctx context.Context, format string, bitrate int, f audio.Format) (float64, error) {
	key := codecGainKey{format, bitrate, f.Channels, f.SampleRate}
	if g, ok := codecGains.Load(key); ok {
		return g.(float64), nil
	}
	probe := toneProbe(f, 6)
	in, err := integrated(ctx, audio.NewBufferSource(probe, f.SampleRate))
	if err != nil {
		return 0, err
	}
	var encoded bytes.Buffer
	enc, err := audio.NewEncoder(ctx, format, &encoded, f, audio.EncodeOptions{Bitrate: bitrate})
	if err != nil {
		return 0, err
	}
	for off := 0; off < probe.Frames(); off += audio.DefaultBlock {
		end := min(off+audio.DefaultBlock, probe.Frames())
		if err := enc.Write(probe.Slice(off, end)); err != nil {
			enc.Close()
			return 0, err
		}
	}
	if err := enc.Close(); err != nil {
		return 0, err
	}
	d, err := audio.Decode(ctx, bytes.NewReader(encoded.Bytes()))
	if err != nil {
		return 0, err
	}
	defer d.Close()
	out, err := integrated(ctx, d)
	if err != nil {
		return 0, err
	}
	if math.IsInf(in, 0) || math.IsInf(out, 0) {
		return 0, fmt.Errorf("%s probe decodes silent", format)
	}
	g := max(-maxCodecGain, min(maxCodecGain, in-out))
	codecGains.Store(key, g)
	return g, nil
}

func integrated(ctx context.Context, src audio.Source) (float64, error) {
	res, err := loudness.Measure(ctx, src, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		return 0, err
	}
	return res.Integrated, nil
}

// toneProbe is seconds of a steady harmonic tone: a 150 Hz voice-like
// fundamental with partials to 4 kHz falling 6 dB per octave, at about
// -20 LUFS, the same in every channel. Tones, not noise: transform
// codecs at podcast bitrates code steady partials faithfully, so what the
// decoded probe lacks is the encoder's systematic gain error, which is
// what compensation is for; how a codec treats noise-like detail depends
// on the programme and is left to verifyLossy's measurement.
func toneProbe(f audio.Format, seconds float64) audio.Buffer {
	n := int(seconds * float64(f.SampleRate))
	buf := audio.NewBuffer(f.Channels, n)
	const f0 = 150.0
	rate := float64(f.SampleRate)
	for k := 1; float64(k)*f0 <= min(4000, rate/2.5); k++ {
		amp := 0.12 / float64(k)
		w := 2 * math.Pi * float64(k) * f0 / rate
		phase := float64(k*k) * 0.7 // spread the partials' peaks
		for i := range n {
			buf[0][i] += amp * math.Sin(w*float64(i)+phase)
		}
	}
	for c := 1; c < f.Channels; c++ {
		copy(buf[c], buf[0])
	}
	return buf
}

// gainSink scales what it is given by a fixed gain before passing it on.
type gainSink struct {
	gain float64
	next audio.Sink
	buf  audio.Buffer
}

func newGainSink(db float64, channels int, next audio.Sink) *gainSink {
	return &gainSink{gain: math.Pow(10, db/20), next: next, buf: audio.NewBuffer(channels, audio.DefaultBlock)}
}

func (g *gainSink) Write(b audio.Buffer) error {
	n := b.Frames()
	for c := range b {
		if cap(g.buf[c]) < n {
			g.buf[c] = make([]float64, n)
		}
		out := g.buf[c][:n]
		for i, v := range b[c][:n] {
			out[i] = v * g.gain
		}
		g.buf[c] = out
	}
	return g.next.Write(g.buf)
}

// compensate puts the gain that undoes the level drift of output's lossy
// encoder in front of sink: the probe's prediction plus what verifyLossy
// measured on this programme in an earlier pass.
func (r *run) compensate(ctx context.Context, output int, of production.OutputFormat, bitrate int, f audio.Format, sink audio.Sink) (audio.Sink, error) {
	if !r.normalize {
		return sink, nil
	}
	g, err := codecGainDB(ctx, of.Name, bitrate, f)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The real encoder will report what is wrong with it.
		slog.Debug("codec level probe failed", "format", of.Name, "err", err)
		g = 0
	}
	g += r.levelFix[output]
	if math.Abs(g) < 0.01 {
		return sink, nil
	}
	return newGainSink(g, f.Channels, sink), nil
}
