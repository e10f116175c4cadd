package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/quickselect"
	"github.com/audiopost/audiopost/internal/testaudio"
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

// speechMusicCases are TestSpeechMusic's programmes; "noisy" first puts
// pink noise 15 dB under them.
var speechMusicCases = [][]string{
	{"speech:20", "music-testaudio:25", "speech:15", "music-pluck:12", "speech:18"},
	{"music-beat:15", "speech:22", "music-square:25", "speech:12", "music-piano:20"},
	{"speech:30", "music-pluck:25", "speech:10", "music-beat:25", "speech:14"},
	{"speech:12", "music-testaudio:10", "speech:25", "music-square:30", "speech:20"},
	{"tight:20", "music-testaudio:25", "tight:15", "music-beat:20", "tight:18", "music-pluck:15", "tight:12"},
	{"noisy", "speech:20", "music-testaudio:25", "speech:15", "music-piano:20", "speech:18"},
	{"noisy", "tight:20", "music-square:25", "tight:15", "music-beat:20", "tight:18"},
}

// TestSpeechMusic classifies synthetic programmes: 95% of blocks right,
// every boundary within 0.5 s. The plain run takes three of them (plain,
// without pauses at the joins, in noise), -short two, -sweep all.
func TestSpeechMusic(t *testing.T) {
	cases := speechMusicCases
	for i, c := range cases[:shortN(len(cases), 2)] {
		if !*fullSweep && !testing.Short() && i != 0 && i != 4 && i != 5 {
			continue
		}
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
			if acc < 0.95 {
				t.Errorf("accuracy %.1f%%, want >= 95%%", 100*acc)
			}
			for k, e := range errs {
				if e > 0.5 {
					t.Errorf("boundary %d is %.2f s off, want <= 0.5 s", k+1, e)
				}
			}
		})
	}
}

// TestSpeechMusicSweep alternates speech (every voice) and music (every
// kind, the held-out "organ" too) in random lengths of 10 to 30 s, with
// and without the speech's own pauses at the joins and with and without
// noise, and reports the accuracy and boundary errors over all of it. The
// plain run takes two of its eight programmes (one without pauses at the
// joins, one in noise); -sweep takes them all.
func TestSpeechMusicSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("speech/music sweep")
	}
	kinds := append(append([]string(nil), musicKinds...), "organ")
	r := audiotest.NewRand(42)
	u := func() float64 { return (r.Float() + 1) / 2 }
	var okBlocks, blocks, within, bounds int
	var worst float64
	worstCase := ""
	for trial := 0; trial < 8; trial++ {
		var desc []string
		speechKind := "speech"
		if trial%2 == 1 {
			speechKind = "tight"
		}
		musicFirst := trial%3 == 0
		for k := 0; k < 5; k++ {
			secs := 10 + int(20*u())
			if (k%2 == 0) != musicFirst {
				desc = append(desc, fmt.Sprintf("%s:%d", speechKind, secs))
			} else {
				desc = append(desc, fmt.Sprintf("music-%s:%d", kinds[int(u()*float64(len(kinds)))%len(kinds)], secs))
			}
		}
		if !*fullSweep && trial != 1 && trial != 4 {
			continue // the draws are made all the same: each trial is the same with -sweep
		}
		p := makeProgramme(t, desc...)
		if trial >= 4 {
			p.x, _ = testaudio.MixAtSNR(p.x, testaudio.PinkNoise(len(p.x), 0.1, uint64(trial)), 20)
		}
		res := analyse(t, p.x, Auto)
		acc, errs := segmentScore(res, p.parts)
		okBlocks += int(acc*float64(len(res.Labels)) + 0.5)
		blocks += len(res.Labels)
		for _, e := range errs {
			bounds++
			if e <= 0.5 {
				within++
			}
			if e > worst {
				worst, worstCase = e, strings.Join(desc, " ")
			}
		}
		t.Logf("%v noisy=%v: accuracy %.1f%%, boundary errors %.2f", desc, trial >= 4, 100*acc, errs)
	}
	t.Logf("sweep: accuracy %.2f%% of %d blocks; %d of %d boundaries within 0.5 s; worst %.2f s (%s)",
		100*float64(okBlocks)/float64(blocks), blocks, within, bounds, worst, worstCase)
	if float64(okBlocks) < 0.95*float64(blocks) || within < bounds {
		t.Error("sweep below 95% accuracy or with boundaries more than 0.5 s off")
	}
}

func TestMergeSegments(t *testing.T) {
	segs := []Segment{{Speech, 0, 100}, {Music, 100, 105}, {Speech, 105, 300}, {Music, 300, 310}, {Music, 310, 330}, {Speech, 330, 340}, {Music, 340, 400}}
	got := MergeSegments(segs, 25)
	want := []Segment{{Speech, 0, 300}, {Music, 300, 400}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MergeSegments (-want +got):\n%s", diff)
	}
	if segs[1].Label != Music {
		t.Error("MergeSegments changed its argument")
	}
	if got := MergeSegments(segs[:1], 1000); len(got) != 1 {
		t.Errorf("one short segment: %v", got)
	}
}

// TestSingleKind: a recording of one kind gets one segment of that kind;
// the forced modes label everything that is not silence.
func TestSingleKind(t *testing.T) {
	kinds := append(append([]string(nil), musicKinds...), "organ")
	for _, kind := range kinds[:shortN(len(kinds), 2)] {
		x := makeMusic(t, kind, 20, 3)
		r := analyse(t, x, Auto)
		music, voiced := 0, 0
		for i, l := range r.Labels {
			if l == Music {
				music++
			}
			if r.Voiced[i] {
				voiced++
			}
		}
		t.Logf("music %s: %d of %d blocks music, %d voiced; %d segments", kind, music, len(r.Labels), voiced, len(r.Segments))
		if float64(music) < 0.95*float64(len(r.Labels)) {
			t.Errorf("music %s: only %d of %d blocks labelled music", kind, music, len(r.Labels))
		}
	}
	x, _ := speechSegment(t, 30, 4)
	r := analyse(t, x, Auto)
	if len(r.Segments) != 1 || r.Segments[0].Label != Speech {
		t.Errorf("speech only: segments %v", r.Segments)
	}
	for _, l := range r.Labels {
		if l == Music {
			t.Fatal("speech only: a block labelled music")
		}
	}
	m := analyse(t, x, MusicOnly)
	for i, l := range m.Labels {
		if (l == Music) != m.Voiced[i] || l == Speech {
			t.Fatalf("MusicOnly: block %d labelled %v, voiced %v", i, l, m.Voiced[i])
		}
	}
	s := analyse(t, makeMusic(t, "pluck", 10, 1), SpeechOnly)
	if len(s.Segments) != 1 || s.Segments[0].Label != Speech {
		t.Errorf("SpeechOnly: segments %v", s.Segments)
	}
}

// nth is the element slices.Sort puts at index k, to the bit up to values
// equal in its order (+0 and -0, NaNs), on random lengths with
// duplicates, signed zeros and NaN; and evidence counts dips as the
// sorted scan does.
func TestNthIsSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 3000 {
		n := 1 + r.IntN(250)
		x := make([]float64, n)
		for i := range x {
			switch v := r.IntN(30); {
			case v == 0 && trial%3 == 0:
				x[i] = math.NaN()
			case v == 1:
				x[i] = math.Copysign(0, -1)
			case v == 2:
				x[i] = 0
			case v < 12:
				x[i] = float64(r.IntN(8)) - 40 // duplicates
			default:
				x[i] = r.NormFloat64()*20 - 40
			}
		}
		k := int(0.9 * float64(n-1))
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		want := sorted[k]
		wantDips := 0
		for _, v := range sorted {
			if v >= want-dipDB {
				break
			}
			wantDips++
		}
		got := quickselect.Nth(slices.Clone(x), k)
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("trial %d: nth(%d of %d) = %v, sorted %v", trial, k, n, got, want)
		}
		dips := 0
		for _, v := range x {
			if !(v >= got-dipDB) {
				dips++
			}
		}
		if dips != wantDips {
			t.Fatalf("trial %d: %d dips, the sorted scan counts %d", trial, dips, wantDips)
		}
	}
}

// silent decides as the sum of squares in order does, on frames of every
// level, frames right at the threshold (where only the ordered sum can
// tell) and frames with NaN, at the decimated rates the analyzer uses.
func TestSilentIsOrderedSum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, fsd := range []float64{8000, 12000, 16000, 23999} {
		s := newSpectral(fsd)
		thr := silentFrame * s.winPow
		x := make([]float64, s.nw)
		for trial := range 3000 {
			for i := range x {
				x[i] = r.NormFloat64()
			}
			var e float64
			for i, v := range x {
				w := v * s.win[i]
				e += w * w
			}
			// Scale to a random level around the threshold, some right at
			// it (the scaling rounds, so the ordered sum lands on either
			// side).
			k := math.Sqrt(thr / e)
			if trial%3 != 0 {
				k *= math.Pow(10, r.Float64()*4-2)
			}
			for i := range x {
				x[i] *= k
			}
			if trial%97 == 0 {
				x[r.IntN(len(x))] = math.NaN()
			}
			e = 0
			for i, v := range x {
				w := v * s.win[i]
				e += w * w
			}
			if got, want := s.silent(x), e < thr; got != want {
				t.Fatalf("fsd %v trial %d: silent %v, the ordered sum %g against %g says %v", fsd, trial, got, e, thr, want)
			}
		}
	}
}

// featuresBySort is msWindow.features written plainly: every
// percentile and median by sorting, every pair and loud sub-block judged
// where it is met.
func (r *Result) featuresBySort(lo, hi int) ([nMSFeatures]float64, bool) {
	var out [nMSFeatures]float64
	present := func(j int) bool { return r.feat(j).band > absoluteGate }
	voiced := func(j int) bool { return present(j) && r.feat(j).voicing > voicedAt }
	var bands, flux, flat, lp, steps []float64
	hiV, runs, runLen, cur := 0, 0, 0, 0
	gaps := 0 // sub-blocks in silent runs of longGap or more
	for j := lo; j < hi; {
		if present(j) {
			j++
			continue
		}
		k := j
		for k < hi && !present(k) {
			k++
		}
		if k-j >= longGap {
			gaps += k - j
		}
		j = k
	}
	for j := lo; j < hi; j++ {
		f := r.feat(j)
		if !voiced(j) && cur > 0 {
			runs, runLen, cur = runs+1, runLen+cur, 0
		}
		if !present(j) {
			continue
		}
		bands = append(bands, float64(f.band))
		flux = append(flux, float64(f.flux))
		flat = append(flat, float64(f.flat))
		if f.voicing > hiVoicedAt {
			hiV++
		}
		if voiced(j) {
			cur++
			lp = append(lp, 12*math.Log2(float64(f.pitch)/100))
			if j > lo && voiced(j-1) {
				steps = append(steps, min(maxStep, pitchStep(f.pitch, r.feat(j-1).pitch)))
			}
		}
	}
	if cur > 0 {
		runs, runLen = runs+1, runLen+cur
	}
	n := len(bands)
	if n < minActive {
		return out, false
	}
	sorted := func(x []float64) []float64 { y := slices.Clone(x); slices.Sort(y); return y }
	mean := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	sd := func(x []float64) float64 {
		m := mean(x)
		var s float64
		for _, v := range x {
			s += (v - m) * (v - m)
		}
		return math.Sqrt(s / float64(len(x)))
	}
	sb := sorted(bands)
	top, bottom := sb[int(0.9*float64(n-1))], sb[int(0.1*float64(n-1))]
	dips := 0
	for _, v := range bands {
		if v < top-dipDB {
			dips++
		}
	}
	out[fDips] = float64(dips) / float64(n)
	out[fSpread] = top - bottom
	out[fVoiced] = float64(len(lp)) / float64(n)
	out[fHiVoiced] = float64(hiV) / float64(n)
	if runs > 0 {
		out[fVoicedRun] = math.Log(float64(runLen) / float64(runs))
	}
	out[fFlux] = mean(flux)
	out[fFluxCV] = sd(flux) / (mean(flux) + 0.1)
	out[fFlat] = mean(flat)
	out[fLevelSD] = sd(bands)
	out[fPresent] = float64(n) / float64(hi-lo-gaps)
	onset := make([]float64, 0, (hi-lo)/2)
	for j := lo; j+1 < hi; j += 2 {
		var v float64
		for _, k := range []int{j, j + 1} {
			if present(k) {
				v += float64(r.feat(k).flux)
			}
		}
		onset = append(onset, v)
	}
	om := mean(onset)
	var r0 float64
	for i := range onset {
		onset[i] -= om
		r0 += onset[i] * onset[i]
	}
	for l := 12; l <= 75 && 2*l <= len(onset) && r0 > 0; l++ {
		var s float64
		for i := 0; i+l < len(onset); i++ {
			s += onset[i] * onset[i+l]
		}
		out[fRhythm] = max(out[fRhythm], s*float64(len(onset))/(r0*float64(len(onset)-l)))
	}
	if len(lp) > 4 {
		sl := sorted(lp)
		out[fPitchIQR] = sl[3*len(sl)/4] - sl[len(sl)/4]
		out[fPitchMed] = sl[len(sl)/2]
	}
	stepStats := func(st []float64) (float64, float64) {
		if len(st) == 0 {
			return 0, 0
		}
		k := 0
		for _, v := range st {
			if v < steadyCents {
				k++
			}
		}
		return float64(k) / float64(len(st)), sorted(st)[len(st)/2]
	}
	out[fSteady], out[fGlide] = stepStats(steps)
	loud := func(j int) bool { return present(j) && float64(r.feat(j).band) >= top-loudDB }
	var lsteps, lflux []float64
	lv := 0
	for j := lo; j < hi; j++ {
		if !loud(j) {
			continue
		}
		lflux = append(lflux, float64(r.feat(j).flux))
		if voiced(j) {
			lv++
			if j > lo && loud(j-1) && voiced(j-1) {
				lsteps = append(lsteps, min(maxStep, pitchStep(r.feat(j).pitch, r.feat(j-1).pitch)))
			}
		}
	}
	if len(lflux) > 0 {
		out[fLoudFlux] = mean(lflux)
		out[fLoudVoiced] = float64(lv) / float64(len(lflux))
	}
	out[fLoudSteady], out[fLoudGlide] = stepStats(lsteps)
	return out, true
}

// The features are what sorting every window and judging every pair
// where it is met give, on speech, music, their changes and the silence
// around them, for windows of every length the classifier reads.
func TestFeaturesAreSorted(t *testing.T) {
	p := makeProgramme(t, "speech:12", "music-pluck:10", "tight:8", "music-beat:8", "speech:6")
	x := append(make([]float64, 2*testFS), p.x...) // digital silence first, a long gap
	r := analyse(t, x, Auto)
	w := &msWindow{r: r}
	ns := r.feats.len()
	rnd := rand.New(rand.NewPCG(3, 4))
	windows := 0
	for trial := 0; trial < 3000; trial++ {
		lo := rnd.IntN(ns)
		hi := min(ns, lo+[]int{2 * sideLen, sideLen, (2*evidenceHalf + 1) * SubBlocks}[trial%3]+rnd.IntN(3)-1)
		got, gok := w.features(lo, hi)
		want, wok := r.featuresBySort(lo, hi)
		if gok != wok {
			t.Fatalf("[%d, %d): ok %v, by sorting %v", lo, hi, gok, wok)
		}
		if !wok {
			continue
		}
		windows++
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9*max(1, math.Abs(want[i])) {
				t.Fatalf("[%d, %d) %s: %v, by sorting %v", lo, hi, msFeatureNames[i], got[i], want[i])
			}
		}
	}
	if windows < 2000 {
		t.Errorf("only %d windows with sound: the comparison says little", windows)
	}
}
