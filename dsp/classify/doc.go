// Package classify tells what a recording holds, moment by moment, and
// removes what should go: voice activity, speech/music segments, and the
// silence, filler, cough and music cutters of automatic post-production.
//
// It works in two passes, like the rest of the dsp graph. An Classifier is
// an audio.Sink written once with the whole recording; it keeps a few
// bytes per 10 ms (5 MB per hour, whatever the rate and channel count)
// and Finish turns them into a Result:
//
//   - Labels and Voiced per 100 ms block, on the grid of the dsp
//     analysis, the leveler and the loudness meter (BlockLen frames);
//   - Activity per 10 ms sub-block, for cuts that must not clip a word;
//   - Segments of speech and music covering the whole recording;
//   - Cuts, the cut list of the enabled detectors.
//
// A Cutter is the node that applies a cut list: it removes the cuts with
// a crossfade at each join, or fades them to silence, or passes the audio
// through for export_uncut_audio while WriteAudacityLabels and WriteEDL
// write the list. A TimeMap moves chapters, denoise segments and speech
// timings with the cuts.
//
//	a, _ := classify.NewClassifier(src.Format(), classify.Auto)
//	audio.Copy(ctx, a, src)                    // first pass
//	res := a.Finish()
//	cuts := res.Cuts(classify.CutOptions{Silence: true, Filler: true})
//	out, _ := classify.NewCutter(src2, cuts, classify.CutterOptions{Fade: classify.DefaultFade})
//	tm, _ := classify.NewTimeMap(cuts, res.SampleRate) // chapters move with the cuts
//
// How it decides. The input is mixed to mono and decimated to about
// 16 kHz; every 10 ms a 40 ms window gives the speech-band level (150 Hz
// to 4 kHz), spectral flatness, flux and centroid, and the periodicity
// and pitch of the whitened spectrum. Voice activity compares the level
// with a noise floor found by minimum statistics over blocks that sound
// like background (noise-like, or steady like hum), so that music without
// pauses never becomes its own floor; tonal, changing sound (a vowel in
// noise) counts at a smaller margin. Speech and music are told apart
// over three seconds at a time by a small model (a linear part and eight
// tanh units, fitted on the tuning half of the real-recording corpus by
// TestFitSpeechMusic -fit) that weighs how often the sound dips 12 dB
// below its loud parts (syllables, stops: speech), how steady the pitch
// is and how long voiced runs last (notes: music), flux, flatness, level
// spread and the regularity of onsets, and the same over the loud parts
// alone (a voice over a music bed); a two-state Viterbi path with a
// switching cost turns that evidence into segments that do not flip
// inside a sentence, and each switch moves where the second on each side
// looks most like what the path says lies there, then onto the music's
// edge of a pause next to it; where a second model, fitted on windows
// across switches to read how much music a window holds (TestFitSwitchEdge
// -fitedge), places the switch more than 0.3 s from there, its place is
// taken. Fillers are islands of activity
// that are one syllable, one held voiced sound (perhaps closing into a
// quieter nasal at the same pitch); coughs are noisy bursts that decay.
package classify
