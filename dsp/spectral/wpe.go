package spectral

import (
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Dereverberation by weighted prediction error (WPE: Nakatani et al.,
// 2010; Yoshioka and Nakatani, 2012). In each STFT bin the late
// reverberation of a frame is predicted linearly from the frames wpeDelay
// hops and more before it, and subtracted, phase and all: unlike a gain
// on the magnitudes, this removes the tail inside a frame too, which is
// what a room with a direct-to-reverberant ratio near 0 dB needs (a
// gain mask, however well informed, cannot reach 3 dB of SI-SDR there).
// The prediction filter of a bin minimises the prediction error weighted
// by the inverse of the dry speech's variance, which is estimated from
// the error itself, so the estimate is iterated.
//
// The stage runs on its own STFT, a quarter of the Denoiser's hop (n =
// FFTSize, 75% overlap), in blocks of wpeBlockSec (wpeBlockLow where the
// reverberation reaches the direct sound: wpeBlockFor): the filters of a
// block come from the block's statistics plus those of the blocks before
// it, decayed by wpeForget per block, and are applied to that block. That
// is the look-ahead of one block, compensated inside, and a bounded
// memory whatever the length of the stream. Only the bins under wpeMaxHz
// are kept (over the history and the block, and the change the filters
// make to them); the output is the input through a delay line plus the
// inverse of that change, which the analysis and synthesis windows make
// the inverse of the changed spectra to float64 rounding (10^-14 apart
// on a 20 s stereo stream peaking at 14; TestDeverb's and
// TestDeverbWideRooms' figures to the printed 0.01 dB unmoved). At 48 kHz
// on wpeBlockLow's blocks that is 8.4 MB a channel and 5.0 MB for the
// stage, where two blocks of full spectra took 27.3 and 5.0: BenchmarkNodes/
// dynamic-deverb-room allocated 27.5 MB instead of 65.4, dynamic-deverb
// (2 s blocks) 13.3 instead of 22.7, and they ran at 38.4 and 40.9 times
// real time per CPU second instead of 33.5 and 37.1 (means of three runs
// each, interleaved); 37.9 and 41.0 against 34.0 and 37.5 when the
// frames the change leaves alone (the first block's) are transformed back
// all the same: less memory to go through, not less arithmetic. The
// filters are estimated once on the mean of the channels and applied to
// each channel's own past, so the stereo image is kept and the cost does
// not grow with the channels.
//
// The prediction reaches 24 frames (256 ms at 48 kHz) past its delay: on
// the tuning half's rooms of 0.5 to 1.0 s (static, 18 rooms) 12, 18, 24
// and 32 frames gained image-source +2.92, +2.91, +2.94 and +2.97 dB of
// SI-SDR, sox +2.53, +3.06, +3.23 and +3.35: sox's reverb rings longer
// than 128 ms at the level of the speech. The longer prediction pays for
// itself with one estimate of the dry variance instead of two (+2.89 and
// +3.20 against +2.89 and +3.21) and bins up to 5 kHz instead of 8 kHz
// (against +2.94 and +3.23), where speech and its reverberation have
// little power: the stage costs about what it did at 12 frames
// (BenchmarkNodes/dynamic-deverb).
//
// Those were chosen before the learned mask (dvmask.go); in the rooms of
// its first model (DRR 0 dB and under as the room model measures it:
// wpeLowDRR, dvMaskDRR), which all the held-out half's image-source
// clips are, each was swept again one at a time (DenoiserOptions.tune:
// TestDeverbWideRooms -realhalf tuning -dvwidesoxn 24 -dvwidevar
// all+to=0+KEY=VALUE) with the mask as it was fitted. Seed 30's 36
// image-source rooms, of which 20 the first mask serves, gained
// +3.89/+3.85 dB SI-SDR there (static, noise reduction automatic/off;
// all 36 +3.46/+3.40, sox's 39 rooms +4.53/+4.73). Blocks of 1, 3, 4, 6,
// 8 and 12 s instead of 2: +3.74/+3.69, +3.96/+3.92, +4.02/+3.98,
// +4.03/+3.99, +4.13/+4.09, +4.12/+4.08; seed 31 (16 such rooms)
// +4.20/+4.13 at 2 s, 3, 4, 6, 8 s +4.28/+4.21, +4.38/+4.31,
// +4.41/+4.34, +4.51/+4.45 (all 36 +3.51/+3.47 -> +3.64/+3.61), sox
// +0.00 to +0.02 on either seed: wpeBlockLow is 8 s. A block's filters
// come mostly from its own statistics, so the first blocks of a
// recording, which have least to learn from, predict worst, and the
// tuning half's clips last 9 s at the median (3 to 18): much of the
// gain is the start. With three of the speaker's clips one after the
// other in each room (27 s, -dvwideclips 3, seed 30; 21 rooms of the
// first mask) 4 and 8 s gained +0.05 and +0.17 dB over 2 s, where 9 s
// clips gained +0.13 and +0.24. What it costs is latency and memory (a
// block is the stage's look-ahead: 8 s; 42 MB more allocated for a
// stereo stream at 48 kHz on full spectra, 14 MB on the low bins) more
// than CPU: the same frames feed the statistics and fewer blocks are
// solved, and BenchmarkNodes/
// dynamic-deverb-room ran at 38.5 times real time per CPU second
// against 40.0 on 2 s blocks (three runs each, interleaved). The Causal
// stream keeps 2 s. The corpus's own rooms (TestRealDeverb -realfull,
// all methods and noise settings): the tuning half's image-source
// +3.97 to +4.20 -> +4.11 to +4.36 dB, sox +4.99 to +5.40 -> +5.04 to
// +5.45; the held-out half, one look after the choice, image-source
// +2.67 to +2.78 -> +2.96 to +3.06, sox +3.67 to +4.02 -> +3.90 to
// +4.25, its dry clips' worst 27.1 dB as before (TestRealDeverbDry).
//
// Over 0 dB, 4 s blocks gained sox's rooms no mask serves +0.52/+0.54
// (seed 30, 38 rooms; seed 31, 36: +0.47/+0.47) but lost the
// image-source rooms no mask serves 0.17 dB (seed 30, 6 rooms; seed 31's
// 12 +0.01/+0.00) and those of the second mask (dvMaskLongModel) 0.26
// (seed 30, 10 rooms): not taken, rooms this sweep was not about.
//
// The others, seed 30, the 20 rooms at 0 dB and under, against
// +3.89/+3.85 at 2 s blocks: wpeForget at 0.95, 0.98, 1 +0.00, +0.00,
// +0.01 (on the 27 s recordings +0.00, +0.00 at 0.97 and 1: the blocks
// before weigh little against a block's own); two and three estimates
// of the dry variance -0.02 and -0.12 dB; bins up to 3.5 and 8 kHz
// -0.05 and +0.05 (8 kHz on 8 s blocks +0.05 more on seed 30,
// +0.05/+0.04 on seed 31, under the 0.1 dB a change must gain on both);
// 16, 32, 40 frames of prediction -0.07, +0.01, -0.06 (32 on the 27 s
// recordings +0.02); the prediction from 1 and 3 hops -1.16 and -0.18
// (sox -0.12 and +0.02: it holds one room at 0 dB); the rule's kappa
// (reverbKappa) halved and doubled -0.01 and -0.01: the mask after the
// rule takes its gains as inputs, and makes up for them. Save the
// delay, none moved sox's rooms by more than 0.01 dB. On 8 s blocks,
// weighing nothing the frames whose observation is exactly 0 (the zeros
// after a stream's end, which the variance's floor weighs a million
// times a frame of speech): seed 30 and 31's first-mask rooms
// -0.01/+0.00 and -0.01/-0.01 dB, all 36 +0.00/+0.01 and +0.02/+0.01, sox +0.03/+0.05 and
// +0.02/+0.04, TestRealDeverbShort's tuning pieces +1.26 -> +1.32: left.
const (
	wpeDelay      = 2   // hops between a frame and the first one predicting it
	wpeDelayHi    = 5   // the same where the direct sound stands over its tail (wpeDelayFor)
	wpeTaps       = 24  // frames in the prediction
	wpeIters      = 1   // estimates of the dry variance
	wpeContext    = 6   // frames either side averaged for the dry variance
	wpeContextLow = 20  // the same where the reverberation reaches the direct sound (wpeContextFor)
	wpeBlockSec   = 2.0 // block length
	wpeBlockLow   = 8.0 // the same where the reverberation reaches the direct sound (wpeBlockFor)
	wpeForget     = 0.9 // weight of the previous blocks' statistics
	wpeMaxHz      = 5000
)

// wpeParams are the stage's parameters: the constants above, or those
// DenoiserOptions.tune sets in a test.
type wpeParams struct {
	delay, taps, iters, context int
	blockSec, forget, maxHz     float64
}

// wpeDefaults returns the constants as wpeParams.
func wpeDefaults() wpeParams {
	return wpeParams{delay: wpeDelay, taps: wpeTaps, iters: wpeIters, context: wpeContext,
		blockSec: wpeBlockSec, forget: wpeForget, maxHz: wpeMaxHz}
}

// wpeBlockFor returns WPE's block length (s) in a room of DRR drr dB:
// wpeBlockLow where the room model finds the reverberation at least as
// strong as the direct sound (wpeLowDRR, the rooms of the first learned
// mask), wpeBlockSec elsewhere. See the doc comment above.
func wpeBlockFor(drr float64) float64 {
	if drr <= wpeLowDRR {
		return wpeBlockLow
	}
	return wpeBlockSec
}

// wpe is the dereverberation stage: a hopRunner process on hop frames.
type wpe struct {
	ch, n, hop, bins, kmax int
	delay                  int // hops between a frame and the first one predicting it
	context                int // frames either side averaged for the dry variance
	K, iters               int // frames in the prediction, estimates of the dry variance
	forget                 float64
	L, H, W                int // block frames, history frames, W = H+L
	win, swin              []float64
	rfft
	frame, acc [][]float64
	spec       []complex128

	dF     [][]complex128 // per channel, L*kmax: the previous block's change to its low bins
	live   []bool         // per block frame: its dF is not all zero
	line   [][]float64    // per channel, latency frames: the input delayed
	slot   int            // the hop of line that comes out now
	yw     [][]complex128 // per channel, kmax*W: the low bins over history and block, per bin
	ym     []complex128   // mean of the channels, kmax*W
	dm     []complex128   // the mean's prediction error, W (one bin)
	lam    []float64      // weights, W
	avg    []float64      // scratch, L
	Rh     []complex128   // kmax*K*K: decayed statistics of the blocks before
	rh     []complex128   // kmax*K
	R, L0  []complex128   // K*K: statistics, Cholesky factor
	r, g   []complex128   // K
	v, vc  []complex128   // K: a frame's past, newest first, and its conjugate
	sub    []float64      // fraction of the prediction removed per block frame
	fill   int
	frames int64 // frames of input taken

	amount func(centre int64) float64 // fraction of the prediction to remove at a frame centre
}

func newWPE(channels, sampleRate int, p wpeParams, amount func(int64) float64) *wpe {
	n := FFTSize(sampleRate)
	hop := n / 4
	w := &wpe{ch: channels, n: n, hop: hop, bins: n/2 + 1, delay: p.delay, context: p.context,
		K: p.taps, iters: max(1, p.iters), forget: p.forget, amount: amount}
	w.kmax = min(w.bins, int(math.Ceil(p.maxHz*float64(n)/float64(sampleRate)))+1)
	w.L = max(16, int(math.Round(p.blockSec*float64(sampleRate)/float64(hop))))
	w.H = p.delay + w.K - 1
	w.W = w.H + w.L
	w.win = sqrtHann(n)
	norm := make([]float64, hop)
	for i := 0; i < n; i++ {
		norm[i%hop] += w.win[i] * w.win[i]
	}
	w.swin = make([]float64, n)
	for i := range w.swin {
		w.swin[i] = w.win[i] / norm[i%hop] / float64(n)
	}
	w.rfft = newRFFT(n)
	w.spec = make([]complex128, w.bins)
	w.frame = make([][]float64, channels)
	w.acc = make([][]float64, channels)
	w.dF = make([][]complex128, channels)
	w.line = make([][]float64, channels)
	w.yw = make([][]complex128, channels)
	for c := 0; c < channels; c++ {
		w.frame[c] = make([]float64, n)
		w.acc[c] = make([]float64, n)
		w.dF[c] = make([]complex128, w.L*w.kmax)
		w.line[c] = make([]float64, w.latency())
		w.yw[c] = make([]complex128, w.kmax*w.W)
	}
	K := w.K
	w.ym = make([]complex128, w.kmax*w.W)
	w.dm = make([]complex128, w.W)
	w.lam = make([]float64, w.W)
	w.avg = make([]float64, w.L)
	w.Rh = make([]complex128, w.kmax*K*K)
	w.rh = make([]complex128, w.kmax*K)
	w.R = make([]complex128, K*K)
	w.L0 = make([]complex128, K*K)
	w.r = make([]complex128, K)
	w.g = make([]complex128, K)
	w.v = make([]complex128, K)
	w.vc = make([]complex128, K)
	w.sub = make([]float64, w.L)
	w.live = make([]bool, w.L)
	return w
}

// latency is the delay of the output behind the input, in frames.
func (w *wpe) latency() int { return w.L*w.hop + w.n - w.hop }

// process takes hop input frames and gives hop output frames.
func (w *wpe) process(in, out audio.Buffer) {
	n, hop, t := w.n, w.hop, w.fill
	inv := complex(1/float64(w.ch), 0)
	// The centre of the frame that enters now.
	w.frames += int64(hop)
	w.sub[t] = w.amount(w.frames - int64(n/2))
	for c := range w.frame {
		f := w.frame[c]
		copy(f, f[hop:])
		copy(f[n-hop:], in[c])
		w.forward(w.spec, f, w.win)
		yw := w.yw[c]
		for k, z := range w.spec[:w.kmax] {
			yw[k*w.W+w.H+t] = z
			if c == 0 {
				w.ym[k*w.W+w.H+t] = z * inv
			} else {
				w.ym[k*w.W+w.H+t] += z * inv
			}
		}
	}
	// The frame of the previous block at the same place comes out: the
	// input delayed plus the inverse of the block's change to the frame
	// (see the doc comment above), which is zero where no frame of the
	// block had a prediction removed.
	line := w.slot * hop
	for c, a := range w.acc {
		if w.live[t] {
			copy(w.spec, w.dF[c][t*w.kmax:(t+1)*w.kmax])
			clear(w.spec[w.kmax:])
			w.inverse(a, w.spec, w.swin)
		}
		d := w.line[c][line : line+hop]
		o := out[c][:hop]
		for i, x := range d {
			o[i] = x + a[i]
		}
		copy(d, in[c])
		copy(a, a[hop:])
		clear(a[n-hop:])
	}
	if w.slot++; w.slot*hop == len(w.line[0]) {
		w.slot = 0
	}
	w.fill++
	if w.fill < w.L {
		return
	}
	w.fill = 0
	w.block()
	// The end of this block is the history of the next.
	for c := range w.yw {
		for k := 0; k < w.kmax; k++ {
			row := w.yw[c][k*w.W : (k+1)*w.W]
			copy(row, row[w.L:])
		}
	}
	for k := 0; k < w.kmax; k++ {
		row := w.ym[k*w.W : (k+1)*w.W]
		copy(row, row[w.L:])
	}
}

// block estimates each low bin's prediction filter over the block and
// writes the change it makes to the block's low bins into dF (the high
// bins pass as they are).
func (w *wpe) block() {
	K, H, W, L := w.K, w.H, w.W, w.L
	v, vc := w.v, w.vc // the frame's past, newest first, and its conjugate
	for k := 0; k < w.kmax; k++ {
		ym := w.ym[k*W : (k+1)*W]
		copy(w.dm, ym)
		Rh := w.Rh[k*K*K : (k+1)*K*K]
		rh := w.rh[k*K : (k+1)*K]
		for it := 0; it < w.iters; it++ {
			w.weights(H)
			copy(w.R, Rh)
			copy(w.r, rh)
			R, r := w.R, w.r[:K]
			for t := H; t < W; t++ {
				wt := w.lam[t]
				past := ym[t-w.delay-K+1 : t-w.delay+1] // oldest first
				for i := range v {
					p := past[K-1-i]
					v[i], vc[i] = p, complex(real(p), -imag(p))
				}
				y := ym[t]
				yc := complex(real(y), -imag(y))
				for i := range v {
					a := complex(wt*real(v[i]), wt*imag(v[i]))
					r[i] += a * yc
					// The upper triangle: R is Hermitian.
					row := R[i*K+i : i*K+K]
					c := vc[i:]
					c = c[:len(row)]
					for j := range row {
						row[j] += a * c[j]
					}
				}
			}
			if it == w.iters-1 {
				for i := range Rh {
					Rh[i] = complex(w.forget, 0) * R[i]
				}
				for i := range rh {
					rh[i] = complex(w.forget, 0) * r[i]
				}
			}
			if !w.solve() {
				clear(w.g)
			}
			if it == w.iters-1 {
				break // the mean's error only weighs the next iteration
			}
			for t := H; t < W; t++ {
				w.dm[t] = ym[t] - w.predict(ym, t)
			}
		}
		// Apply the filter to every channel's own past.
		for c := range w.yw {
			yw := w.yw[c][k*W : (k+1)*W]
			dF := w.dF[c]
			for t := 0; t < L; t++ {
				if s := w.sub[t]; s > 0 {
					dF[t*w.kmax+k] = -complex(s, 0) * w.predict(yw, H+t)
				} else {
					dF[t*w.kmax+k] = 0
				}
			}
		}
	}
	for t, s := range w.sub[:L] {
		w.live[t] = s > 0
	}
}

// predict returns the prediction g^H y of frame t from its past.
func (w *wpe) predict(y []complex128, t int) complex128 {
	past := y[t-w.delay-w.K+1 : t-w.delay+1]
	var p complex128
	for i, g := range w.g {
		v := past[w.K-1-i]
		p += complex(real(g), -imag(g)) * v
	}
	return p
}

// weights sets lam[H:] to the inverse of the dry variance of the block's
// frames: the prediction error's power averaged over w.context frames
// either side (within the block), floored.
func (w *wpe) weights(H int) {
	W, lam, avg := w.W, w.lam, w.avg
	for t := H; t < W; t++ {
		d := w.dm[t]
		lam[t] = real(d)*real(d) + imag(d)*imag(d)
	}
	// Moving average by a running sum.
	var s, mx float64
	lo, hi := H, H
	for t := H; t < W; t++ {
		for hi < min(W, t+w.context+1) {
			s += lam[hi]
			hi++
		}
		for lo < t-w.context {
			s -= lam[lo]
			lo++
		}
		avg[t-H] = s / float64(hi-lo)
		mx = max(mx, avg[t-H])
	}
	floor := 1e-6*mx + 1e-30
	for t, v := range avg {
		lam[H+t] = 1 / max(v, floor)
	}
}

// solve sets g to R^-1 r by a Cholesky factorization of the Hermitian R
// (upper triangle filled), loaded on its diagonal; false when R is empty.
func (w *wpe) solve() bool {
	K := w.K
	R, L := w.R, w.L0
	var tr float64
	for i := 0; i < K; i++ {
		tr += real(R[i*K+i])
	}
	if !(tr > 1e-300) {
		return false
	}
	load := 1e-6*tr/float64(K) + 1e-300
	// L lower triangular with R = L L^H; R[i][j] for j < i is conj(R[j][i]).
	for i := 0; i < K; i++ {
		for j := 0; j <= i; j++ {
			a := R[j*K+i]
			s := complex(real(a), -imag(a))
			if i == j {
				s = complex(real(R[i*K+i])+load, 0)
			}
			for m := 0; m < j; m++ {
				b := L[j*K+m]
				s -= L[i*K+m] * complex(real(b), -imag(b))
			}
			if i == j {
				if real(s) <= 0 {
					return false
				}
				L[i*K+i] = complex(math.Sqrt(real(s)), 0)
			} else {
				L[i*K+j] = s / L[j*K+j]
			}
		}
	}
	g := w.g
	for i := 0; i < K; i++ {
		s := w.r[i]
		for m := 0; m < i; m++ {
			s -= L[i*K+m] * g[m]
		}
		g[i] = s / L[i*K+i]
	}
	for i := K - 1; i >= 0; i-- {
		s := g[i]
		for m := i + 1; m < K; m++ {
			b := L[m*K+i]
			s -= complex(real(b), -imag(b)) * g[m]
		}
		g[i] = s / L[i*K+i]
	}
	return true
}
