package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Hum at 50 or 60 Hz with harmonics to 300 Hz at -36 dBFS under speech:
// detected at the right frequency, reduced by 25 dB or more, the speech
// kept at 20 dB SI-SDR or better.
func TestDehum(t *testing.T) {
	clean, _ := speech(t, 5, 0.6)
	for _, tc := range []struct {
		base     int
		freq     float64 // actual frequency: mains drift
		profile  bool
		optsBase int
	}{
		{50, 50, true, 0},
		{60, 60.05, true, 0},
		{50, 49.97, false, 0},
		{60, 60, false, 60},
	} {
		hum := testaudio.Hum(len(clean), fs, tc.freq, 300, math.Pow(10, -36.0/20))
		x := testaudio.Add(clean, hum)
		opts := DehumOptions{Base: tc.optsBase}
		if tc.profile {
			opts.Profile = analyse(t, audio.Buffer{x}, ProfilerOptions{})
			ph := opts.Profile.Hum
			t.Logf("profile: hum %d Hz (%.3f Hz), %.1f dBFS, %d harmonics", ph.Base, ph.Freq, ph.LevelDB, len(ph.Harmonics))
			if ph.Base != tc.base || math.Abs(ph.Freq-tc.freq) > 0.05 {
				t.Errorf("analyzer detected %d Hz (%.3f), want %d (%.3f)", ph.Base, ph.Freq, tc.base, tc.freq)
			}
			if math.Abs(ph.LevelDB+36) > 1.5 {
				t.Errorf("analyzer hum level %.1f dBFS, want -36", ph.LevelDB)
			}
		}
		h, err := NewDehum(audio.NewBufferSource(audio.Buffer{x}, fs), opts)
		if err != nil {
			t.Fatal(err)
		}
		y := testaudio.ReadAll(t, h)[0]
		if len(y) != len(x) {
			t.Fatalf("output %d frames, input %d", len(y), len(x))
		}
		got := h.Hum()
		resid := make([]float64, len(y))
		for i := range y {
			resid[i] = y[i] - clean[i]
		}
		red := testaudio.DB(hum) - testaudio.DB(resid)
		sd := testaudio.SISDR(clean, y)
		t.Logf("%.2f Hz hum (profile %v, base %d): removed %d Hz (%.3f Hz, %d harmonics), hum reduced %.1f dB, speech SI-SDR %.1f dB (before %.1f)",
			tc.freq, tc.profile, tc.optsBase, got.Base, got.Freq, len(got.Harmonics), red, sd, testaudio.SISDR(clean, x))
		if got.Base != tc.base {
			t.Errorf("removed %d Hz hum, want %d", got.Base, tc.base)
		}
		if red < 25 {
			t.Errorf("hum reduced by %.1f dB, want 25 or more", red)
		}
		if sd < 20 {
			t.Errorf("speech SI-SDR %.1f dB after dehum, want 20 or more", sd)
		}
	}
}

// Without hum, automatic dehum finds none and passes the signal as is.
func TestDehumNoHum(t *testing.T) {
	clean, _ := speech(t, 3, 0.5)
	x := testaudio.Add(clean, testaudio.PinkNoise(len(clean), 0.003, 2))
	p := analyse(t, audio.Buffer{x}, ProfilerOptions{})
	if p.Hum.Base != 0 {
		t.Errorf("analyzer found %d Hz hum in speech and pink noise", p.Hum.Base)
	}
	for _, prof := range []*Profile{p, nil} {
		h, err := NewDehum(audio.NewBufferSource(audio.Buffer{x}, fs), DehumOptions{Profile: prof})
		if err != nil {
			t.Fatal(err)
		}
		y := testaudio.ReadAll(t, h)[0]
		if h.Hum().Base != 0 {
			t.Errorf("dehum (profile %v) removes %d Hz hum that is not there", prof != nil, h.Hum().Base)
		}
		if sd := testaudio.SISDR(x, y); sd < 60 {
			t.Errorf("dehum without hum changed the signal: SI-SDR %.1f dB", sd)
		}
	}
}

// Inside the Denoiser, Dehum runs first and the statistics report its base.
func TestDenoiserDehumStats(t *testing.T) {
	clean, _ := speech(t, 3, 0.6)
	x := testaudio.Add(clean, testaudio.Hum(len(clean), fs, 60, 300, math.Pow(10, -36.0/20)))
	y, d := denoise(t, x, DenoiserOptions{Settings: Settings{Method: Static, ReductionDB: 12}, Dehum: &DehumOptions{}})
	if hz := d.Stats()[0].DehumHz; hz != 60 {
		t.Errorf("statistics report dehum %.1f Hz, want 60", hz)
	}
	if sd := sisdr(clean, y); sd < 20 {
		t.Errorf("speech SI-SDR %.1f dB after dehum and denoise", sd)
	}
}
