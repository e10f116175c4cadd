package spectral

import (
	"math"
	"sort"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Segments switch settings without clicks, an "off" segment passes the
// input through, and the statistics say what each segment got.
func TestSegments(t *testing.T) {
	clean, _ := speech(t, 5, 0.6)
	mix, _ := testaudio.MixAtSNR(clean, testaudio.PinkNoise(len(clean), 0.1, 7), 14)
	a, b := int64(len(mix)/3), int64(2*len(mix)/3)
	p := analyse(t, audio.Buffer{mix}, ProfilerOptions{})
	opts := DenoiserOptions{
		Settings: Settings{Method: Static, DeverbDB: -1},
		Segments: []Segment{
			{Start: a, Settings: Settings{Method: Off}},
			{Start: b, Settings: Settings{Method: Dynamic, ReductionDB: 12, DeverbDB: -1}},
		},
		Profile: p,
		Dehum:   &DehumOptions{},
	}
	y, d := denoise(t, mix, opts)

	// The middle of the off segment is the input.
	margin := int64(FFTSize(fs)/2) + int64(0.015*fs) // half a window and half a crossfade
	var worst float64
	for i := a + margin; i < b-margin; i++ {
		worst = max(worst, math.Abs(y[i]-mix[i]))
	}
	if worst > 1e-9 {
		t.Errorf("off segment differs from the input by up to %g", worst)
	}

	// No click: the high-frequency energy (first difference) in 5 ms
	// windows at the boundaries is no larger than elsewhere.
	win := fs / 200
	var all []float64
	diffE := func(at int) float64 {
		var e float64
		for i := max(1, at); i < min(len(y), at+win); i++ {
			d := y[i] - y[i-1]
			e += d * d
		}
		return e
	}
	for i := win; i+win < len(y); i += win {
		all = append(all, diffE(i))
	}
	sort.Float64s(all)
	p99 := all[len(all)*99/100]
	for _, at := range []int64{a, b} {
		for off := -4 * win; off <= 4*win; off += win / 2 {
			if e := diffE(int(at) + off); e > 2*p99 {
				t.Errorf("click at the boundary %d: difference energy %.3g, 99th percentile %.3g", at, e, p99)
			}
		}
	}

	st := d.Stats()
	if len(st) != 3 {
		t.Fatalf("%d segment statistics, want 3", len(st))
	}
	for i, s := range st {
		t.Logf("segment %d [%.2f s, %.2f s) %-8s reduction %4.1f dB, dehum %.0f Hz, noise %.1f -> %.1f dBFS, SNR %.1f -> %.1f dB",
			i, float64(s.Start)/fs, float64(s.End)/fs, s.Method, s.ReductionDB, s.DehumHz, s.NoiseBeforeDB, s.NoiseAfterDB, s.SNRBeforeDB, s.SNRAfterDB)
	}
	want := []struct {
		start, end int64
		m          Method
		red        float64
	}{{0, a, Static, AutoReductionDB(p.SNRDB)}, {a, b, Off, 0}, {b, int64(len(mix)), Dynamic, 12}}
	for i, w := range want {
		s := st[i]
		if s.Start != w.start || s.End != w.end || s.Method != w.m || s.ReductionDB != w.red {
			t.Errorf("segment %d: %+v, want [%d, %d) %s %.0f dB", i, s, w.start, w.end, w.m, w.red)
		}
		if s.DehumHz != 0 {
			t.Errorf("segment %d: dehum %.1f Hz reported on a recording without hum", i, s.DehumHz)
		}
	}
	if d := st[1].NoiseAfterDB - st[1].NoiseBeforeDB; math.Abs(d) > 0.5 {
		t.Errorf("off segment: noise changed by %.1f dB", d)
	}
	for _, i := range []int{0, 2} {
		if st[i].NoiseAfterDB > st[i].NoiseBeforeDB-min(0.6*st[i].ReductionDB, 15) || st[i].SNRAfterDB < st[i].SNRBeforeDB+5 {
			t.Errorf("segment %d: noise %.1f -> %.1f dBFS, SNR %.1f -> %.1f dB", i, st[i].NoiseBeforeDB, st[i].NoiseAfterDB, st[i].SNRBeforeDB, st[i].SNRAfterDB)
		}
	}
}

// The Profiler run over the output measures the same noise reduction the
// Denoiser reports: the measurement helper for statistics after the chain.
func TestStatsMatchProfiler(t *testing.T) {
	clean, _ := speech(t, 4, 0.8)
	mix, _ := testaudio.MixAtSNR(clean, testaudio.WhiteNoise(len(clean), 0.1, 2), 12)
	y, d := denoise(t, mix, DenoiserOptions{Settings: Settings{Method: Static, ReductionDB: 24}})
	before := analyse(t, audio.Buffer{mix}, ProfilerOptions{})
	after := analyse(t, audio.Buffer{y}, ProfilerOptions{})
	s := d.Stats()[0]
	t.Logf("node: noise %.1f -> %.1f dBFS, SNR %.1f -> %.1f; analyzer: noise %.1f -> %.1f dBFS, SNR %.1f -> %.1f",
		s.NoiseBeforeDB, s.NoiseAfterDB, s.SNRBeforeDB, s.SNRAfterDB, before.NoiseDB, after.NoiseDB, before.SNRDB, after.SNRDB)
	if math.Abs(s.NoiseBeforeDB-before.NoiseDB) > 1.5 || math.Abs(s.NoiseAfterDB-after.NoiseDB) > 3 {
		t.Errorf("node measures noise %.1f -> %.1f dBFS, analyzer %.1f -> %.1f", s.NoiseBeforeDB, s.NoiseAfterDB, before.NoiseDB, after.NoiseDB)
	}
	if red := before.NoiseDB - after.NoiseDB; red < 20 || red > 26 {
		t.Errorf("analyzer measures %.1f dB noise reduction for a 24 dB cap", red)
	}
}
