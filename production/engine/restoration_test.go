package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// runEngine processes a mono 48 kHz input with a request and returns the
// production and the decoded first output.
func runEngine(t *testing.T, x []float64, request string) (*production.Production, audio.Buffer, string) {
	t.Helper()
	const rate = 48000
	dir, outDir := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAVBits(t, in, [][]float64{x}, rate, 24)
	p := newProduction(t, request)
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: in}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := audio.Open(context.Background(), filepath.Join(outDir, p.OutputFilename(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return p, out, outDir
}

// bandLevel is the power in dB of x around the frequencies fs (±2 Hz),
// measured with a long DFT over [from, to).
func bandLevel(x []float64, rate int, freqs []float64, from, to int64) float64 {
	var p float64
	n := to - from
	for _, f := range freqs {
		var re, im float64
		for i := from; i < to; i++ {
			w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i-from)/float64(n))
			ph := 2 * math.Pi * f * float64(i) / float64(rate)
			re += w * x[i] * math.Cos(ph)
			im += w * x[i] * math.Sin(ph)
		}
		p += (re*re + im*im) / float64(n*n)
	}
	return 10 * math.Log10(p)
}

// The case: a hummy recording processed with
// {"denoise": true, "dehum": 50} comes out without its hum, the speech
// kept, and the statistics say what was removed.
func TestEngineDehum(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	const rate = 48000
	speech, spans := testaudio.Phrases(t, rate, testaudio.Sentences[:3], 1.5, testaudio.Voices[0])
	speech = testaudio.Scale(speech, 0.3)
	hum := testaudio.Hum(len(speech), rate, 50, 300, math.Pow(10, -36.0/20))
	x := testaudio.Add(speech, hum)
	// Noise reduction off (denoiseamount -1), so what goes is the hum.
	p, out, _ := runEngine(t, x, `{"input_file": "https://example.org/talk.wav", "output_files": [{"format": "wav-24bit"}],
		"algorithms": {"denoise": true, "denoiseamount": -1, "dehum": 50, "leveler": false, "normloudness": false}}`)
	harm := []float64{100, 150, 200, 250, 300} // 50 Hz itself goes with the high-pass
	pause := testaudio.Complement(spans, len(x), rate/4)[1]
	before := bandLevel(x, rate, harm, pause.Start, pause.End)
	after := bandLevel(out[0], rate, harm, pause.Start, pause.End)
	sIn, sOut := testaudio.SpanDB(x, spans), testaudio.SpanDB(out[0], spans)
	t.Logf("hum 100-300 Hz in a pause: %.1f -> %.1f dB; speech level %.1f -> %.1f dBFS; %s",
		before, after, sIn, sOut, statsJSON(t, p.Statistics.NoiseHumReduction))
	// The hum falls 25 dB more than the speech does (the leveler and
	// normalization are off, the high-pass touches neither much).
	if drop := (before - after) - (sIn - sOut); drop < 25 {
		t.Errorf("hum reduced %.1f dB relative to the speech, want 25 or more", drop)
	}
	nh := p.Statistics.NoiseHumReduction
	if len(nh) == 0 || nh[0].Dehum == nil || *nh[0].Dehum != 50 || nh[0].Denoise != nil {
		t.Errorf("noise_hum_reduction %s, want dehum 50", statsJSON(t, nh))
	}
	if p.WarningMessage != "" {
		t.Errorf("warning %q", p.WarningMessage)
	}
}

func statsJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The cutters through the engine: 3 s pauses come out short, chapters
// move with the cuts, the statistics list them, and export_uncut_audio
// keeps the length with the same cut list as a file.
func TestEngineCutter(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	const rate = 48000
	x, spans := testaudio.Phrases(t, rate, testaudio.Sentences[:4], 3, testaudio.Voices[1])
	chapterAt := float64(spans[2].Start) / rate
	req := func(mode string) string {
		return `{"input_file": "https://example.org/talk.wav", "output_files": [{"format": "wav"}, {"format": "cutlist", "ending": "txt"}, {"format": "cutlist", "ending": "json"}],
			"chapters": [{"start": "` + production.FormatTimestamp(seconds(chapterAt)) + `", "title": "Third"}],
			"algorithms": {"cutter": true, "cut_mode": "` + mode + `"}}`
	}
	p, out, outDir := runEngine(t, x, req("apply_cuts"))
	cut := float64(len(x)-out.Frames()) / rate
	t.Logf("apply_cuts: %d cuts, %.1f s removed of %.1f s: %s", len(p.Statistics.Cuts), cut, float64(len(x))/rate, statsJSON(t, p.Statistics.Cuts))
	if len(p.Statistics.Cuts) < 3 || cut < 3*1.9 {
		t.Errorf("%d cuts removing %.1f s; want the three 3 s pauses shortened", len(p.Statistics.Cuts), cut)
	}
	// The chapter starts where its sentence now starts.
	ch := p.ChapterPositions()[0]
	removedBefore := 0.0
	for _, c := range p.Cuts {
		if c.Stop <= chapterAt {
			removedBefore += c.Stop - c.Start
		}
	}
	if got, want := ch.OutputStart.Seconds(), chapterAt-removedBefore; math.Abs(got-want) > 0.1 {
		t.Errorf("chapter at %.2f s in the output, its sentence at %.2f s", got, want)
	}
	labels, err := os.ReadFile(filepath.Join(outDir, p.OutputFilename(1)))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := classify.ReadAudacityLabels(strings.NewReader(string(labels)), rate)
	if err != nil {
		t.Fatal(err)
	}

	pe, outE, outDirE := runEngine(t, x, req("export_uncut_audio"))
	if outE.Frames() != len(x) {
		t.Errorf("export_uncut_audio: %d frames out of %d", outE.Frames(), len(x))
	}
	if c := pe.ChapterPositions()[0].OutputStart.Seconds(); math.Abs(c-chapterAt) > 0.001 {
		t.Errorf("export_uncut_audio moved the chapter to %.3f s", c)
	}
	data, err := os.ReadFile(filepath.Join(outDirE, pe.OutputFilename(2)))
	if err != nil {
		t.Fatal(err)
	}
	var edl classify.EDL
	if err := json.Unmarshal(data, &edl); err != nil {
		t.Fatal(err)
	}
	exported, err := edl.CutList()
	if err != nil {
		t.Fatal(err)
	}
	if statsJSON(t, exported) != statsJSON(t, applied) {
		t.Errorf("exported cut list %v differs from the applied one %v", exported, applied)
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Noise reduction off (denoiseamount -1) leaves the reverb and breath
// reductions on: each is applied, measured against the same request
// without it.
func TestEngineDeverbDebreathWithoutNoiseReduction(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	const rate = 48000
	// Each of the four renders costs about 0.4 s of CPU a second of
	// audio: the reverb pair renders one phrase in the room (3.3 s), the
	// breath pair two phrases (one pause, one breath; 7.7 s).
	room := func(dry []float64) []float64 {
		return testaudio.Add(testaudio.Convolve(dry, testaudio.RoomImpulse(rate, 0.7, 0, 5)), testaudio.WhiteNoise(len(dry), 1e-4, 9))
	}
	one, _ := testaudio.Phrases(t, rate, testaudio.Sentences[:1], 0.8, testaudio.Voices[0])
	one = testaudio.Scale(one, 0.3)
	wet := room(one)
	run := func(algorithms string) []float64 {
		p, out, _ := runEngine(t, wet, `{"input_file": "https://example.org/talk.wav", "output_files": [{"format": "wav-24bit"}],
			"algorithms": {"denoise": true, "denoiseamount": -1, "hipfilter": false, "leveler": false, "normloudness": false, `+algorithms+`}}`)
		if p.WarningMessage != "" {
			t.Errorf("%s: warning %q", algorithms, p.WarningMessage)
		}
		return out[0]
	}
	on := testaudio.SISDR(one, run(`"denoisemethod": "static", "deverbamount": 0`))
	off := testaudio.SISDR(one, run(`"denoisemethod": "static", "deverbamount": -1`))
	t.Logf("SI-SDR against the dry speech: %.2f dB with deverb, %.2f without, input %.2f", on, off, testaudio.SISDR(one, wet))
	if on-off < 2 {
		t.Errorf("deverb with denoiseamount -1 gains %+.2f dB SI-SDR, want 2 or more", on-off)
	}

	// Breaths: a 300 ms burst of noise 25 dB under the speech in the
	// middle of each pause of the dry speech.
	dry, spans := testaudio.Phrases(t, rate, testaudio.Sentences[:2], 0.8, testaudio.Voices[0])
	dry = testaudio.Scale(dry, 0.3)
	x := append([]float64(nil), dry...)
	level := math.Pow(10, (testaudio.SpanDB(dry, spans)-25)/20)
	var breaths []audio.Span
	for i := 0; i+1 < len(spans); i++ {
		mid, n := int((spans[i].End+spans[i+1].Start)/2), 3*rate/10
		b := testaudio.WhiteNoise(n, level, uint64(i+1))
		for j := range b {
			e := math.Sin(math.Pi * float64(j) / float64(n))
			x[mid-n/2+j] += b[j] * e * e * 1.6
		}
		breaths = append(breaths, audio.Span{Start: int64(mid - n/4), End: int64(mid + n/4)})
	}
	x = testaudio.Add(x, testaudio.WhiteNoise(len(x), 1e-4, 3))
	wet = x
	with := run(`"denoisemethod": "dynamic", "deverbamount": -1, "debreathamount": 12`)
	without := run(`"denoisemethod": "dynamic", "deverbamount": -1`)
	drop := testaudio.SpanDB(without, breaths) - testaudio.SpanDB(with, breaths)
	t.Logf("breaths %.1f dB lower with debreathamount 12 than without", drop)
	if drop < 6 {
		t.Errorf("debreath with denoiseamount -1 lowers the breaths by %.1f dB, want 6 or more", drop)
	}
}
