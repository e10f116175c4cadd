package chain

import (
	"context"
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// A loudness pass cut into stages hands every block from one core to the
// other two or three times, and on two cores that traffic costs about
// half again the pass's CPU time. Cut in time instead, each core runs the
// whole chain over half of the input, and the halves' analyses are
// joined (dsp.Analyzer.Append): the pass takes about half its one-core
// time.

// splitMin is the shortest input whose loudness pass is split: below it
// the run-up of the second half costs more than it gains. (A variable,
// so that tests split short inputs.)
var splitMin = 60 * time.Second

const (
	// splitRunUp is how far ahead of its half the second half's chain
	// starts, so that its states are those of a chain that ran from the
	// start: the compressor's gain, the slowest (150 ms release at most),
	// settles to within 2e-9 in 3 s; the filters in milliseconds.
	splitRunUp = 3 * time.Second
	// splitPrime is the part of the run-up the meter's K-weighting runs
	// through (loudness.Meter.Prime).
	splitPrime = 500 * time.Millisecond
)

// splitAt returns the frame at which the loudness pass over the input
// splits in time, or 0 when it runs in stages: on one core, with
// restoration (whose spill the pass writes, and whose denoiser holds
// seconds of state), with a filter other than the high-pass, on short
// input, or on compressed input, whose first half the second half's
// decoder would spend longer decoding to reach its start than the chain
// takes over all of it.
func (p *Pipeline) splitAt() int64 {
	c := p.cfg
	if !p.cheapSkip || c.Sequential || runtime.GOMAXPROCS(0) < 2 || c.Restoration != nil || p.pr.spill != nil ||
		(c.Filter != dsp.FilterOff && c.Filter != dsp.FilterHighPass) {
		return 0
	}
	rate := int64(p.format.SampleRate)
	frames := p.in.Frames()
	if frames < int64(splitMin.Seconds())*rate {
		return 0
	}
	// On the grid of the analysis blocks (the meter's steps) and of the
	// compressor's control steps.
	unit := int64(p.in.BlockLen) * 16
	return frames / 2 / unit * unit
}

// measureSplit is measure with the pass split in time at frame split: the
// first half on the calling goroutine, the second, from a run-up before
// it, on another; their analyses joined as one analyzer's.
func (p *Pipeline) measureSplit(ctx context.Context, open audio.Opener, pr *processing, split int64) (*dsp.Analysis, error) {
	rate := int64(p.format.SampleRate)
	run := max(split-int64(splitRunUp.Seconds()*float64(rate))/16*16, 0)
	prime := min(int64(splitPrime.Seconds()*float64(rate)), split-run)
	blocks := len(p.in.Energy)
	first := int(split / int64(p.in.BlockLen))
	var hopsA, peaksA, hopsB, peaksB []hopLevel
	a, err := p.measureAnalyzer(0, blocks, &hopsA, &peaksA)
	if err != nil {
		return nil, err
	}
	b, err := p.measureAnalyzer(split, blocks-first, &hopsB, &peaksB)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	second := make(chan error, 1)
	go func() {
		err := p.measureFrom(ctx, open, pr, run, split-run-prime, split-run, -1, b)
		if err != nil {
			cancel() // the first half need not go on
		}
		second <- err
	}()
	errA := p.measureFrom(ctx, open, pr, 0, 0, 0, split, a)
	if errA != nil {
		cancel()
	}
	// The half that failed first tells why; the other one's error is then
	// only the cancellation.
	switch errB := <-second; {
	case errA != nil && (errB == nil || !errors.Is(errA, context.Canceled)):
		return nil, errA
	case errB != nil:
		return nil, errB
	}
	if err := a.Append(b); err != nil {
		return nil, err
	}
	pr.hops, pr.hopPeaks = nil, nil
	if keepsHops(p.cfg) {
		// hopsA has room for the whole: nothing is copied but hopsB.
		pr.hops, pr.hopPeaks = append(hopsA, hopsB...), append(peaksA, peaksB...)
	}
	return a.Finish(), nil
}

// measureFrom runs the chain over the input from frame start into a:
// frames [0, prime) of the chain's output are dropped (the run-up),
// [prime, from) prime the analyzer, and [from, end) are analysed (end -1:
// to the input's end).
func (p *Pipeline) measureFrom(ctx context.Context, open audio.Opener, pr *processing, start, prime, from, end int64, a *dsp.Analyzer) error {
	src, err := open(ctx)
	if err != nil {
		return err
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	buf := audio.NewBuffer(p.format.Channels, audio.DefaultBlock)
	// A WAV file seeks to the run-up's start; a stream is read up to it,
	// which costs little next to the chain (see cheapToSkip).
	there := start == 0
	if sk, ok := src.(audio.FrameSeeker); ok && !there {
		there = sk.SeekFrame(start) == nil
	}
	if !there {
		if err := feed(ctx, src, buf, start, nil); err != nil {
			return err
		}
	}
	s, err := pr.buildWith(src, nil, buildOptions{start: start})
	if err != nil {
		return err
	}
	if err := feed(ctx, s, buf, prime, nil); err != nil {
		return err
	}
	if err := feed(ctx, s, buf, from-prime, a.Prime); err != nil {
		return err
	}
	if end < 0 {
		_, err := audio.CopyBuffer(ctx, a, s, buf)
		return err
	}
	return feed(ctx, s, buf, end-from, a.Write)
}

// feed reads n frames of src and gives them to w, or drops them when w
// is nil. An input that ends before is io.EOF.
func feed(ctx context.Context, src audio.Source, buf audio.Buffer, n int64, w func(audio.Buffer) error) error {
	view := make(audio.Buffer, len(buf)) // so that no block allocates
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, err := src.Read(buf.SliceInto(view, 0, int(min(int64(buf.Frames()), n))))
		if got > 0 && w != nil {
			if err := w(buf.SliceInto(view, 0, got)); err != nil {
				return err
			}
		}
		n -= int64(got)
		if err != nil && !(errors.Is(err, io.EOF) && n == 0) {
			return err
		}
	}
	return nil
}

// cheapToSkip reports whether reading src through costs little next to
// the chain: PCM in a WAV file, or audio in memory.
func cheapToSkip(src audio.Source) bool {
	if _, ok := src.(*audio.BufferSource); ok {
		return true
	}
	d, ok := src.(interface{ Info() audio.Info })
	return ok && d.Info().Format == "wav"
}
