package mixdown_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// duckScene is a speaker with long pauses over a music bed that starts
// earlier: the speech track's offset is 1.2345 s into the production.
func duckScene(t testing.TB) (speech, bed []float64, spans []span, offset int64) {
	t.Helper()
	type scene struct {
		speech, bed []float64
		spans       []span
		offset      int64
	}
	s := cached("duck", func() scene {
		var s scene
		s.speech, s.bed, s.spans, s.offset = buildDuckScene(t)
		return s
	})
	return s.speech, s.bed, s.spans, s.offset
}

func buildDuckScene(t testing.TB) (speech, bed []float64, spans []span, offset int64) {
	t.Helper()
	clean, sp := place(t, testaudio.Voices[:1], 24, []phrase{
		{0, testaudio.Sentences[1], 0.5},
		{0, testaudio.Sentences[6], 8.5},
		{0, testaudio.Sentences[9], 16.5},
	})
	offset = 59256 // 1.2345 s
	speech = testaudio.Add(clean[0], testaudio.WhiteNoise(len(clean[0]), dbAmp(-65), 3))
	bed = testaudio.Music(fs, 26, 1)
	for _, s := range sp[0] {
		spans = append(spans, span{Start: s.Start + int64(offset), End: s.End + int64(offset)})
	}
	return speech, bed, spans, offset
}

// The ducking acceptance: under speech the bed sits at backgroundgain
// (within 1 dB) below its level, and after the speech it is back within
// 1 dB of its level after ducking_fadetime (within 20%), for every fade
// time the API offers and a few background gains. ("Back" is within 1 dB,
// or within a tenth of the ducking depth for ducks shallower than 10 dB:
// a 3 dB duck is within 1 dB after a third of its fade.)
func TestDucking(t *testing.T) {
	speech, bed, spans, offset := duckScene(t)
	an := analyse(t, [][]float64{speech, bed}, []mixdown.Role{mixdown.RoleForeground, mixdown.RoleDucking}, []int64{offset, 0})
	cases := []struct {
		gain float64
		fade time.Duration
	}{
		{-18, 125 * time.Millisecond}, {-18, 250 * time.Millisecond}, {-18, 375 * time.Millisecond},
		{-18, 500 * time.Millisecond}, {-18, 750 * time.Millisecond}, {-18, time.Second},
		{-18, 1500 * time.Millisecond}, {-18, 2 * time.Second},
		{-3, 500 * time.Millisecond}, {-12, 500 * time.Millisecond}, {-26, 500 * time.Millisecond},
	}
	for k, c := range cases {
		if testing.Short() && k%3 != 0 {
			continue
		}
		t.Run(fmt.Sprintf("%v dB %v", c.gain, c.fade), func(t *testing.T) {
			d, err := mixdown.NewDucker(monoSource(bed), an, 1, mixdown.DuckOptions{BackgroundGainDB: c.gain, FadeTime: c.fade})
			if err != nil {
				t.Fatal(err)
			}
			out := testaudio.ReadAll(t, d)[0]
			under := spansDB(out, spans) - spansDB(bed, spans)
			if math.Abs(under-c.gain) > 1 {
				t.Errorf("under speech the bed is at %+.2f dB, want %v +- 1", under, c.gain)
			}
			// Return: the first 5 ms window after each phrase whose gain is
			// back.
			w := fs / 200
			back := math.Min(1, -c.gain/10)
			var rets []float64
			for _, s := range spans {
				ret := -1.0
				for i := int(s.End); i+w < len(out); i += w {
					g := spansDB(out, []span{frames(i, i+w)}) - spansDB(bed, []span{frames(i, i+w)})
					if g > -back {
						ret = float64(i+w/2-int(s.End)) / fs
						break
					}
				}
				rets = append(rets, ret)
				if want := c.fade.Seconds(); ret < 0.8*want || ret > 1.2*want {
					t.Errorf("phrase ending at %.2f s: bed back after %.0f ms, want %v +- 20%%", float64(s.End)/fs, ret*1000, c.fade)
				}
			}
			t.Logf("under speech %+.2f dB; back after %.0f, %.0f, %.0f ms", under, rets[0]*1000, rets[1]*1000, rets[2]*1000)
		})
	}
}

// A background track sits at backgroundgain below the speaker's level all
// the time, and auto roles tell the music bed from the speaker.
func TestBackground(t *testing.T) {
	speech, bed, _, offset := duckScene(t)
	an := analyse(t, [][]float64{speech, bed}, nil, []int64{offset, 0})
	if r := an.Tracks[0].Role; r != mixdown.RoleForeground {
		t.Errorf("speech track: auto role %v, want foreground", r)
	}
	if r := an.Tracks[1].Role; r != mixdown.RoleDucking {
		t.Errorf("music track: auto role %v (music share %.2f), want ducking", r, an.Tracks[1].MusicShare)
	}
	an.Tracks[1].Role = mixdown.RoleBackground
	d, err := mixdown.NewDucker(monoSource(bed), an, 1, mixdown.DuckOptions{BackgroundGainDB: -12})
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, d)
	r, err := loudness.MeasureBuffer(out, fs, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Integrated - an.SpeechLUFS()
	t.Logf("background %.2f LUFS, speech %.2f LUFS: %+.2f dB", r.Integrated, an.SpeechLUFS(), got)
	if math.Abs(got+12) > 1 {
		t.Errorf("background %+.2f dB from the speech, want -12 +- 1", got)
	}
	// Foreground and unchanged tracks are not ducked.
	for _, role := range []mixdown.Role{mixdown.RoleForeground, mixdown.RoleUnchanged} {
		an.Tracks[1].Role = role
		p, err := mixdown.DuckingPlan(an, 1, mixdown.DuckOptions{})
		if err != nil || len(p.DB) != 0 {
			t.Errorf("%v: plan %d blocks, %v; want unity", role, len(p.DB), err)
		}
	}
}

func TestDuckingOptions(t *testing.T) {
	speech, bed, _, offset := duckScene(t)
	an := analyse(t, [][]float64{speech, bed}, []mixdown.Role{mixdown.RoleForeground, mixdown.RoleDucking}, []int64{offset, 0})
	for _, o := range []mixdown.DuckOptions{{BackgroundGainDB: 3}, {FadeTime: -time.Second}, {MinPause: -1}, {Length: -1}} {
		if _, err := mixdown.DuckingPlan(an, 1, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := mixdown.NewDucker(audio.NewBufferSource(audio.Buffer{bed}, 44100), an, 1, mixdown.DuckOptions{}); err == nil {
		t.Error("a 44.1 kHz source for a 48 kHz analysis accepted")
	}
	_ = dsp.ErrInvalidParameter
}
