package classify

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// BlockSeconds is the length of the blocks Result labels: 100 ms, the grid
// of the dsp analysis, the leveler and the loudness meter, so that a label
// belongs to exactly one of their blocks. A block is round(sampleRate *
// BlockSeconds) frames long.
const BlockSeconds = 0.1

// SubBlocks is how many sub-blocks (10 ms) a block is divided into: the
// resolution of Result.Activity and of every cut.
const SubBlocks = 10

// BlockLen returns the length of a block in frames at sampleRate.
func BlockLen(sampleRate int) int {
	return max(1, int(math.Round(float64(sampleRate)*BlockSeconds)))
}

// Mode is the speech/music classifier setting (the API's msclassifier).
type Mode int

const (
	// Auto classifies every part of the recording (msclassifier "on").
	Auto Mode = iota
	// SpeechOnly labels everything that is not silence as speech.
	SpeechOnly
	// MusicOnly labels everything that is not silence as music.
	MusicOnly
)

// String returns the API's name of the mode.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "on"
	case SpeechOnly:
		return "speech"
	case MusicOnly:
		return "music"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads the API's msclassifier value ("on", "speech", "music";
// empty means "on").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "on":
		return Auto, nil
	case "speech":
		return SpeechOnly, nil
	case "music":
		return MusicOnly, nil
	}
	return Auto, fmt.Errorf("classify: unknown msclassifier %q", s)
}

// Analyzer is an audio.Sink that measures, in one pass over a recording,
// what voice activity, the speech/music classifier and the cut detectors
// need: a few numbers per 10 ms sub-block (14 bytes, 5 MB per hour of
// audio, whatever the sample rate and channel count). Finish turns them
// into a Result.
//
// The input is mixed to mono and, from 24 kHz up, low-passed and
// decimated by an integer factor to about 16 kHz: everything the features look at lies below 7 kHz, and
// the decimation is what keeps the analysis far faster than real time.
type Analyzer struct {
	format   audio.Format
	mode     Mode
	blockLen int
	dec      int // decimation factor
	lp       [2]biquad

	ring  []float64 // decimated samples, ring of power-of-two length
	nDec  int64     // decimated samples produced
	phase int       // input frames until the next decimated sample

	inPos  int64 // input frames consumed
	subEnd int64 // end of the current sub-block, in input frames
	subAcc float64
	subN   int

	spec   *spectral
	frame  []float64          // one analysis window, copied out of the ring
	nSub   int                // sub-blocks ended
	levels [levelRing]float32 // levels of the sub-blocks ended and not yet analysed
	feats  []packed
	bflux  []float32 // spectral change per block (spectral.endBlock)
	done   bool
	due    int64     // decimated samples at which spectralDue may have work
	mono   []float64 // Write's mono mix
}

// levelRing holds the levels of sub-blocks that have ended but whose
// analysis window has not: the window reaches 20 ms past a sub-block's
// centre, two or three sub-blocks.
const levelRing = 16

// NewAnalyzer returns an Analyzer for a stream of format f classified in
// mode m.
func NewAnalyzer(f audio.Format, m Mode) (*Analyzer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if m < Auto || m > MusicOnly {
		return nil, fmt.Errorf("classify: invalid mode %d", int(m))
	}
	a := &Analyzer{format: f, mode: m, blockLen: BlockLen(f.SampleRate)}
	a.dec = max(1, int(math.Round(float64(f.SampleRate)/16000)))
	fs := float64(f.SampleRate)
	fsd := fs / float64(a.dec)
	if a.dec > 1 {
		// Fourth-order Butterworth at 0.45 of the decimated rate.
		a.lp[0] = lowPass(fs, 0.45*fsd, 0.5412)
		a.lp[1] = lowPass(fs, 0.45*fsd, 1.3066)
	}
	a.spec = newSpectral(fsd)
	n := 1
	for n < a.spec.nw+2*a.dec+64 {
		n *= 2
	}
	a.ring = make([]float64, n)
	a.frame = make([]float64, a.spec.nw)
	a.subEnd = a.subStart(1)
	return a, nil
}

// subStart returns the first input frame of sub-block j.
func (a *Analyzer) subStart(j int) int64 { return subStart(a.blockLen, j) }

// subStart returns the first frame of sub-block j with blocks of
// blockLen frames: SubBlocks per block, as equal as whole frames allow.
func subStart(blockLen, j int) int64 {
	b, k := j/SubBlocks, j%SubBlocks
	return int64(b)*int64(blockLen) + int64(k*blockLen/SubBlocks)
}

// Write implements audio.Sink.
func (a *Analyzer) Write(b audio.Buffer) error {
	if a.done {
		return fmt.Errorf("classify: Write after Finish")
	}
	if len(b) != a.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(b), a.format.Channels)
	}
	n := b.Frames()
	if cap(a.mono) < n {
		a.mono = make([]float64, n)
	}
	mono := a.mono[:n]
	inv := 1 / float64(len(b))
	if len(b) == 2 {
		l, r := b[0][:n], b[1][:n]
		for i := range mono {
			var x float64
			x += l[i]
			x += r[i]
			mono[i] = x * inv
		}
	} else {
		for i := range mono {
			var x float64
			for c := range b {
				x += b[c][i]
			}
			mono[i] = x * inv
		}
	}
	a.consume(mono)
	return nil
}

// consume takes mono input frames: the sub-block levels, the decimation
// and the analysis of every window that completes, with the state in
// locals, calling out only when a sub-block ends or a window may be
// complete.
func (a *Analyzer) consume(mono []float64) {
	lp0, lp1 := a.lp[0], a.lp[1]
	dec := a.dec
	ring, mask := a.ring, int64(len(a.ring)-1)
	subAcc, subN, inPos, subEnd := a.subAcc, a.subN, a.inPos, a.subEnd
	phase, nDec, due := a.phase, a.nDec, a.due
	for _, x := range mono {
		subAcc += x * x
		subN++
		inPos++
		if inPos == subEnd {
			a.subAcc, a.subN, a.inPos = subAcc, subN, inPos
			a.endSub()
			subAcc, subN, subEnd = a.subAcc, a.subN, a.subEnd
		}
		if dec > 1 {
			x = lp0.run(x)
			x = lp1.run(x)
		}
		phase--
		if phase <= 0 {
			phase = dec
			ring[nDec&mask] = x
			nDec++
			if nDec >= due {
				a.nDec = nDec
				a.spectralDue()
				due = a.due
			}
		}
	}
	a.lp[0], a.lp[1] = lp0, lp1
	a.subAcc, a.subN, a.inPos, a.subEnd = subAcc, subN, inPos, subEnd
	a.phase, a.nDec = phase, nDec
}

func (a *Analyzer) endSub() {
	ms := 0.0
	if a.subN > 0 {
		ms = a.subAcc / float64(a.subN)
	}
	a.levels[a.nSub%levelRing] = float32(toDB(ms))
	a.nSub++
	a.subAcc, a.subN = 0, 0
	a.subEnd = a.subStart(a.nSub + 1)
}

// window returns the decimated index range [lo, lo+nw) of the analysis
// window of sub-block j: centred on the sub-block.
func (a *Analyzer) windowStart(j int) int64 {
	c := (a.subStart(j) + a.subStart(j+1)) / 2
	return c/int64(a.dec) - int64(a.spec.nw/2)
}

// spectralDue analyses every sub-block whose window is complete, and
// sets due to the decimated sample count that completes the next one.
func (a *Analyzer) spectralDue() {
	for {
		lo := a.windowStart(len(a.feats))
		if a.due = lo + int64(a.spec.nw); len(a.feats) >= a.nSub || a.due > a.nDec {
			return
		}
		mask := int64(len(a.ring) - 1)
		for i := range a.frame {
			k := lo + int64(i)
			if k < 0 {
				a.frame[i] = 0
			} else {
				a.frame[i] = a.ring[k&mask]
			}
		}
		f := feature{level: a.levels[len(a.feats)%levelRing]}
		a.spec.analyse(a.frame, &f)
		a.feats = append(a.feats, f.pack())
		if len(a.feats)%SubBlocks == 0 {
			a.bflux = append(a.bflux, a.spec.endBlock())
		}
	}
}

// Finish completes the analysis and classifies the recording. The
// Analyzer must not be written to afterwards.
func (a *Analyzer) Finish() *Result {
	if !a.done {
		a.done = true
		if a.subN > 0 {
			a.endSub()
		}
		// Flush the windows that reach past the end with silence.
		for len(a.feats) < a.nSub {
			a.ring[a.nDec&int64(len(a.ring)-1)] = 0
			a.nDec++
			a.spectralDue()
		}
	}
	if len(a.bflux)*SubBlocks < len(a.feats) {
		a.bflux = append(a.bflux, a.spec.endBlock())
	}
	return newResult(a.format.SampleRate, a.inPos, a.blockLen, a.mode, a.feats, a.bflux)
}

// biquad is a second-order section in transposed direct form II.
type biquad struct {
	b0, b1, b2, a1, a2 float64
	z1, z2             float64
}

func lowPass(fs, f0, q float64) biquad {
	w := 2 * math.Pi * f0 / fs
	c, s := math.Cos(w), math.Sin(w)
	alpha := s / (2 * q)
	a0 := 1 + alpha
	return biquad{b0: (1 - c) / 2 / a0, b1: (1 - c) / a0, b2: (1 - c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0}
}

func (f *biquad) run(x float64) float64 {
	y := f.b0*x + f.z1
	f.z1 = f.b1*x - f.a1*y + f.z2
	f.z2 = f.b2*x - f.a2*y
	return y
}
