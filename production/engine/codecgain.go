package engine

import (
	"log/slog"
	"math"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
)

// Lossy encoders change what they are given in two ways the engine must
// plan for before it renders, so that a lossy output meets the level and
// maxpeak promise from its first encode:
//
//   - the level: LAME at constant bitrates up to 192 kb/s decodes about
//     0.45 dB below its input, AAC and Opus at low bitrates lose up to a
//     few tenths on speech. Each lossy encoder is fed through a gain that
//     undoes its drift.
//   - the true peak: the decoded waveform overshoots the peaks it was
//     given (the quantisation noise adds to them). The limiter's ceiling
//     is lowered by the worst overshoot of the production's lossy outputs
//     (ProcessJob.Headroom).
//
// Both come from codecTable, measured by TestCodecTable on processed
// programme material for every lossy format, bitrate and channel count
// (mono rows also serve mono mixdowns) and checked against the installed
// ffmpeg by the same test. verifyLossy measures each output while it is
// encoded (EncodeOptions.Monitor) and encodes again only what still
// misses.

// codecRow is what one encoder configuration does to processed programme
// material.
type codecRow struct {
	format         string
	kbps, channels int
	// level is the median change of the integrated loudness, decoded less
	// input, in dB.
	level float64
	// peak is the largest rise of the true peak, decoded less input, in
	// dB, with the level compensated (the input raised by -level).
	peak float64
}

// unknownCodec stands for an encoder configuration the table lacks: no
// level compensation, and the headroom the engine used before it had a
// table, which covered every codec at podcast bitrates.
var unknownCodec = codecRow{peak: 1.0}

// maxCodecGain bounds the compensation: a larger drift means a broken
// encoder, which should be visible in the output, not hidden.
const maxCodecGain = 1.5

// lookupCodecRow returns the table's row of format at kbps for channels
// (more than two use the stereo row).
func lookupCodecRow(format string, kbps, channels int) (codecRow, bool) {
	channels = min(channels, 2)
	for _, r := range codecTable {
		if r.format == format && r.kbps == kbps && r.channels == channels {
			return r, true
		}
	}
	return unknownCodec, false
}

// codecEffect is lookupCodecRow for an output, logging what the table
// lacks. Video outputs carry AAC audio (128 kb/s by default).
func codecEffect(of production.OutputFormat, kbps, channels int) codecRow {
	format := of.Name
	if of.Type == production.TypeVideo {
		format = "aac"
		if kbps == 0 {
			kbps = 128
		}
	} else if kbps == 0 {
		kbps = of.DefaultBitrate
	}
	r, ok := lookupCodecRow(format, kbps, channels)
	if !ok {
		slog.Debug("no codec table row", "format", format, "kbps", kbps, "channels", channels)
	}
	return r
}

// lossyHeadroom is the true-peak headroom the render keeps for the lossy
// outputs of p (0 without any): the largest overshoot the table predicts
// for them. A mono mixdown output is encoded with one channel, every
// other with the production's channels (a multitrack master is stereo).
func lossyHeadroom(p *production.Production) float64 {
	channels := p.Channels
	if p.IsMultitrack || channels == 0 {
		channels = 2
	}
	h := 0.0
	for _, o := range p.OutputFiles {
		of, ok := production.LookupFormat(o.Format)
		if !ok || !(of.Lossy() || of.Type == production.TypeVideo) {
			continue
		}
		ch := channels
		if o.MonoMixdown {
			ch = 1
		}
		h = max(h, codecEffect(of, o.Bitrate, ch).peak)
	}
	return round2(h)
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
// encoder in front of sink: the table's prediction plus what verifyLossy
// measured on this programme in an earlier pass.
func (r *run) compensate(output int, of production.OutputFormat, bitrate int, f audio.Format, sink audio.Sink) audio.Sink {
	if !r.normalize {
		return sink
	}
	g := max(-maxCodecGain, min(maxCodecGain, -codecEffect(of, bitrate, f.Channels).level))
	g += r.levelFix[output]
	if math.Abs(g) < 0.01 {
		return sink
	}
	return newGainSink(g, f.Channels, sink)
}

// CodecPeakRise returns how far, in dB, the true peak of processed
// programme rises when it is encoded as format (an output format name)
// at kbps with channels and decoded again: the headroom a limiter keeps
// for such an output. Configurations the table lacks get 1 dB.
func CodecPeakRise(format string, kbps, channels int) float64 {
	r, _ := lookupCodecRow(format, kbps, channels)
	return r.peak
}
