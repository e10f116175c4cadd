// Package loudness measures programme loudness as ITU-R BS.1770-5 and EBU
// R 128 define it: momentary (400 ms), short-term (3 s) and gated
// integrated loudness, loudness range (EBU Tech 3342), sample peak and true
// peak (BS.1770 Annex 2), plus the level statistics audiopost reports.
//
// A Meter is an audio.Sink: write a stream to it block by block and read a
// Result at any time. It works at any sample rate from 8 to 192 kHz (the
// K-weighting filters are derived from their analog prototypes for the
// rate), with any layout of up to 8 channels (LFE excluded, surrounds
// +1.5 dB) and in a fixed amount of memory however long the programme:
// gating uses histograms of 0.01 LU bins that keep exact energy sums, not a
// list of blocks.
//
// # Definitions
//
// Integrated (method "program") is the BS.1770-5 gated loudness: 400 ms
// blocks every 100 ms, absolute gate -70 LUFS, relative gate -10 LU.
//
// Dialog (method "dialog") is the same gated measure restricted to the
// blocks whose midpoint falls inside Options.Speech, the ranges a speech
// classifier marked.
//
// RMS (method "rms") is the plain RMS level in dBFS of all channels that
// count for loudness (LFE excluded), without frequency weighting, channel
// weights or gating: 10*log10 of the mean square over frames and channels,
// so a full-scale sine reads -3.01 dBFS. It is kept unweighted and ungated
// on purpose: it is the classic level that other tools (sox stats, DAW RMS
// meters) call RMS, and a user who picks it over "program" asks for exactly
// that difference.
//
// NoiseLevel is the 10th percentile, and SignalLevel the 95th percentile,
// of the K-weighted loudness of all 400 ms blocks (every 100 ms) whose
// loudness is above -120 LUFS; blocks of digital silence are not a noise
// floor and are left out. In a recording that is quiet (pauses, room tone)
// at least 10% of the time, NoiseLevel is the loudness of the background;
// SignalLevel is the loudness of the loud foreground passages. SNR is
// SignalLevel - NoiseLevel in dB. All three are -Inf when no block is above
// -120 LUFS.
//
// LRA follows EBU Tech 3342: short-term loudness sampled every 100 ms,
// absolute gate -70 LUFS, relative gate -20 LU, 10th to 95th percentile.
//
// MaxMomentary and MaxShortTerm are evaluated every 10 ms, so a burst is
// caught within 5 ms of its best alignment (Tech 3341 cases 10 and 13).
//
// Readings that are undefined — silence, input shorter than the window, a
// measurement the Mode did not ask for — are -Inf, never NaN;
// Result.Err says why the integrated loudness is undefined.
package loudness
