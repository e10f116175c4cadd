package live

import (
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// PeakRelease is the peak stage's release time constant in seconds: the
// gain is back within a pitch period of the peak that lowered it.
const PeakRelease = 0.005

// peakAttack is the peak stage's look-ahead and attack in seconds.
const peakAttack = 0.001

// PeakStage lowers the short peaks of a voice to a ceiling ahead of the
// true-peak limiter, so that the limiter rarely acts. A voice whose
// peaks stand far above its loudness (vocoded speech, a glottal pulse
// per period) otherwise has its level held down by the limiter's 80 ms
// release between pitch pulses, and loses loudness that the leveler can
// only give back by driving it into the limiter harder. The stage's gain
// is the least of what the sample peaks of the next millisecond allow
// (all channels together), averaged over a millisecond (the attack) and
// released within 5 ms: it dips at each pulse and is back at unity
// between them. Lowering each pitch pulse of a periodic voice alike
// changes the shape of its period, not its pitch, so what it adds lies
// on the voice's own harmonics. Measured on the tuning half's codec2
// voices brought to -16 LUFS, against dsp.Limiter alone at -1 dBTP: the
// loudness taken 0.82 LU instead of 1.21 (cross) and 0.79 instead of
// 1.17 (hts1), SI-SDR 18.5 and 20.1 dB instead of 17.0 and 19.2; on a
// plain speaker (asterisk's june) 0.03 LU instead of 0.06 and 35.1 dB
// instead of 31.8. The stage works on sample peaks: the limiter after
// it holds the true peak.
//
// Output frame i is input frame i times its gain (the look-ahead is
// compensated inside), and the result does not depend on block sizes.
type PeakStage struct {
	src  audio.Source
	ch   int
	ceil float64
	rel  float64

	ring [][]float64 // input frames, by frame & mask
	mask int
	scr  audio.Buffer
	view audio.Buffer

	// Sliding minimum of the required gains over the look-ahead: a
	// monotonic queue of (frame, gain), by position & mask.
	qAt   []int64
	qG    []float64
	qHead int
	qLen  int

	g      float64   // released gain
	avg    []float64 // the last la+1 released gains, a ring
	avgSum float64
	below  int // how many of them are under 1

	lookahead // la: the look-ahead and attack in frames
}

// NewPeakStage returns src with its sample peaks held under ceilingDB
// dBFS.
func NewPeakStage(src audio.Source, ceilingDB float64) (*PeakStage, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if !(ceilingDB <= 0 && ceilingDB >= -40) {
		return nil, fmt.Errorf("%w: peak ceiling %v dBFS", dsp.ErrInvalidParameter, ceilingDB)
	}
	p := &PeakStage{src: src, ch: f.Channels, ceil: dsp.DBToGain(ceilingDB), g: 1}
	p.la = max(1, int(math.Round(peakAttack*float64(f.SampleRate))))
	p.rel = 1 - math.Exp(-1/(PeakRelease*float64(f.SampleRate)))
	size := 1
	for size < p.la+peakBlock+1 {
		size *= 2
	}
	p.mask = size - 1
	p.ring = make([][]float64, f.Channels)
	for c := range p.ring {
		p.ring[c] = make([]float64, size)
	}
	p.qAt, p.qG = make([]int64, size), make([]float64, size)
	p.avg = make([]float64, p.la+1)
	for i := range p.avg {
		p.avg[i] = 1
	}
	p.avgSum = float64(len(p.avg))
	p.scr = audio.NewBuffer(f.Channels, peakBlock)
	p.view = make(audio.Buffer, f.Channels)
	return p, nil
}

// peakBlock is the most the stage reads from upstream at once.
const peakBlock = 512

// Format implements audio.Source.
func (p *PeakStage) Format() audio.Format { return p.src.Format() }

// Latency is the look-ahead in frames.
func (p *PeakStage) Latency() int { return p.la }

// Close closes the upstream source.
func (p *PeakStage) Close() error {
	if c, ok := p.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Read implements audio.Source. It returns as soon as any frame is ready.
func (p *PeakStage) Read(dst audio.Buffer) (int, error) {
	if len(dst) != p.ch {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), p.ch)
	}
	n, err := p.ready(dst.Frames(), p.fill)
	if n == 0 {
		return 0, err
	}
	for i := 0; i < n; i++ {
		j := p.out + int64(i)
		if p.qLen == 0 && p.below == 0 && p.g == 1 {
			// No frame read so far needs lowering and the gain is back
			// at unity: the rest passes as it is.
			for c := range dst {
				at := int(j) & p.mask
				k := copy(dst[c][i:n], p.ring[c][at:])
				copy(dst[c][i+k:n], p.ring[c])
			}
			break
		}
		g := p.gain(j)
		for c := range dst {
			dst[c][i] = p.ring[c][int(j)&p.mask] * g
		}
	}
	p.out += int64(n)
	return n, nil
}

// fill reads the next frames from upstream into the delay line and the
// queue of required gains.
func (p *PeakStage) fill() {
	room := len(p.ring[0]) - int(p.in-p.out) - 1
	m, err := p.src.Read(p.scr.SliceInto(p.view, 0, min(peakBlock, room)))
	if m > 0 {
		for i := range m {
			at := int(p.in) & p.mask
			pk := 0.0
			for c := range p.ring {
				v := p.scr[c][i]
				p.ring[c][at] = v
				pk = max(pk, math.Abs(v))
			}
			if pk > p.ceil {
				// Drop the queue's tail that is no lower than req: it
				// can no longer be a window's least. Frames under the
				// ceiling are not queued (an empty window allows 1).
				req := p.ceil / pk
				for p.qLen > 0 && p.qG[(p.qHead+p.qLen-1)&p.mask] >= req {
					p.qLen--
				}
				k := (p.qHead + p.qLen) & p.mask
				p.qAt[k], p.qG[k] = p.in, req
				p.qLen++
			}
			p.in++
		}
		return
	}
	p.ended(err)
}

// gain returns the gain of frame j, called once per frame in order: the
// least required gain of frames j..j+la, released, averaged over the
// la+1 frames up to j (each of which saw frame j's requirement, so the
// average is under it).
func (p *PeakStage) gain(j int64) float64 {
	for p.qLen > 0 && p.qAt[p.qHead] < j {
		p.qHead = (p.qHead + 1) & p.mask
		p.qLen--
	}
	hold := 1.0
	if p.qLen > 0 {
		hold = p.qG[p.qHead]
	}
	if hold < p.g {
		p.g = hold
	} else if p.g < 1 {
		p.g += (hold - p.g) * p.rel
		if p.g > 1-1e-7 {
			// End the release: unity passes the quiet parts bit-exact.
			p.g = 1
		}
	}
	k := int(j % int64(len(p.avg)))
	if p.avg[k] < 1 {
		p.below--
	}
	if p.g < 1 {
		p.below++
	}
	p.avgSum += p.g - p.avg[k]
	p.avg[k] = p.g
	if p.below == 0 {
		// Recomputed rather than kept: the running sum drifts.
		p.avgSum = float64(len(p.avg))
		return 1
	}
	return p.avgSum / float64(len(p.avg))
}
