package loudness

import "testing"

// At 48 kHz the filters derived from the analog prototypes are the
// coefficients BS.1770-5 tabulates (Tables 1 and 2); the RLB numerator is
// scaled by 1 at 48 kHz, so it is the table's 1, -2, 1.
func TestKWeightingMatchesBS1770At48k(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want biquad
	}{
		{"pre-filter", shelfFilter(48000), biquad{1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585}},
		{"RLB", rlbFilter(48000), biquad{1, -2, 1, -1.99004745483398, 0.99007225036621}},
	} {
		g := []float64{tc.got.b0, tc.got.b1, tc.got.b2, tc.got.a1, tc.got.a2}
		w := []float64{tc.want.b0, tc.want.b1, tc.want.b2, tc.want.a1, tc.want.a2}
		for i := range g {
			if d := g[i] - w[i]; d > 1e-8 || d < -1e-8 {
				t.Errorf("%s coefficient %d = %.14f, want %.14f", tc.name, i, g[i], w[i])
			}
		}
	}
}
