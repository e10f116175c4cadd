// Package mixdown holds the multitrack nodes of audiopost: what turns a
// podcast recorded on separate microphones (host, guest, a music bed) into
// one balanced programme.
//
// A multitrack production is processed in passes over fresh decoders of
// its tracks, like the single-track graphs of package dsp:
//
//  1. Analyze reads every track once, each placed at its offset in the
//     production, and decides per track and per 10 ms frame whether the
//     track's own speaker is talking (Voice), whether what the microphone
//     picks up is only another speaker's bleed (Bleed), or nothing but its
//     noise floor (Silent). Tracks are compared with each other: a
//     microphone whose level follows another track's level at that
//     track's measured coupling is carrying bleed, not its own speaker.
//     Memory is 9 bytes per frame and track plus one dsp.Analysis per
//     track on the 100 ms grid: under 3 MB per hour and track.
//  2. Gain plans are derived from the analysis: GatePlan (the adaptive
//     noise gate and the crossgate), BalancePlan (the leveler per track
//     plus the gain that brings every speaker to the common level) and
//     DuckingPlan (a background track under the foreground speech). Each
//     is a dsp.GainPlan, so it is applied by dsp.PlanGain with its
//     lookahead for free: a gate opens before the word that opens it.
//  3. The render graph is built from nodes per track (dsp.NewHighPass,
//     NewGate, NewBalance, NewLoopTrim, NewDucker), joined by dsp.Mix with
//     each track's pan and offset, and normalised by dsp.NormalizeStream,
//     which runs the graph again to measure it.
//
// Mixdown does steps 1 to 3 from the settings of a production
// (TrackSettings mirrors the API's per-track algorithms, Settings the
// master's); examples/multitrack builds the same graph node by node.
// A gain plan on the 10 ms grid takes 8 bytes per frame (2.9 MB per hour),
// and dsp.PlanGain keeps a linear copy of it per graph; an hour of three
// tracks renders in about 70 MB of peak RSS (BenchmarkMixdown).
//
// # The API's settings
//
// Per track:
//
//   - backforeground: Track.Role and TrackSettings.Role (ParseRole).
//   - backgroundgain: DuckOptions.BackgroundGainDB.
//   - ducking_fadetime: DuckOptions.FadeTime.
//   - gain: TrackSettings.GainDB, the dsp.MixInput gain: after the
//     balance, so that a speaker can be set apart from the common level.
//   - levelerstrength: BalanceOptions.Strength (the value / 100).
//   - pan: TrackSettings.Pan, the dsp.MixInput pan (ParsePan).
//   - loop_trim: NewLoopTrim to Analysis.ReferenceLength minus the
//     track's offset.
//   - offset: Track.Offset in frames, the dsp.MixInput offset.
//   - hipfilter: dsp.NewHighPass with TrackAnalysis.Block.
//
// Master: leveler is BalancePlan on every foreground track, gate and
// crossgate are GateOptions.Noise and GateOptions.Crossgate, and the
// loudness target and true-peak limit are dsp.NormalizeStream's.
//
// Every node follows the conventions of package dsp: constructors
// NewX(upstream, ...) returning errors that wrap dsp.ErrInvalidParameter,
// output independent of the block size it is read with, no latency visible
// from outside, no allocation per Read once running, and Close closing the
// upstream sources.
package mixdown
