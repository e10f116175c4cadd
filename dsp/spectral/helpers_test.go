package spectral

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/peers"
	"github.com/audiopost/audiopost/internal/testaudio"
)

const fs = 48000

// speech returns about seconds of multi-voice phrases at 48 kHz with
// pauses, and the spans of the phrases.
func speech(t testing.TB, nPhrases int, pause float64) ([]float64, []audio.Span) {
	t.Helper()
	texts := make([]string, nPhrases)
	for i := range texts {
		texts[i] = testaudio.Sentences[i%len(testaudio.Sentences)]
	}
	return testaudio.Phrases(t, fs, texts, pause, testaudio.Voices[0], testaudio.Voices[1], testaudio.Voices[2])
}

// analyse runs the first pass over x.
func analyse(t testing.TB, x audio.Buffer, opts ProfilerOptions) *Profile {
	t.Helper()
	a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: len(x)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(x, fs)); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

// classifyVAD is the voice activity mask the product passes to the
// Profiler: dsp/classify's, run on the (noisy) input itself.
func classifyVAD(t testing.TB, x audio.Buffer) []bool {
	t.Helper()
	a, err := classify.NewClassifier(audio.Format{SampleRate: fs, Channels: len(x)}, classify.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(x, fs)); err != nil {
		t.Fatal(err)
	}
	if classify.BlockLen(fs) != BlockFrames(fs) {
		t.Fatalf("classify blocks of %d frames, spectral %d", classify.BlockLen(fs), BlockFrames(fs))
	}
	return a.Finish().Voiced
}

// denoise runs the two passes (Profiler, Denoiser) over mono x.
func denoise(t testing.TB, x []float64, opts DenoiserOptions) ([]float64, *Denoiser) {
	t.Helper()
	b := audio.Buffer{x}
	if opts.Profile == nil {
		opts.Profile = analyse(t, b, ProfilerOptions{})
	}
	d, err := NewDenoiser(audio.NewBufferSource(b, fs), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, d)
	if out.Frames() != len(x) {
		t.Fatalf("output %d frames, input %d", out.Frames(), len(x))
	}
	return out[0], d
}

// sisdr measures est against ref after aligning for any residual lag.
func sisdr(ref, est []float64) float64 {
	d := testaudio.Lag(ref, est, 64)
	return testaudio.SISDR(ref, testaudio.Shift(est, d))
}

// afftdn runs ffmpeg's afftdn over mono x, at its defaults or with args.
func afftdn(t testing.TB, x []float64, args string) []float64 {
	t.Helper()
	af := "afftdn"
	if args != "" {
		af += "=" + args
	}
	return peers.FFmpegRaw(t, x, fs, af)
}

// convolve is testaudio.Convolve by FFT (the direct form takes a minute
// for a room impulse at 48 kHz): x convolved with h, as long as x.
func convolve(x, h []float64) []float64 {
	n := 1
	for n < len(x)+len(h) {
		n *= 2
	}
	f := fourier.NewFFT(n)
	a := make([]float64, n)
	b := make([]float64, n)
	copy(a, x)
	copy(b, h)
	ca := f.Coefficients(nil, a)
	cb := f.Coefficients(nil, b)
	for i := range ca {
		ca[i] *= cb[i]
	}
	y := f.Sequence(nil, ca)
	out := make([]float64, len(x))
	for i := range out {
		out[i] = y[i] / float64(n)
	}
	return out
}

// toneAmp is the amplitude of x at hz (a single-bin DFT at the test rate
// fs, unnormalised): the perturbation tests compare it before and after.
func toneAmp(x []float64, hz float64) float64 {
	var re, im float64
	for i, v := range x {
		re += v * math.Cos(2*math.Pi*hz*float64(i)/fs)
		im += v * math.Sin(2*math.Pi*hz*float64(i)/fs)
	}
	return math.Hypot(re, im)
}
