package benchmarks

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/peers"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
)

var (
	reportPath     = flag.String("report", "", "TestQualityReport writes its markdown report here, its plots beside it")
	reportSections = flag.String("sections", "", "TestQualityReport measures only these sections (comma-separated: classifier,denoise,clean,dehum,deverb,debreath,silence,speed)")
)

const qfs = realaudio.Rate

// TestQualityReport measures every restoration feature on the held-out
// half of the real-recording corpus (internal/realaudio) beside its peers
// run in the same go, and writes a markdown report with SVG plots:
//
//	go test ./benchmarks -run QualityReport -report quality.md -timeout 30m
//
// (the path is relative to benchmarks/). Without -report it is skipped.
// Figures are what the code does today, acceptance or not.
func TestQualityReport(t *testing.T) {
	if *reportPath == "" {
		t.Skip("writes the quality report only when asked: -report quality.md")
	}
	need.Program(t, "ffmpeg")
	need.Program(t, "sox")
	c := realaudio.Load(t, realaudio.HeldOut)
	r := &report{dir: filepath.Dir(*reportPath), base: strings.TrimSuffix(filepath.Base(*reportPath), filepath.Ext(*reportPath))}
	start := time.Now()
	for _, s := range []struct {
		name string
		run  func(*testing.T, *realaudio.Corpus)
	}{
		{"classifier", r.classifier}, {"denoise", r.denoise}, {"clean", r.clean}, {"dehum", r.dehum},
		{"deverb", r.deverb}, {"debreath", r.debreath}, {"silence", r.silence}, {"speed", r.speed},
	} {
		if *reportSections != "" && !strings.Contains(","+*reportSections+",", ","+s.name+",") {
			continue
		}
		t0 := time.Now()
		s.run(t, c)
		t.Logf("%s: %v", s.name, time.Since(t0).Round(time.Second))
	}
	r.elapsed = time.Since(start)
	if err := r.write(*reportPath); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s in %v", *reportPath, r.elapsed.Round(time.Second))
}

// report collects the figures.
type report struct {
	dir, base string
	summary   []summaryRow
	sections  []string
	plots     map[string]string // file -> svg
	elapsed   time.Duration
}

type summaryRow struct {
	feature, figure, ours, peers, acceptance string
	pass                                     bool
}

func (r *report) add(row summaryRow) { r.summary = append(r.summary, row) }

func (r *report) section(title, body string) {
	r.sections = append(r.sections, "## "+title+"\n\n"+body)
}

func (r *report) plot(name, svg string) string {
	if r.plots == nil {
		r.plots = map[string]string{}
	}
	file := r.base + "-" + name + ".svg"
	r.plots[file] = svg
	return file
}

func (r *report) write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Quality on real recordings (held-out half)\n\n")
	fmt.Fprintf(&b, "Measured by `go test ./benchmarks -run QualityReport -report %s` on the held-out half of the real-recording corpus (internal/realaudio), peers run in the same go; %s, %d CPUs, %v.\n\n",
		filepath.Base(path), runtime.GOARCH, runtime.NumCPU(), r.elapsed.Round(time.Second))
	b.WriteString("| feature | figure | audiopost | best peer | acceptance | met |\n|---|---|---|---|---|---|\n")
	for _, s := range r.summary {
		met := "no"
		if s.pass {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", s.feature, s.figure, s.ours, s.peers, s.acceptance, met)
	}
	b.WriteString("\n")
	for _, s := range r.sections {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	for f, svg := range r.plots {
		if err := os.WriteFile(filepath.Join(r.dir, f), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// --- running audiopost and the peers -------------------------------------

func src(x []float64) audio.Source { return audio.NewBufferSource(audio.Buffer{x}, qfs) }

func readMono(t testing.TB, s audio.Source) []float64 {
	t.Helper()
	b, err := audio.ReadAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return b[0]
}

// vad is the voice activity mask the product gives the Profiler:
// dsp/classify's on the input itself.
func vad(t testing.TB, x []float64) []bool {
	t.Helper()
	return classifyRun(t, x).Voiced
}

func classifyRun(t testing.TB, x []float64) *classify.Result {
	t.Helper()
	a, err := classify.NewClassifier(audio.Format{SampleRate: qfs, Channels: 1}, classify.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, src(x)); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

// profile runs the Profiler as the product does for settings s: with the
// room model only when s reduces reverb.
func profile(t testing.TB, x []float64, s spectral.Settings) *spectral.Profile {
	t.Helper()
	noRoom := !(&spectral.Restoration{Settings: s}).ReducesReverb()
	a, err := spectral.NewProfiler(audio.Format{SampleRate: qfs, Channels: 1}, spectral.ProfilerOptions{VAD: vad(t, x), NoRoom: noRoom})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), a, src(x)); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

// ours runs the product's two passes (Profiler with the classifier's VAD,
// then the Denoiser) over x and returns the output and the stats.
func ours(t testing.TB, x []float64, s spectral.Settings, dehum bool) ([]float64, []spectral.SegmentStats) {
	t.Helper()
	opts := spectral.DenoiserOptions{Settings: s, Profile: profile(t, x, s)}
	if dehum {
		opts.Dehum = &spectral.DehumOptions{}
	}
	d, err := spectral.NewDenoiser(src(x), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := readMono(t, d)
	return out, d.Stats()
}

var methods = []string{"classic", "static", "dynamic", "speech_isolation"}

func method(t testing.TB, name string) spectral.Method {
	m, err := spectral.ParseMethod(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// peer runs an external program over x (a 32-bit float WAV file in, raw
// floats out) and returns its output lined up with x.
func peer(t testing.TB, x []float64, prog string, args func(in string) []string) []float64 {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wav")
	testaudio.WriteWAVBits(t, in, [][]float64{x}, qfs, 32)
	cmd := exec.Command(prog, args(in)...)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v %s", prog, args(in), err, msg)
	}
	y := make([]float64, len(out)/4)
	for i := range y {
		y[i] = float64(math.Float32frombits(uint32(out[4*i]) | uint32(out[4*i+1])<<8 | uint32(out[4*i+2])<<16 | uint32(out[4*i+3])<<24))
	}
	if len(y) < len(x) {
		y = append(y, make([]float64, len(x)-len(y))...)
	}
	y = y[:len(x)]
	// Line the output up with the input (a filter's own delay: afftdn's is
	// 25 ms): the shift within ±100 ms under which the loudest second of
	// the output matches the input's best by SI-SDR, searched in steps of 8
	// samples and then 1.
	at := loudestSecond(x)
	n := min(qfs, len(x)-at)
	best, bestD := math.Inf(-1), 0
	try := func(d int) {
		if at+d < 0 || at+d+n > len(y) {
			return
		}
		if s := testaudio.SISDR(x[at:at+n], y[at+d:at+d+n]); s > best {
			best, bestD = s, d
		}
	}
	for d := -4800; d <= 4800; d += 8 {
		try(d)
	}
	for d := bestD - 8; d <= bestD+8; d++ {
		try(d)
	}
	if bestD != 0 {
		y = testaudio.Shift(y, bestD)
	}
	return y
}

func loudestSecond(x []float64) int {
	best, at := -1.0, 0
	for i := 0; i+qfs <= len(x); i += qfs / 2 {
		if p := testaudio.RMS(x[i : i+qfs]); p > best {
			best, at = p, i
		}
	}
	return at
}

func ffmpegFilter(filter string) func(in string) []string {
	return func(in string) []string {
		return []string{"-nostdin", "-v", "error", "-threads", "1", "-filter_threads", "1", "-i", in, "-af", filter, "-ac", "1", "-ar", fmt.Sprint(qfs), "-f", "f32le", "-"}
	}
}

// peerRecording is what a user has of x: the recording and its pauses by
// the classifier's voice activity mask, which the peers of internal/peers
// learn the noise from as a user would (never the clean noise track).
func peerRecording(t testing.TB, x []float64) peers.Recording {
	return peers.Recording{X: x, Rate: qfs, Pauses: peers.Pauses(x, vad(t, x), spectral.BlockFrames(qfs), qfs)}
}

// peerNames are internal/peers's Denoisers as the report names them.
func peerName(p peers.Denoiser) string {
	switch {
	case strings.HasPrefix(p.Name, "afftdn"), p.Name == "anlmdn", p.Name == "afwtdn":
		return "ffmpeg " + p.Name
	}
	return p.Name
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// --- the features ---------------------------------------------------------

func (r *report) classifier(t *testing.T, c *realaudio.Corpus) {
	var rows strings.Builder
	rows.WriteString("| programme | seconds | right | seconds wrong, by what truly plays |\n|---|---|---|---|\n")
	var timeline string
	var right, total, rightAway, totalAway int
	// How far from each true switch the nearest switch found lies, and
	// where the worst is.
	var switches int
	worst, worstAt := 0.0, ""
	for pi, p := range c.Programmes() {
		res := classifyRun(t, p.Input)
		for _, g := range p.Segments[1:] {
			off := math.Inf(1)
			for _, f := range res.Segments[1:] {
				off = min(off, math.Abs(float64(f.Start-int64(g.Start)))/qfs)
			}
			switches++
			if off > worst || worstAt == "" {
				worst, worstAt = off, fmt.Sprintf("%s at %.1f s, into %s", p.ID, float64(g.Start)/qfs, g.What)
			}
		}
		got := make([]string, len(p.Labels))
		for s := range got {
			cover := map[classify.Label]int64{}
			for _, g := range res.Segments {
				a, b := max(g.Start, int64(s*qfs)), min(g.End, int64((s+1)*qfs))
				if b > a {
					cover[g.Label] += b - a
				}
			}
			if cover[classify.Music] > cover[classify.Speech] {
				got[s] = "music"
			} else {
				got[s] = "speech"
			}
		}
		wrongBy := map[string]int{}
		pr, pt := 0, 0
		for s, want := range p.Labels {
			ok := got[s] == want
			near := false
			for _, g := range p.Segments {
				if math.Abs(float64(g.Start)/qfs-float64(s)) < 1 || math.Abs(float64(g.Start)/qfs-float64(s+1)) < 1 {
					near = g.Start > 0
				}
				if near {
					break
				}
			}
			total++
			pt++
			if ok {
				right++
				pr++
			}
			if !near {
				totalAway++
				if ok {
					rightAway++
				}
			}
			if !ok {
				for _, g := range p.Segments {
					if g.Start <= s*qfs+qfs/2 && s*qfs+qfs/2 < g.End {
						wrongBy[g.What]++
					}
				}
			}
		}
		var kinds []string
		for k, n := range wrongBy {
			kinds = append(kinds, fmt.Sprintf("%s %d s", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&rows, "| %s | %d | %.1f%% | %s |\n", p.ID, pt, 100*float64(pr)/float64(pt), strings.Join(kinds, ", "))
		if pi == 0 {
			timeline = r.plot("classifier-timeline", timelineSVG(p, got))
		}
	}
	pct := 100 * float64(right) / float64(total)
	away := 100 * float64(rightAway) / float64(totalAway)
	fmt.Fprintf(&rows, "\nAll programmes: %.1f%% of %d seconds right; %.1f%% of the %d seconds more than 1 s from a boundary.\n\n![classifier timeline](%s)\n", pct, total, away, totalAway, timeline)
	fmt.Fprintf(&rows, "\nSwitches between speech and music: %d; the switch found nearest each lies %.2f s from it at worst (%s).\n", switches, worst, worstAt)
	r.add(summaryRow{"speech/music classifier", "% of seconds right (programmes of speech and 5 kinds of music, beds)", fmt.Sprintf("%.1f%%", pct), "—", "95%", pct >= 95})
	r.add(summaryRow{"speech/music boundaries", fmt.Sprintf("worst of %d switches, nearest switch found", switches), fmt.Sprintf("%.2f s", worst), "—", "1 s", worst <= 1})
	r.section("Speech/music classifier", "dsp/classify's Classifier (mode auto) over the held-out programmes: real speech alternating with real or sampled music of five kinds (orchestral, percussive, electronic, guitar/piano, sung vocals), some speech over a music bed 15 dB below (labelled speech). A second is right when the segment label covering most of it is the truth's.\n\n"+rows.String())
}

func (r *report) denoise(t *testing.T, c *realaudio.Corpus) {
	mixes := c.NoisySpeech()
	type acc struct{ gains map[string][]float64 } // interferer -> gains
	names := append([]string{}, methods...)
	for _, p := range peers.Denoisers {
		names = append(names, peerName(p))
	}
	res := map[string]map[string][]float64{}
	for _, n := range names {
		res[n] = map[string][]float64{}
	}
	for _, m := range mixes {
		before := testaudio.SISDR(m.Clean, m.Input)
		for _, name := range methods {
			out, _ := ours(t, m.Input, spectral.Settings{Method: method(t, name)}, false)
			res[name][m.Interferer] = append(res[name][m.Interferer], testaudio.SISDR(m.Clean, out)-before)
		}
		rec := peerRecording(t, m.Input)
		for _, p := range peers.Denoisers {
			out := p.Run(t, rec)
			res[peerName(p)][m.Interferer] = append(res[peerName(p)][m.Interferer], testaudio.SISDR(m.Clean, out)-before)
		}
	}
	var b strings.Builder
	b.WriteString("| method | all | " + strings.Join(realaudio.Interferers, " | ") + " |\n|---|---|" + strings.Repeat("---|", len(realaudio.Interferers)) + "\n")
	// The acceptance for static and dynamic is on real noise
	// (stationary or not); babble and music are speech_isolation's.
	all, noise := map[string]float64{}, map[string]float64{}
	var bars []bar
	for _, n := range names {
		var v []float64
		cells := []string{}
		for _, k := range realaudio.Interferers {
			v = append(v, res[n][k]...)
			cells = append(cells, fmt.Sprintf("%+.1f", mean(res[n][k])))
		}
		all[n] = mean(v)
		noise[n] = mean(append(append([]float64{}, res[n]["stationary"]...), res[n]["nonstationary"]...))
		fmt.Fprintf(&b, "| %s | %+.1f | %s |\n", n, all[n], strings.Join(cells, " | "))
		bars = append(bars, bar{n, all[n], !strings.Contains(n, " ")})
	}
	bestPeer, bestName := math.Inf(-1), ""
	for _, p := range peers.Denoisers {
		if noise[peerName(p)] > bestPeer {
			bestPeer, bestName = noise[peerName(p)], peerName(p)
		}
	}
	f := r.plot("denoise", barsSVG("Denoise: SI-SDR gain on real speech + real noise, 5-15 dB SNR (dB)", bars, 5))
	b.WriteString("\n![denoise](" + f + ")\n")
	for _, n := range []string{"static", "dynamic"} {
		r.add(summaryRow{"denoise " + n, "SI-SDR gain on real noise, 5-15 dB SNR", fmt.Sprintf("%+.1f dB", noise[n]), fmt.Sprintf("%+.1f dB (%s)", bestPeer, bestName), "≥ +5 dB and ≥ best peer + 2 dB", noise[n] >= 5 && noise[n] >= bestPeer+2})
	}
	// Babble and music apart: the "babble or music" is read as
	// each kind reported, beside the best peer on that kind.
	for _, kind := range []string{"babble", "music"} {
		iso := mean(res["speech_isolation"][kind])
		peer, name := math.Inf(-1), ""
		for _, p := range peers.Denoisers {
			if g := mean(res[peerName(p)][kind]); g > peer {
				peer, name = g, peerName(p)
			}
		}
		r.add(summaryRow{"denoise speech_isolation, " + kind, "SI-SDR gain on " + kind + ", 5-15 dB SNR", fmt.Sprintf("%+.1f dB", iso), fmt.Sprintf("%+.1f dB (%s)", peer, name), "≥ +6 dB", iso >= 6})
	}
	var cfg []string
	for _, p := range peers.Denoisers {
		cfg = append(cfg, peerName(p)+": "+p.Config)
	}
	r.section("Denoise", fmt.Sprintf("%d held-out mixes: real speech plus a real noise (stationary or not), six-talker babble or music at 5, 10 and 15 dB SNR, 8 s each. Our methods run the product's two passes (Profiler with the classifier's VAD, automatic amount); the peers (internal/peers) run as a user would, learning the noise from the recording's pauses by the same VAD (its quietest tenth where it finds under half a second of them): %s. The summary's figure for static and dynamic is the mean over the real noises (stationary and nonstationary), the issue's acceptance. Mean SI-SDR gain in dB:\n\n", len(mixes), strings.Join(cfg, "; "))+b.String())
}

func (r *report) clean(t *testing.T, c *realaudio.Corpus) {
	// The clips without noise (realaudio.NoiseFreeDB, as dsp/spectral's
	// TestRealCleanSpeech and TestRealAutoAmountClean take them): every
	// sixth clip of the whole half took in a prompt with a hiss of its own
	// 30 dB under the speech, whose 17 dB of automatic reduction is the
	// automatic amount doing its work, not a reduction of a clean recording.
	var clips []realaudio.Clip
	for _, cl := range c.Clips() {
		if realaudio.FloorBelowDB(cl.Samples) >= realaudio.NoiseFreeDB {
			clips = append(clips, cl)
		}
	}
	// every sixth clip: enough speakers, a bounded run time
	var sel []realaudio.Clip
	for i := 0; i < len(clips); i += 6 {
		sel = append(sel, clips[i])
	}
	var b strings.Builder
	b.WriteString("| method | mean SI-SDR | worst | automatic amount chosen (mean, max) |\n|---|---|---|---|\n")
	worstAll, maxAuto := math.Inf(1), 0.0
	var bars []bar
	for _, name := range methods {
		var v, amt []float64
		for _, cl := range sel {
			out, st := ours(t, cl.Samples, spectral.Settings{Method: method(t, name)}, false)
			v = append(v, testaudio.SISDR(cl.Samples, out))
			for _, s := range st {
				amt = append(amt, s.ReductionDB)
			}
		}
		worstAll = min(worstAll, minOf(v))
		maxAuto = max(maxAuto, maxOf(amt))
		fmt.Fprintf(&b, "| %s | %.1f dB | %.1f dB | %.1f dB, %.1f dB |\n", name, mean(v), minOf(v), mean(amt), maxOf(amt))
		bars = append(bars, bar{name, minOf(v), true})
	}
	for _, p := range peers.Denoisers {
		if !strings.HasPrefix(peerName(p), "ffmpeg") {
			continue
		}
		var v []float64
		for _, cl := range sel {
			v = append(v, testaudio.SISDR(cl.Samples, p.Run(t, peerRecording(t, cl.Samples))))
		}
		fmt.Fprintf(&b, "| %s | %.1f dB | %.1f dB | |\n", peerName(p), mean(v), minOf(v))
		bars = append(bars, bar{peerName(p), minOf(v), false})
	}
	f := r.plot("clean", barsSVG("Clean real speech through each method: worst SI-SDR (dB)", bars, 25))
	b.WriteString("\n![clean](" + f + ")\n")
	r.add(summaryRow{"denoise, clean speech", "worst SI-SDR over all methods", fmt.Sprintf("%.1f dB", worstAll), "", "> 25 dB", worstAll > 25})
	r.add(summaryRow{"denoise, automatic amount", "largest amount chosen on clean speech", fmt.Sprintf("%.1f dB", maxAuto), "", "≤ 6 dB", maxAuto <= 6})
	r.section("Clean speech", fmt.Sprintf("%d held-out clean clips (every sixth of those whose noise floor lies %d dB or more under the speech) through each method at the automatic amount:\n\n", len(sel), realaudio.NoiseFreeDB)+b.String())
}

func (r *report) dehum(t *testing.T, c *realaudio.Corpus) {
	var b strings.Builder
	b.WriteString("| | hum reduction (mean, worst) | speech SI-SDR after (mean, worst) |\n|---|---|---|\n")
	type res struct{ red, sdr []float64 }
	var o, n res
	for _, m := range c.Hummed() {
		d, err := spectral.NewDehum(src(m.Input), spectral.DehumOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := readMono(t, d)
		// The hum left: half the difference between the outputs for
		// speech plus hum and speech minus hum (exact for a linear filter,
		// and for an estimator that is odd in the hum), so that what the
		// processing does to the speech does not count as hum.
		neg := make([]float64, len(m.Input))
		for i := range neg {
			neg[i] = m.Clean[i] - m.Hum.Samples[i]
		}
		d2, err := spectral.NewDehum(src(neg), spectral.DehumOptions{})
		if err != nil {
			t.Fatal(err)
		}
		left := func(a, b []float64) []float64 {
			y := make([]float64, len(a))
			for i := range y {
				y[i] = (a[i] - b[i]) / 2
			}
			return y
		}
		o.red = append(o.red, testaudio.DB(m.Hum.Samples)-testaudio.DB(left(out, readMono(t, d2))))
		o.sdr = append(o.sdr, testaudio.SISDR(m.Clean, out))
		// The peer: a notch at every harmonic of the nominal frequency.
		var f []string
		for h := 1; float64(h)*m.Hum.Base <= realaudio.HumMaxHz; h++ {
			f = append(f, fmt.Sprintf("bandreject=f=%g:width_type=h:w=4", float64(h)*m.Hum.Base))
		}
		pout := peer(t, m.Input, "ffmpeg", ffmpegFilter(strings.Join(f, ",")))
		pneg := peer(t, neg, "ffmpeg", ffmpegFilter(strings.Join(f, ",")))
		n.red = append(n.red, testaudio.DB(m.Hum.Samples)-testaudio.DB(left(pout, pneg)))
		n.sdr = append(n.sdr, testaudio.SISDR(m.Clean, pout))
	}
	fmt.Fprintf(&b, "| audiopost Dehum | %.1f dB, %.1f dB | %.1f dB, %.1f dB |\n", mean(o.red), minOf(o.red), mean(o.sdr), minOf(o.sdr))
	fmt.Fprintf(&b, "| notch chain (ffmpeg bandreject, 4 Hz, every harmonic) | %.1f dB, %.1f dB | %.1f dB, %.1f dB |\n", mean(n.red), minOf(n.red), mean(n.sdr), minOf(n.sdr))
	f := r.plot("dehum", barsSVG("Dehum with 0.5 Hz drift: worst speech SI-SDR after (dB)", []bar{{"audiopost", minOf(o.sdr), true}, {"notch chain", minOf(n.sdr), false}}, 20))
	b.WriteString("\n![dehum](" + f + ")\n\nThe hum left is half the difference of the outputs for speech plus hum and speech minus hum, so what the processing does to the speech does not count as hum.\n")
	r.add(summaryRow{"dehum (0.5 Hz drift)", "hum reduction, worst", fmt.Sprintf("%.1f dB", minOf(o.red)), fmt.Sprintf("%.1f dB (notch chain)", minOf(n.red)), "≥ 25 dB", minOf(o.red) >= 25})
	r.add(summaryRow{"dehum (0.5 Hz drift)", "speech SI-SDR after, worst", fmt.Sprintf("%.1f dB", minOf(o.sdr)), fmt.Sprintf("%.1f dB (notch chain)", minOf(n.sdr)), "≥ 20 dB", minOf(o.sdr) >= 20})
	r.section("Dehum", fmt.Sprintf("Held-out speech with hum at 50 and 60 Hz, %g dB under the speech, its frequency wandering %.1f Hz over each file, harmonics to 1 kHz:\n\n", realaudio.HumBelowDB, realaudio.HumDrift)+b.String())
}

func (r *report) deverb(t *testing.T, c *realaudio.Corpus) {
	img, err := c.Reverberant()
	if err != nil {
		t.Fatal(err)
	}
	sox, err := c.SoxReverberant()
	if err != nil {
		t.Fatal(err)
	}
	var rooms []realaudio.Reverb
	for _, rv := range img {
		if rv.RT60 >= 0.5 && rv.RT60 <= 1.0 {
			rooms = append(rooms, rv)
		}
	}
	rooms = append(rooms, sox...)
	var b strings.Builder
	b.WriteString("| method | noise reduction | image-source rooms | sox reverb | all |\n|---|---|---|---|---|\n")
	worst := math.Inf(1)
	var bars []bar
	for _, name := range []string{"static", "dynamic", "speech_isolation"} {
		for _, red := range []float64{0, -1} {
			g := map[string][]float64{}
			var all []float64
			for _, rv := range rooms {
				out, _ := ours(t, rv.Input, spectral.Settings{Method: method(t, name), ReductionDB: red}, false)
				d := testaudio.SISDR(rv.Dry, out) - testaudio.SISDR(rv.Dry, rv.Input)
				g[rv.Method] = append(g[rv.Method], d)
				all = append(all, d)
			}
			on := "on (auto)"
			if red < 0 {
				on = "off (-1)"
			}
			fmt.Fprintf(&b, "| %s | %s | %+.1f dB | %+.1f dB | %+.1f dB |\n", name, on, mean(g["image-source"]), mean(g["sox"]), mean(all))
			// The issue asks +3 dB of image-source rooms and of sox's
			// reverb each: the summary is the worst kind of room, not the
			// mean of the two.
			worst = min(worst, mean(g["image-source"]), mean(g["sox"]))
			bars = append(bars, bar{name + " " + on, mean(all), true})
		}
	}
	f := r.plot("deverb", barsSVG("Deverb: SI-SDR gain, RT60 0.5-1.0 s (dB)", bars, 3))
	b.WriteString("\n![deverb](" + f + ")\n")
	r.add(summaryRow{"deverb", "SI-SDR gain, RT60 0.5-1.0 s, worst method/noise setting/kind of room", fmt.Sprintf("%+.1f dB", worst), "", "≥ +3 dB", worst >= 3})
	r.section("Deverb", fmt.Sprintf("%d held-out rooms with RT60 0.5 to 1.0 s: image-source shoebox rooms and sox reverb, reverb reduction full (deverbamount 0), noise reduction automatic or off. The reference is the dry speech lined up with the direct path. Mean SI-SDR gain:\n\n", len(rooms))+b.String())
}

func (r *report) debreath(t *testing.T, c *realaudio.Corpus) {
	bs, err := c.Breathy()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| asked | breaths reduced (mean, range) | word onsets changed (worst) | breaths found by the node |\n|---|---|---|---|\n")
	pass := true
	var worst12 float64
	n := 0
	for _, s := range bs {
		n += len(s.Breaths)
	}
	for _, amount := range []float64{6, 12, 24} {
		var red, word []float64
		found := 0
		for _, s := range bs {
			d, err := spectral.NewDebreath(src(s.Input), spectral.DebreathOptions{AmountDB: amount})
			if err != nil {
				t.Fatal(err)
			}
			out := readMono(t, d)
			found += len(d.Breaths())
			for i, br := range s.Breaths {
				sp := []audio.Span{{Start: br.Start, End: br.End}}
				red = append(red, testaudio.SpanDB(s.Input, sp)-testaudio.SpanDB(out, sp))
				w := []audio.Span{{Start: s.Words[i].Start, End: s.Words[i].End}}
				word = append(word, math.Abs(testaudio.SpanDB(s.Input, w)-testaudio.SpanDB(out, w)))
			}
		}
		fmt.Fprintf(&b, "| %g dB | %.1f dB (%.1f to %.1f) | %.2f dB | %d of %d |\n", amount, mean(red), minOf(red), maxOf(red), maxOf(word), found, n)
		if math.Abs(mean(red)-amount) > 3 || maxOf(word) > 1 {
			pass = false
		}
		if amount == 12 {
			worst12 = mean(red)
		}
	}
	r.add(summaryRow{"debreath", "real breaths reduced, 12 dB asked (mean)", fmt.Sprintf("%.1f dB", worst12), "", "asked ±3 dB, word onsets within 1 dB (6/12/24)", pass})
	r.section("Debreath", fmt.Sprintf("%d real inhalations labelled in held-out conversational speech (codec2-examples ve9qrp, cut in %d pieces), through spectral.Debreath at the amount asked; a breath's reduction is its level before less after, a word onset's change that of the 200 ms after the breath:\n\n", n, len(bs))+b.String())
}

func (r *report) silence(t *testing.T, c *realaudio.Corpus) {
	need.Program(t, pocketsphinx.Program)
	need.Path(t, "/usr/share/pocketsphinx/model/en-us")
	rec, err := pocketsphinx.New(speech.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| file | pauses over 1 s before | longest pause after | WER before | WER after |\n|---|---|---|---|---|\n")
	var werB, werA []float64
	longest := 0.0
	for _, p := range c.Paused() {
		res := classifyRun(t, p.Input)
		cuts := res.Cuts(classify.CutOptions{Silence: true})
		cut, err := classify.NewCutter(src(p.Input), cuts, classify.CutterOptions{Fade: classify.DefaultFade})
		if err != nil {
			t.Fatal(err)
		}
		out := readMono(t, cut)
		tm, err := classify.NewTimeMap(cuts, qfs)
		if err != nil {
			t.Fatal(err)
		}
		lp := 0.0
		for _, s := range p.Pauses {
			lp = max(lp, float64(tm.Frame(int64(s.End))-tm.Frame(int64(s.Start)))/qfs)
		}
		longest = max(longest, lp)
		wb := wer(p.Transcript, recognize(t, rec, p.Input))
		wa := wer(p.Transcript, recognize(t, rec, out))
		werB, werA = append(werB, wb), append(werA, wa)
		fmt.Fprintf(&b, "| %s | %d | %.2f s | %.1f%% | %.1f%% |\n", p.ID, len(p.Pauses), lp, 100*wb, 100*wa)
	}
	d := 100 * (mean(werA) - mean(werB))
	fmt.Fprintf(&b, "\nMean WER %.1f%% before, %.1f%% after (%+.1f points).\n", 100*mean(werB), 100*mean(werA), d)
	r.add(summaryRow{"silence cutter", "longest pause after / WER change", fmt.Sprintf("%.2f s / %+.1f points", longest, d), "", "≤ 1 s / within 2 points", longest <= 1.0001 && d <= 2})
	r.section("Silence cutter", "Held-out prompts (Allison, asterisk-core-sounds-en) joined by pauses of 0.5 to 3.2 s of their room tone, through the classifier's silence cutter (max pause 1 s, kept 0.7 s); pause lengths after from the cut list's time map; word error rate of PocketSphinx (speech/pocketsphinx) against the transcripts, numbers spelt out:\n\n"+b.String())
}

func recognize(t testing.TB, rec *pocketsphinx.Recognizer, x []float64) string {
	t.Helper()
	tr, err := rec.Recognize(context.Background(), src(x), speech.Options{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	var w []string
	for _, word := range tr.Words {
		w = append(w, word.Text)
	}
	return strings.Join(w, " ")
}

var numberWords = map[string]string{"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight", "9": "nine", "#": "pound", "*": "star"}

// words lowercases, strips punctuation and spells digits out.
func words(s string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ToLower(s)) {
		f = strings.Trim(f, ".,;:!?\"()")
		if f == "" {
			continue
		}
		if w, ok := numberWords[f]; ok {
			f = w
		}
		if strings.Contains(f, "(") { // pocketsphinx's alternate pronunciations: word(2)
			f = f[:strings.Index(f, "(")]
		}
		if f == "<s>" || f == "</s>" || f == "<sil>" || strings.HasPrefix(f, "[") || strings.HasPrefix(f, "<") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// wer is the word error rate of hyp against ref: edit distance over the
// reference's word count.
func wer(ref, hyp string) float64 {
	a, b := words(ref), words(hyp)
	if len(a) == 0 {
		return math.NaN()
	}
	d := make([]int, len(b)+1)
	for j := range d {
		d[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := d[0]
		d[0] = i
		for j := 1; j <= len(b); j++ {
			cur := d[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[j] = min(d[j]+1, d[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return float64(d[len(b)]) / float64(len(a))
}

func (r *report) speed(t *testing.T, c *realaudio.Corpus) {
	var x []float64
	for _, m := range c.Hummed() {
		x = append(x, m.Input...)
	}
	secs := float64(len(x)) / qfs
	// As BenchmarkDenoise measures it (speedPeer): CPU times, our two
	// passes on one core with the VAD the product's analysis pass makes
	// anyway, reverb reduction off (afftdn has none), both reading the
	// same WAV file, runs alternating.
	in := filepath.Join(t.TempDir(), "in.wav")
	testaudio.WriteWAV(t, in, [][]float64{x}, qfs)
	voiced := vad(t, x)
	const runs = 3
	var ourT, peerT time.Duration
	for range runs {
		cpu, frames := staticDehumCPU(t, in, voiced)
		if frames != int64(len(x)) {
			t.Fatalf("%d frames of %d", frames, len(x))
		}
		ourT += cpu
		peerT += afftdnCPU(t, in)
	}
	ratio := peerT.Seconds() / ourT.Seconds()
	r.add(summaryRow{"speed", "static denoise + dehum (both passes) vs afftdn, one core, CPU time", fmt.Sprintf("%.0fx realtime", runs*secs/ourT.Seconds()), fmt.Sprintf("%.0fx realtime (afftdn)", runs*secs/peerT.Seconds()), "faster than afftdn", ratio > 1})
	r.section("Speed", fmt.Sprintf("%.0f s of held-out hummed speech, mono 48 kHz, in a 16-bit WAV file, %d runs of each side alternating; CPU time (user and system), the definition BenchmarkDenoise shares (benchmarks/denoise_bench_test.go, speedPeer). audiopost: the Profiler given the classifier's voice activity mask (which the product's analysis pass computes for the loudness whether or not it denoises) and the Static Denoiser with Dehum, reverb reduction off as afftdn has none, GOMAXPROCS=1, WAV decoding included: %.0fx realtime. ffmpeg `%s`, -threads 1 -filter_threads 1, output discarded, the process's CPU: %.0fx realtime. audiopost is %.2fx afftdn's speed. `go test ./benchmarks -run '^$' -bench 'Denoise/static-dehum' -benchtime 3x` measures the same on three minutes of synthetic noisy speech, stereo and mono (x_afftdn).", secs, runs, runs*secs/ourT.Seconds(), speedPeer, runs*secs/peerT.Seconds(), ratio))
}
