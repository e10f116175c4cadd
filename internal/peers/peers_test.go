package peers

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
)

const rate = 48000

// A tone that starts after half a second of pink noise: the pauses are
// the noise, and every peer takes noise off (the first half second of
// its output is quieter than its input) without moving the tone (its
// output lines up with the input within a sample).
func TestDenoisersReduceNoise(t *testing.T) {
	n := 3 * rate
	noise := testaudio.PinkNoise(n, 0.02, 1)
	x := make([]float64, n)
	for i := range x {
		x[i] = noise[i]
		if i >= rate/2 {
			x[i] += 0.3 * math.Sin(2*math.Pi*440*float64(i)/rate)
		}
	}
	vad := make([]bool, n/(rate/10))
	for i := range vad {
		vad[i] = i >= 5
	}
	rec := Recording{X: x, Rate: rate, Pauses: Pauses(x, vad, rate/10, rate)}
	if len(rec.Pauses) != rate/2 {
		t.Fatalf("pauses: %d samples, want %d", len(rec.Pauses), rate/2)
	}
	for _, d := range Denoisers {
		if d.Slow && testing.Short() {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			y := d.Run(t, rec)
			if len(y) != n {
				t.Fatalf("%d samples out, %d in", len(y), n)
			}
			in, out := LevelDB(x[rate/10:rate/2]), LevelDB(y[rate/10:rate/2])
			if d.Name != "afftdn" && out > in-1 {
				// afftdn at its defaults assumes a -50 dB floor and is
				// only logged.
				t.Errorf("noise %.1f dBFS in, %.1f out: want 1 dB or more off", in, out)
			}
			tone := x[2*rate : 3*rate]
			if lag := testaudio.Lag(tone, y[2*rate:3*rate], 200); lag != 0 {
				t.Errorf("output lags the input by %d samples after Align", lag)
			}
			t.Logf("noise %.1f -> %.1f dBFS", in, out)
		})
	}
}

// With a mask that hears voice everywhere, the quietest tenth of the
// blocks stands in for the pauses.
func TestPausesQuietestTenth(t *testing.T) {
	x := make([]float64, 20*100)
	for i := range x {
		x[i] = 1
		if i/100 == 7 || i/100 == 13 {
			x[i] = 0.01
		}
	}
	vad := make([]bool, 20)
	for i := range vad {
		vad[i] = true
	}
	p := Pauses(x, vad, 100, 1000)
	if len(p) != 200 || LevelDB(p) > -39 {
		t.Errorf("%d samples at %.1f dBFS, want the two quiet blocks (200 at -40)", len(p), LevelDB(p))
	}
}
