package conversation

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/loudness"
)

// TestRealProgramme checks that a programme is what the live tests take
// it for: consecutive turns of different speakers whose speech differs in
// loudness by the turns' level jumps (10 to 12 dB, within 1.5 LU: the
// clips are set to one active level, not one loudness), phrases inside
// their turns and never under a music segment, and a peak at -1 dBFS or
// under.
func TestRealProgramme(t *testing.T) {
	c := realaudio.Load(t, realaudio.Tuning)
	p := RealProgramme(c, 100, ProgrammeOptions{Music: true})
	const rate = realaudio.Rate
	if got := len(p.Input); got != 100*rate {
		t.Fatalf("%d samples, want %d", got, 100*rate)
	}
	t.Logf("%v", p)
	if len(p.Turns) < 4 || len(p.Music) < 1 {
		t.Fatalf("%d turns and %d music segments, want at least 4 and 1", len(p.Turns), len(p.Music))
	}
	peak := 0.0
	for _, v := range p.Input {
		peak = max(peak, math.Abs(v))
	}
	if db := 20 * math.Log10(peak); db > -1+1e-9 {
		t.Errorf("peak %.2f dBFS, want -1 or under", db)
	}
	for _, s := range p.Phrases {
		if s.Start < 0 || s.End > int64(len(p.Input)) || s.End <= s.Start {
			t.Fatalf("phrase %v outside the programme", s)
		}
		for _, m := range p.Music {
			if s.Start < m.End && m.Start < s.End {
				t.Fatalf("phrase %v under the music segment %v", s, m)
			}
		}
	}
	// The loudness of each turn's speech alone (its phrases joined).
	level := func(k int) float64 {
		end := len(p.Input)
		if k+1 < len(p.Turns) {
			end = p.Turns[k+1].Start
		}
		var x []float64
		for _, s := range p.Phrases {
			if s.Start >= int64(p.Turns[k].Start) && s.End <= int64(end) {
				x = append(x, p.Input[s.Start:s.End]...)
			}
		}
		r, err := loudness.MeasureBuffer(audio.Buffer{x}, rate, loudness.Options{Mode: loudness.ModeI})
		if err != nil {
			t.Fatal(err)
		}
		return r.Integrated
	}
	prev := level(0)
	for k := 1; k < len(p.Turns); k++ {
		if p.Speakers[k] == p.Speakers[k-1] {
			t.Errorf("turns %d and %d are both %s's", k-1, k, p.Speakers[k])
		}
		lv := level(k)
		want := p.Turns[k].GainDB - p.Turns[k-1].GainDB
		if d := math.Abs(want); d < 10 || d > 12 {
			t.Errorf("turn %d jumps by %+.0f dB, want 10 to 12", k, want)
		}
		if math.Abs(lv-prev-want) > 1.5 {
			t.Errorf("turn %d (%s): speech %.1f LUFS after %.1f, a jump of %+.1f LU, want %+.0f within 1.5", k, p.Speakers[k], lv, prev, lv-prev, want)
		}
		prev = lv
	}
}
