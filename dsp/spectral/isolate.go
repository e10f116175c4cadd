package spectral

import "github.com/audiopost/audiopost/audio"

// Speech isolation's own stage: a mask against the background a voice is
// heard over (babble, a music bed, a noise), from a small network fitted
// on the tuning half of the real-recording corpus (isonet.go says what it
// sees, isomodel.go how it was fitted). Each band's predicted gain is
// smoothed over three frames, spread over the bins and held above the
// segment's floor.
//
// The stage runs before the Denoiser's own STFT, on one of its own (n =
// FFTSize, 75% overlap, so that the mask changes smoothly), and looks
// isoSpanSec plus a hop ahead, the span of the network's percentiles: a
// latency of about 0.55 s, compensated inside.
//
// Before the network the mask was hand-made: the power subtraction of a
// low percentile of each bin's power over a second around the frame.
// Tuning half (12 mixes of real speech over six real talkers' babble or
// music at 5, 10 and 15 dB SNR; the oracle ideal ratio mask on the same
// STFT gains +9.4 dB SI-SDR on babble, +10.7 on music) it gained +0.9/+1.9
// dB (held out +1.33/+2.11). A harmonic comb on the dominant pitch lost
// on music, whose sung vocals and guitar carry the strongest pitch, and
// the same gain against the true interferer's mean power over the same
// second gained only +2.7/+3.9 dB: a background known only from what
// outlasts a talker's syllables stays well under the issue's +6.
// isoSpanSec is the span of the network's percentiles, either side.
const isoSpanSec = 0.5

// isoFullDB is the amount from which the mask applies in full; under it
// its depth is isoDepth's share.
const isoFullDB = 20

// isoDepth is the weight of the mask in a segment of amount applied dB:
// applied/isoFullDB, at most 1. An amount of 6 dB or less is what the
// automatic amount chooses on a recording without noise, whose
// background is its own hiss or near-silence: there the network took
// weak consonants, decays and fades down to the segment's floor (tuning
// half, 52 clips without noise, told 6 dB: 11.0 dB SI-SDR at worst, 11
// clips under 22). Scaled, 20.9 at worst (klettres/nds#96, 25.3 under
// Dynamic at 6 dB) and 23.2 next, the rest 26.3 or more, while the
// babble and music mixes, whose automatic amounts are 18 to 32 dB, keep
// their gains (+1.87/+2.85 dB against +1.86/+2.85 on the tuning half). A
// guard that left every band 10-20 dB above its low percentile over the
// span (isoFront's lo) alone moved the worst of those clips by under
// 0.5 dB: the cells the network took were not far above it.
func isoDepth(applied float64) float64 { return min(1, applied/isoFullDB) }

// isolator is the stage: a hopRunner process on hop frames.
type isolator struct {
	ch, n, hop, bins int
	L, R             int // look-ahead in hops; ring length
	win, swin        []float64
	rfft
	front   *isoFront
	fine    *isoFine // the per-bin stage under isoFineTopHz (isofine.go)
	fineNet *isoFineNet
	isoGains
	frame, acc [][]float64
	spec       [][]complex128 // ring: slot*ch+c, bins each
	pow        []float64
	band       [][]float64 // ring: the network's band gains
	sm         []float64   // the smoothed band gains of the frame out
	g          []float64
	next       int64 // index of the frame that enters next
	amount     func(centre int64) (weight, floor float64)
	wt         []float64 // ring: weight of the isolation per frame
	fl         []float64 // ring: floor gain per frame
	// mask, in tests, may replace the per-bin gains of frame o (the
	// network's, smoothed and spread) before the weight and floor apply.
	mask func(o int64, g []float64)
}

// newIsolator returns the stage; amount gives, for a frame centre, how
// much of the isolation applies (0 outside speech_isolation's segments,
// crossfaded at their ends) and its floor gain.
func newIsolator(channels, sampleRate int, amount func(int64) (float64, float64)) *isolator {
	n := FFTSize(sampleRate)
	hop := n / 4
	s := &isolator{ch: channels, n: n, hop: hop, bins: n/2 + 1, amount: amount}
	s.win = sqrtHann(n)
	s.swin = synthesisWindow(s.win, hop)
	s.rfft = newRFFT(n)
	s.front = newIsoFront(sampleRate, n, hop, s.win)
	// Frame o comes out once the gains of o+1 are known, which needs the
	// W frames after it.
	s.L = s.front.W + 1
	s.R = s.L + 2
	s.fine, s.fineNet = newIsoFine(sampleRate, n, s.L), &isoFineModel
	s.recNets, s.recAvg = isoRecModels, isoRecAvg
	s.frame = make([][]float64, channels)
	s.acc = make([][]float64, channels)
	for c := range s.frame {
		s.frame[c] = make([]float64, n)
		s.acc[c] = make([]float64, n)
	}
	s.spec = make([][]complex128, s.R*channels)
	for i := range s.spec {
		s.spec[i] = make([]complex128, s.bins)
	}
	s.pow = make([]float64, s.bins)
	s.band = make([][]float64, s.R)
	for i := range s.band {
		s.band[i] = make([]float64, isoBands)
	}
	s.sm = make([]float64, isoBands)
	s.wt = make([]float64, s.R)
	s.fl = make([]float64, s.R)
	s.g = make([]float64, s.bins)
	return s
}

// latency is the delay of the output behind the input, in frames.
func (s *isolator) latency() int { return s.L*s.hop + s.n - s.hop }

// process takes hop input frames and gives hop output frames.
func (s *isolator) process(in, out audio.Buffer) {
	f := s.next
	s.next++
	R := int64(s.R)
	slot := int(f % R)
	// The centre of the frame that enters now, in frames of the stream.
	centre := (f+1)*int64(s.hop) - int64(s.n/2)
	s.wt[slot], s.fl[slot] = s.amount(centre)
	p := s.pow
	clear(p)
	for c := range s.frame {
		fr := s.frame[c]
		copy(fr, fr[s.hop:])
		copy(fr[s.n-s.hop:], in[c])
		s.forwardPow(s.spec[slot*s.ch+c], p, fr, s.win)
	}
	for k := range p {
		p[k] /= float64(s.ch)
	}
	s.front.push(p)
	s.fine.push(p, s.front)
	if q := f - int64(s.front.W); q >= 0 {
		s.bandGains(s.front, q, s.band[int(q%R)])
	}
	o := f - int64(s.L)
	if o < 0 {
		for c := range out {
			clear(out[c])
		}
		return
	}
	oslot := int(o % R)
	g := s.g
	w, fl := s.wt[oslot], s.fl[oslot]
	if w <= 0 {
		for k := range g {
			g[k] = 1
		}
	} else {
		// A quarter of each neighbour's gain, half the frame's own (the
		// frame before the first counts as the first).
		b0, b1, b2 := s.band[int(max(o-1, 0)%R)], s.band[oslot], s.band[int((o+1)%R)]
		for i := range s.sm {
			s.sm[i] = 0.25*b0[i] + 0.5*b1[i] + 0.25*b2[i]
		}
		s.front.bands.spread(s.sm, g)
		if s.fineNet != nil {
			s.fine.refine(s.fineNet, o, g)
		}
		if s.mask != nil {
			s.mask(o, g)
		}
		for k, v := range g {
			g[k] = 1 - w*(1-max(v, fl))
		}
	}
	for c, a := range s.acc {
		s.inverseGain(a, s.spec[oslot*s.ch+c], g, s.swin)
		copy(out[c], a[:s.hop])
		copy(a, a[s.hop:])
		clear(a[s.n-s.hop:])
	}
}

// isoGains gives a stream's band gains, frame by frame: the band
// network's (isoModel) alone, or with recNets the mean of those of the
// networks with a state (isorec.go) averaged with them. The isolator and
// the per-bin stage's fit (isofinefit_test.go) take them from here, so
// that the stage is fitted on the gains the product serves.
type isoGains struct {
	recs    []*isoRec // the band gains' states (isorec.go), of recNets
	recNets []*isoRecNet
	// recAvg, if not 0, is the weight of the band network's own gains
	// (isoModel's) in the band gains, the rest the mean of recNets'.
	recAvg          float64
	bandTmp, recTmp []float64
}

// bandGains writes frame q's band gains to b; front must hold the
// frames up to q+front.W, and q must follow the frame of the last call.
func (s *isoGains) bandGains(front *isoFront, q int64, b []float64) {
	if len(s.recNets) == 0 {
		front.gains(q, b)
		return
	}
	if len(s.recs) != len(s.recNets) {
		s.recs = make([]*isoRec, len(s.recNets))
	}
	for i, m := range s.recNets {
		if s.recs[i] == nil || s.recs[i].m != m {
			s.recs[i] = newIsoRec(m)
		}
	}
	front.features(q, front.feat)
	s.recs[0].step(front.feat, b)
	if len(s.recs) > 1 {
		if s.recTmp == nil {
			s.recTmp = make([]float64, isoBands)
		}
		for _, r := range s.recs[1:] {
			r.step(front.feat, s.recTmp)
			for i, v := range s.recTmp {
				b[i] += v
			}
		}
		for i := range b[:isoBands] {
			b[i] /= float64(len(s.recs))
		}
	}
	if s.recAvg > 0 {
		if s.bandTmp == nil {
			s.bandTmp = make([]float64, isoBands)
		}
		isoModel.forwardBatch(front.feat, &front.batch, s.bandTmp)
		for i, v := range s.bandTmp {
			b[i] = (1-s.recAvg)*b[i] + s.recAvg*v
		}
	}
}
