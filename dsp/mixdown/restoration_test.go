package mixdown_test

import (
	"context"
	"errors"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// A track's restoration lowers the noise in its pauses, learnt from the
// track itself, and leaves its speech level alone; the gate is off so
// that only the denoiser acts on the pauses.
func TestTrackRestoration(t *testing.T) {
	speech, spans := testaudio.Phrases(t, fs, testaudio.Sentences[0:3], 1.5, testaudio.Voices[0])
	x, _ := testaudio.MixAtSNR(speech, testaudio.PinkNoise(len(speech), 0.01, 7), 15)
	pauses := testaudio.Complement(spans, len(x), fs/5)
	render := func(r *spectral.Restoration) []float64 {
		ts := mixdown.DefaultTrack(opener(audio.Buffer{x}))
		ts.Role, ts.Filter, ts.Restoration = mixdown.RoleForeground, dsp.FilterOff, r
		md := must(mixdown.New(context.Background(), mixdown.Settings{Tracks: []mixdown.TrackSettings{ts}, Channels: 1}))
		return testaudio.ReadAll(t, must(md.Open(context.Background())))[0]
	}
	plain := render(nil)
	clean := render(&spectral.Restoration{Settings: spectral.Settings{Method: spectral.Static}})
	noiseDrop := spansDB(plain, pauses) - spansDB(clean, pauses)
	speechMove := spansDB(clean, spans) - spansDB(plain, spans)
	t.Logf("pause noise down %.1f dB, speech level moved %+.2f dB", noiseDrop, speechMove)
	if noiseDrop < 10 {
		t.Errorf("restoration lowered the pauses' noise by %.1f dB, want at least 10", noiseDrop)
	}
	if speechMove < -1 || speechMove > 1 {
		t.Errorf("restoration moved the speech level by %+.2f dB, want within 1", speechMove)
	}
}

// A track's restoration holds for the whole track: segments, which the
// single-track chain crossfades, are refused rather than ignored.
func TestTrackRestorationSegmentsRefused(t *testing.T) {
	ts := mixdown.DefaultTrack(opener(audio.Buffer{make([]float64, fs)}))
	ts.Restoration = &spectral.Restoration{
		Settings: spectral.Settings{Method: spectral.Static},
		Segments: []spectral.RestorationSegment{{Start: 0.5, Settings: spectral.Settings{Method: spectral.Dynamic}}},
	}
	_, err := mixdown.New(context.Background(), mixdown.Settings{Tracks: []mixdown.TrackSettings{ts}, Channels: 1})
	if !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Fatalf("a track's restoration with segments: %v, want dsp.ErrInvalidParameter", err)
	}
}

// The classifier mode decides an automatic role: music forced on a
// speech track makes it a ducking bed, speech forced on music a speaker.
func TestTrackClassifier(t *testing.T) {
	speech, _ := testaudio.Phrases(t, fs, testaudio.Sentences[0:2], 0.5, testaudio.Voices[0])
	music := testaudio.Music(fs, float64(len(speech))/fs, 3)
	for _, c := range []struct {
		x    []float64
		mode classify.Mode
		want mixdown.Role
	}{
		{speech, classify.Auto, mixdown.RoleForeground},
		{music, classify.Auto, mixdown.RoleDucking},
		{speech, classify.MusicOnly, mixdown.RoleDucking},
		{music, classify.SpeechOnly, mixdown.RoleForeground},
	} {
		ts := mixdown.DefaultTrack(opener(audio.Buffer{c.x}))
		ts.Classifier = c.mode
		md := must(mixdown.New(context.Background(), mixdown.Settings{Tracks: []mixdown.TrackSettings{ts}}))
		if got := md.Analysis().Tracks[0].Role; got != c.want {
			t.Errorf("classifier %v: role %v, want %v", c.mode, got, c.want)
		}
	}
}
