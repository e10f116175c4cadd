package spectral

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// The per-bin floor (binFloor) of white Gaussian noise lies at the
// noise's mean power in every bin: binBias compensates the quantile's
// place under the mean. Over the bins the mean error stays within
// 0.5 dB and no bin strays more than 3 dB (10 s of noise, 117 frames).
func TestBinFloorWhite(t *testing.T) {
	for _, sigma := range []float64{0.1, 1e-3} {
		r := rand.New(rand.NewPCG(1, 2))
		x := make([]float64, 10*fs)
		for i := range x {
			x[i] = sigma * r.NormFloat64()
		}
		a, err := NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, ProfilerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := audio.Copy(context.Background(), a, audio.NewBufferSource(audio.Buffer{x}, fs)); err != nil {
			t.Fatal(err)
		}
		est := make([]float64, a.bins)
		a.binFloor(est)
		// E|X_k|^2 of a square-root-Hann windowed frame: sigma^2 n/2.
		want := sigma * sigma * float64(a.n) / 2
		var mean, worst float64
		for k := 2; k < len(est)-2; k++ { // the ends average fewer bins
			d := 10 * math.Log10(est[k]/want)
			mean += d
			worst = max(worst, math.Abs(d))
		}
		mean /= float64(len(est) - 4)
		t.Logf("sigma %g: floor %+.2f dB from the mean on average, %.2f dB at worst", sigma, mean, worst)
		if math.Abs(mean) > 0.5 || worst > 3 {
			t.Errorf("sigma %g: floor %+.2f dB from the noise's mean on average, %.2f at worst; want within 0.5 and 3", sigma, mean, worst)
		}
	}
}
