package spectral

// Restoration is a recording's noise, hum, reverb and breath reduction:
// the settings the denoiser starts with, their changes at times of the
// input, and the hum removal. The single-track chain (dsp/chain) and the
// tracks of a mixdown (dsp/mixdown) take it alike; the noise profile is
// learnt by an analysis pass of the one that runs it.
type Restoration struct {
	// Settings apply from the start, Segments from their Start on.
	Settings Settings
	// Segments change the settings at times of the input, crossfaded.
	Segments []RestorationSegment
	// Dehum, when not nil, removes mains hum first (Base 0 detects 50 or
	// 60 Hz).
	Dehum *DehumOptions
}

// RestorationSegment gives Settings to the input from Start, in seconds,
// to the next segment's Start.
type RestorationSegment struct {
	Start float64
	Settings
}

// ReducesReverb reports whether any stretch of r asks for reverb
// reduction (a method with one, Static, Dynamic or SpeechIsolation, and
// DeverbDB not negative): only then does the analysis pass need the
// Profiler's room model (ProfilerOptions.NoRoom).
func (r *Restoration) ReducesReverb() bool {
	if r == nil {
		return false
	}
	if r.Settings.reducesReverb() {
		return true
	}
	for _, s := range r.Segments {
		if s.Settings.reducesReverb() {
			return true
		}
	}
	return false
}

func (s Settings) reducesReverb() bool {
	return s.DeverbDB >= 0 && (s.Method == Static || s.Method == Dynamic || s.Method == SpeechIsolation)
}
