package classify

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// blockTruth marks the blocks whose centre lies inside a span.
func blockTruth(spans []audio.Span, nb, blockLen int) []bool {
	v := make([]bool, nb)
	for i := range v {
		c := i*blockLen + blockLen/2
		for _, s := range spans {
			if int64(c) >= s.Start && int64(c) < s.End {
				v[i] = true
			}
		}
	}
	return v
}

// vadAccuracy returns the share of blocks where r.Voiced agrees with the
// spans, and the shares of speech blocks missed and pause blocks voiced.
func vadAccuracy(r *Result, spans []audio.Span) (acc, miss, false_ float64) {
	truth := blockTruth(spans, len(r.Voiced), r.BlockLen)
	var ok, sp, ms, pa, fa int
	for i, v := range r.Voiced {
		if v == truth[i] {
			ok++
		}
		if truth[i] {
			sp++
			if !v {
				ms++
			}
		} else {
			pa++
			if v {
				fa++
			}
		}
	}
	return float64(ok) / float64(len(truth)), float64(ms) / float64(max(sp, 1)), float64(fa) / float64(max(pa, 1))
}

func TestVADNoisySpeech(t *testing.T) {
	cases := []struct {
		name  string
		noise func(n int, seed uint64) []float64
		snr   float64
	}{
		{"clean", nil, 0},
		{"white9dB", func(n int, s uint64) []float64 { return testaudio.WhiteNoise(n, 0.1, s) }, 9},
		{"pink14dB", func(n int, s uint64) []float64 { return testaudio.PinkNoise(n, 0.1, s) }, 14},
		{"pink9dB", func(n int, s uint64) []float64 { return testaudio.PinkNoise(n, 0.1, s) }, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var accs []float64
			for v := 0; v < shortN(3, 1); v++ {
				x, spans := testaudio.Phrases(t, testFS, testaudio.Sentences[2*v:2*v+4], 1.0, testaudio.Voices[v], testaudio.Voices[v+3])
				if tc.noise != nil {
					x, _ = testaudio.MixAtSNR(x, tc.noise(len(x), uint64(v)+1), tc.snr)
				}
				r := analyse(t, x, Auto)
				acc, miss, fa := vadAccuracy(r, spans)
				t.Logf("voices %d: accuracy %.1f%%, speech missed %.1f%%, pauses voiced %.1f%%", v, 100*acc, 100*miss, 100*fa)
				accs = append(accs, acc)
			}
			var mean float64
			for _, a := range accs {
				mean += a / float64(len(accs))
			}
			t.Logf("%s: mean block accuracy %.1f%%", tc.name, 100*mean)
			if mean < 0.9 {
				t.Errorf("%s: VAD accuracy %.1f%%, want >= 90%%", tc.name, 100*mean)
			}
		})
	}
}
