package testaudio

import (
	"math"
	"testing"
)

func TestSISDR(t *testing.T) {
	ref := WhiteNoise(48000, 0.1, 1)
	if got := SISDR(ref, Scale(append([]float64(nil), ref...), 0.5)); got < 100 {
		t.Errorf("SI-SDR of a scaled copy = %.1f dB, want > 100", got)
	}
	noisy := Add(ref, WhiteNoise(48000, 0.01, 2))
	if got := SISDR(ref, noisy); math.Abs(got-20) > 0.3 {
		t.Errorf("SI-SDR at 20 dB SNR = %.2f dB", got)
	}
}

func TestLagAndShift(t *testing.T) {
	ref := PinkNoise(20000, 0.1, 3)
	late := Shift(ref, -37)
	if d := Lag(ref, late, 100); d != 37 {
		t.Fatalf("Lag = %d, want 37", d)
	}
	if got := SISDR(ref[:19000], Shift(late, 37)[:19000]); got < 100 {
		t.Errorf("re-aligned SI-SDR %.1f dB", got)
	}
}

// Past 256 shifts Lag searches through an FFT and sums again only the
// shifts near its largest correlation: it must return what the direct
// search over every shift returns, on signals with a clear peak, on
// periodic ones whose peaks are nearly equal, on silence and where the
// shifts run past the signals.
func TestLagFFTIsDirect(t *testing.T) {
	tone := make([]float64, 9600)
	for i := range tone {
		tone[i] = math.Sin(2 * math.Pi * 440 * float64(i) / 48000)
	}
	pink := PinkNoise(30000, 0.1, 5)
	for _, c := range []struct {
		name     string
		ref, est []float64
		maxLag   int
	}{
		{"noise, est late", pink[:20000], Add(Shift(pink, -1234)[:20000], WhiteNoise(20000, 0.05, 6)), 4800},
		{"noise, est early and longer", pink[2000:12000], pink, 3000},
		{"noise, est shorter", pink, pink[500:8000], 1000},
		{"tone: periodic peaks", tone, Shift(tone, 17), 2000},
		{"tone, shifts past both", tone[:600], tone[:900], 5000},
		{"silence", make([]float64, 5000), make([]float64, 5000), 300},
		{"one sample", []float64{1}, []float64{0, 0, 1}, 400},
	} {
		want := lagAt(c.ref, c.est, -c.maxLag, c.maxLag, nil)
		if got := Lag(c.ref, c.est, c.maxLag); got != want {
			t.Errorf("%s: Lag %d, the direct search %d", c.name, got, want)
		}
	}
}

func TestSpeechAndPhrases(t *testing.T) {
	x, spans := Phrases(t, 48000, Sentences[:2], 1, Voices[0], Voices[1])
	if len(spans) != 2 || spans[1].Start-spans[0].End != 48000 {
		t.Fatalf("spans %v", spans)
	}
	if d := SpanDB(x, spans); d < -30 || d > -5 {
		t.Errorf("speech level %.1f dBFS", d)
	}
	if d := SpanDB(x, Complement(spans, len(x), 0)); !math.IsInf(d, -1) {
		t.Errorf("pauses are not silent: %.1f dB", d)
	}
}

func TestNoiseLevels(t *testing.T) {
	for name, x := range map[string][]float64{
		"white": WhiteNoise(96000, 0.05, 1), "pink": PinkNoise(96000, 0.05, 1),
		"hum": Hum(96000, 48000, 50, 300, 0.05), "music": Scale(Music(48000, 2, 1), 0.5),
	} {
		if d := DB(x); math.Abs(d-(-26.02)) > 0.05 {
			t.Errorf("%s: %.2f dBFS, want -26.02", name, d)
		}
	}
}
