// Package dsporacle holds no code: its tests check audiopost's spectral
// analysis against github.com/mjibson/go-dsp, an implementation written
// independently of gonum (whose FFT the dsp package uses) and of audiopost.
//
// They compare gonum's real FFT with go-dsp's FFT, the analysis window of
// dsp.Analyzer with go-dsp's Hann window, and the long-term spectrum of
// dsp.Analysis.FineSpectrum with go-dsp's Welch estimate
// (spectral.Pwelch). go-dsp is a test-only dependency: BenchmarkFFT shows
// why the analysis itself uses gonum.
package dsporacle
