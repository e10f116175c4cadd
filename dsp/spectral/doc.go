// Package spectral holds audiopost's restoration nodes: noise reduction,
// hum removal, reverb and breath reduction. They are streaming nodes like
// those of package dsp (each wraps an upstream audio.Source, returns the
// same samples whatever the block size, compensates its look-ahead inside
// so output frame i is input frame i, and allocates nothing per Read), and
// they are built on one short-time Fourier transform engine.
//
// Restoration needs to know the recording before it changes it, so it
// runs in two passes:
//
//	an, _ := spectral.NewProfiler(src.Format(), spectral.ProfilerOptions{VAD: vad})
//	audio.Copy(ctx, an, src)                  // pass 1: noise, SNR, hum, RT60
//	p := an.Finish()
//	d, _ := spectral.NewDenoiser(src2, spectral.DenoiserOptions{
//		Settings: spectral.Settings{Method: spectral.Static}, // amounts 0: automatic
//		Profile:  p,
//		Dehum:    &spectral.DehumOptions{}, // 0: detected base, full removal
//	})
//	// read d ...; d.Stats() then says what each segment got.
//
// The Denoiser computes one real gain per STFT bin from the mean power of
// all channels and applies it to every channel, so the stereo image is
// kept. Its methods range from Classic (Wiener-like against a fixed
// profile) through Static (speech-preserving OM-LSA against the profile)
// and Dynamic (the same with a noise tracker) to SpeechIsolation (a mask
// against babble, a music bed or noise from a small network fitted on
// real recordings, per perceptual band, with 0.55 s of look-ahead; then
// Dynamic's gain). Reverb reduction (DeverbDB) first removes the
// reverberation that weighted prediction error (WPE) predicts from the
// past frames of each bin, phase and all, then applies a late-reverb
// gain; it runs only in a room the Profile (or RT60) says is not dry.
// Dehum removes every harmonic of the
// mains frequency under 1 kHz as sinusoids that follow its drift: a
// tracker follows the fundamental's phase from all harmonics at once, and
// each harmonic's amplitude is measured along it over six seconds around
// each instant, weighted toward the pauses; Debreath attenuates breaths
// between phrases (taken as a phrase ends, or just before the next) by
// exactly the requested amount.
//
// Amounts follow the production API: 0 is automatic (full for reverb
// reduction), negative is off, 3..100 is a cap in dB. Every FFT size
// follows the sample rate (FFTSize), so any rate from 8 to 192 kHz works.
package spectral
