package classify

import (
	"fmt"

	"github.com/audiopost/audiopost/internal/testaudio"
	"math"
	"strings"
	"testing"
)

// programme is a test recording made of labelled parts.
type programme struct {
	x     []float64
	parts []span // label "speech" or "music"
}

// makeProgramme concatenates parts described as "speech:20" or
// "music-pluck:25" (kind and seconds), each music part made with its own
// seed.
func makeProgramme(t testing.TB, desc ...string) programme {
	t.Helper()
	var p programme
	for i, d := range desc {
		kind, secs, _ := strings.Cut(d, ":")
		var s float64
		fmt.Sscan(secs, &s)
		var x []float64
		label := "speech"
		switch kind {
		case "speech":
			x, _ = speechSegment(t, s, i)
		case "tight": // speech without its leading and trailing pause
			label = "speech"
			x, _ = speechSegment(t, s, i)
			x = testaudio.TrimSilence(x, 1e-4)
		default:
			label = "music"
			x = makeMusic(t, strings.TrimPrefix(kind, "music-"), s, i)
		}
		p.parts = append(p.parts, span{len(p.x), len(p.x) + len(x), label})
		p.x = append(p.x, x...)
	}
	return p
}

// segmentScore compares segments with the truth: the share of blocks
// whose centre has the right label, and the error of every boundary in
// seconds (matched to the nearest detected switch).
func segmentScore(r *Result, truth []span) (acc float64, errs []float64) {
	labelAt := func(segs []Segment, c int64) Label {
		for _, s := range segs {
			if c >= s.Start && c < s.End {
				return s.Label
			}
		}
		return Silence
	}
	ok, n := 0, 0
	for i := range r.Labels {
		c := r.BlockStart(i) + int64(r.BlockLen/2)
		want := Speech
		for _, s := range truth {
			if c >= int64(s.start) && c < int64(s.end) && s.label == "music" {
				want = Music
			}
		}
		n++
		if labelAt(r.Segments, c) == want {
			ok++
		}
	}
	for _, s := range truth[1:] {
		best := math.Inf(1)
		for _, g := range r.Segments[1:] {
			best = min(best, math.Abs(float64(g.Start-int64(s.start)))/float64(r.SampleRate))
		}
		errs = append(errs, best)
	}
	return float64(ok) / float64(n), errs
}

func TestSpeechMusic(t *testing.T) {
	cases := [][]string{
		{"speech:20", "music-testaudio:25", "speech:15", "music-pluck:12", "speech:18"},
		{"music-beat:15", "speech:22", "music-square:25", "speech:12", "music-piano:20"},
		{"speech:30", "music-pluck:25", "speech:10", "music-beat:25", "speech:14"},
		{"speech:12", "music-testaudio:10", "speech:25", "music-square:30", "speech:20"},
		{"tight:20", "music-testaudio:25", "tight:15", "music-beat:20", "tight:18", "music-pluck:15", "tight:12"},
		{"noisy", "speech:20", "music-testaudio:25", "speech:15", "music-piano:20", "speech:18"},
		{"noisy", "tight:20", "music-square:25", "tight:15", "music-beat:20", "tight:18"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			noisy := c[0] == "noisy"
			if noisy {
				c = c[1:]
			}
			p := makeProgramme(t, c...)
			if noisy {
				p.x, _ = testaudio.MixAtSNR(p.x, testaudio.PinkNoise(len(p.x), 0.1, 7), 15)
			}
			r := analyse(t, p.x, Auto)
			acc, errs := segmentScore(r, p.parts)
			var segs []string
			for _, s := range r.Segments {
				segs = append(segs, fmt.Sprintf("%s %.1f-%.1f", s.Label, float64(s.Start)/testFS, float64(s.End)/testFS))
			}
			t.Logf("accuracy %.1f%%, boundary errors %.2f s; segments %s", 100*acc, errs, strings.Join(segs, ", "))
		})
	}
}
