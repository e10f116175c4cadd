package live_test

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestDehum adds mains hum (every harmonic to 400 Hz, 25 dB under the
// speech) to espeak-ng speech and measures what the causal hum remover
// leaves of it after its first three seconds, with the base given and
// detected; on speech without hum it must change next to nothing.
func TestDehum(t *testing.T) {
	const rate = 48000
	speech, _ := testaudio.Phrases(t, rate, testaudio.Sentences[:6], 0.5, testaudio.Voices[:2]...)
	speech = testaudio.Scale(speech, 0.05/testaudio.RMS(speech))
	settle := 3 * rate
	for _, tc := range []struct {
		name      string
		hum, base int
	}{{"50 Hz given", 50, 50}, {"60 Hz detected", 60, 0}, {"50 Hz detected", 50, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			hum := testaudio.Hum(len(speech), rate, float64(tc.hum), 400, 0.05*0.056) // -25 dB
			in := testaudio.Add(speech, hum)
			d, err := live.NewDehum(audio.NewBufferSource(audio.Buffer{in}, rate), live.DehumOptions{Base: tc.base})
			if err != nil {
				t.Fatal(err)
			}
			out := readAll(t, d, 480)[0]
			before := testaudio.DB(hum[settle:])
			res := make([]float64, len(out)-settle)
			for i := range res {
				res[i] = out[settle+i] - speech[settle+i]
			}
			after := testaudio.DB(res)
			t.Logf("hum %.1f dBFS, left %.1f dBFS: %.1f dB removed; base %d", before, after, before-after, d.Base())
			if before-after < 20 {
				t.Errorf("only %.1f dB of hum removed, want 20", before-after)
			}
			if d.Base() != tc.hum {
				t.Errorf("removing %d Hz hum as %d Hz", tc.hum, d.Base())
			}
		})
	}
	t.Run("no hum", func(t *testing.T) {
		d, err := live.NewDehum(audio.NewBufferSource(audio.Buffer{speech}, rate), live.DehumOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := readAll(t, d, 480)[0]
		if sdr := testaudio.SISDR(speech, out); sdr < 40 {
			t.Errorf("speech without hum changed: SI-SDR %.1f dB", sdr)
		} else {
			t.Logf("speech without hum: SI-SDR %.1f dB", sdr)
		}
	})
	t.Run("contract", func(t *testing.T) {
		in := testaudio.Add(speech[:4*rate], testaudio.Hum(4*rate, rate, 50, 400, 0.003))
		audiotest.CheckSource(t, func() audio.Source {
			d, _ := live.NewDehum(audio.NewBufferSource(audio.Buffer{in}, rate), live.DehumOptions{})
			return d
		})
	})
}
