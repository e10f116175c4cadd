package production_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
)

// The fuzzers of the work budget send arbitrary production and preset
// requests through the server's validation (decoding, Apply, the preset
// rules), probe the inputs as a length the fuzzer picks, fit the result to
// the budget (FitBudget, what saving does) and dry-run the planner: no
// accepted production may plan more work than its inputs' length allows.

// hostileSeeds are the requests of issue 31 and their relatives.
func hostileSeeds() []string {
	var b strings.Builder
	b.WriteString(`{"chapters":[`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"start":%g,"title":"c%d"}`, float64(i)*0.5, i)
	}
	b.WriteString(`],"output_files":[{"format":"opus","split_on_chapters":true}]}`)
	return []string{
		b.String(),
		`{"chapters":[{"start":0,"title":"a"},{"start":999999,"title":"far"}],"output_files":[{"format":"aac","split_on_chapters":true}]}`,
		`{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a"},{"type":"multitrack","id":"b","offset":1e12}],"output_files":[{"format":"wav"}]}`,
		`{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a"},{"type":"multitrack","id":"b","offset":1e6}],"output_files":[{"format":"mp3"}]}`,
		`{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","offset":86400,"algorithms":{"loop_trim":true}},{"type":"multitrack","id":"b","offset":600}]}`,
		`{"multi_input_files":[{"type":"intro","id":"i","offset":86400},{"type":"outro","id":"o","offset":0.5}],"output_files":[{"format":"mp3","split_on_chapters":true}],"chapters":[{"start":"00:00:01","title":"x"}]}`,
		`{"output_files":[{"format":"audiogram"},{"format":"video","subtitles":true},{"format":"audiogram","suffix":"b"},{"format":"audiogram","suffix":"c"},{"format":"audiogram","suffix":"d"}],"speech_recognition":{"uuid":"s"}}`,
		`{"algorithms":{"segments":[{"start":0,"stop":1e300}]}}`,
		`{"chapters":[{"start":1e12,"title":"x"},{"start":"999:59:59.999","title":"y"}]}`,
		`{"chapters":[{"start":0,"title":"a","image":"https://x.org/a.png"},{"start":1,"title":"b","image":"https://x.org/b.png"}],"output_files":[{"format":"mp3","split_on_chapters":true},{"format":"aac","split_on_chapters":true,"mono_mixdown":true}]}`,
		`{"algorithms":{"normloudness":false},"output_files":[{"format":"vorbis","split_on_chapters":true},{"format":"alac"}],"chapters":[{"start":0,"title":"a"},{"start":0.5,"title":"b"}]}`,
	}
}

// formats are the probed input formats the fuzzer picks from, and rates
// the sample rates (0: the probe did not say).
var (
	formats = []string{"wav", "flac", "mp3", "aac", "opus", "mov"}
	rates   = []int{0, 8000, 44100, 48000, 384000}
)

// probe sets every input of p to a probed length derived from seconds
// (tracks and intros get their own multiples), as saving does.
func probe(p *production.Production, seconds float64, format uint8) {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		seconds = 1
	}
	// Inputs are at least a frame and at most a few days long.
	seconds = math.Min(math.Max(math.Abs(seconds), 1e-4), 4*86400)
	f := formats[int(format)%len(formats)]
	p.InputFile, p.InputLength, p.Length, p.Format = "in."+f, seconds, seconds, f
	p.HasVideo = f == "mov"
	// Channels 0 to 31 (0: not said), so that the disk plan sees both.
	p.Channels, p.SampleRate = int(format/8)%32, rates[int(format)%len(rates)]
	for i := range p.MultiInputFiles {
		m := &p.MultiInputFiles[i]
		m.InputFile, m.InputFiletype = fmt.Sprintf("%s.%s", m.ID, f), f
		m.InputLength = seconds * float64(1+i%3)
		m.InputChannels, m.InputSampleRate = p.Channels, p.SampleRate
	}
}

// checkWithinBudget asserts that p, accepted under l, plans no more than
// its budget, from the plan's figures rather than CheckWork's verdict.
func checkWithinBudget(t *testing.T, p *production.Production, l production.Limits) {
	t.Helper()
	if !p.HasInput() {
		return // a multitrack production without tracks: nothing to run, and Start refuses it
	}
	l = l.WithDefaults()
	b, w := l.Budget(p), production.PlanWork(p)
	if !b.Known {
		t.Fatalf("budget unknown after probing: %+v", b)
	}
	for _, v := range []float64{b.Timeline, b.Inputs, b.Duration, w.Duration} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("length %v in budget %+v, work %+v", v, b, w)
		}
	}
	if w.Disk < 0 || w.DecodedDisk < 0 || w.OutputDisk < 0 {
		t.Fatalf("negative disk plan %+v", w)
	}
	if w.Parts > b.Parts || w.Files > b.Files || w.Processes > b.Processes || w.Memory > b.Memory || w.Duration > b.Duration || w.Disk > b.Disk {
		t.Fatalf("accepted work beyond the budget:\nwork   %+v\nbudget %+v", w, b)
	}
	if w.Parts > l.Parts || float64(w.Parts) > 1+b.Timeline/l.PartSeconds || w.Processes > production.BaseProcesses+int(b.Timeline*l.ProcessesPerSecond) {
		t.Fatalf("work %+v not bounded by %v s of input", w, b.Timeline)
	}
	if len(p.Chapters) > production.MaxChapters || len(p.OutputFiles) > production.MaxOutputFiles || len(p.MultiInputFiles) > production.MaxMultiInputFiles {
		t.Fatalf("lists beyond the caps: %d chapters, %d outputs, %d inputs", len(p.Chapters), len(p.OutputFiles), len(p.MultiInputFiles))
	}
	end := time.Duration(math.Round(b.Timeline * float64(time.Second)))
	for _, c := range p.ChapterPositions() {
		if c.Start < 0 || c.Start >= end || c.OutputStart < 0 {
			t.Fatalf("chapter %q at %v (output %v) on a timeline of %v", c.Title, c.Start, c.OutputStart, end)
		}
	}
	for _, m := range p.MultiInputFiles {
		if !(m.Offset >= 0 && m.Offset <= production.MaxOffset) {
			t.Fatalf("offset %v accepted", m.Offset)
		}
		// What the engine converts offsets to must not overflow.
		if d := time.Duration(m.Offset * float64(time.Second)); d < 0 {
			t.Fatalf("offset %v overflows a Duration", m.Offset)
		}
	}
	for _, s := range p.Algorithms.In(production.ScopeSingletrack).Segments("segments") {
		if d := time.Duration(s.Stop * float64(time.Second)); d < 0 || s.Stop > production.MaxSegmentSeconds {
			t.Fatalf("segment stop %v accepted", s.Stop)
		}
	}
	// Fitting again changes nothing: saving twice is saving once.
	n := len(p.Chapters)
	if err := p.FitBudget(l); err != nil || len(p.Chapters) != n {
		t.Fatalf("second FitBudget: %v, %d chapters of %d", err, len(p.Chapters), n)
	}
}

// fit is what saving does after probing; a rejection must be a form
// error.
func fit(t *testing.T, p *production.Production, l production.Limits) bool {
	t.Helper()
	err := p.FitBudget(l)
	if err == nil {
		return true
	}
	var fe production.FieldErrors
	if !errors.As(err, &fe) || len(fe) == 0 {
		t.Fatalf("FitBudget error %v is not a form error", err)
	}
	return false
}

// limitsOf gives the fuzzer a few server configurations.
func limitsOf(k uint8) production.Limits {
	switch k % 4 {
	case 1:
		return production.Limits{Parts: 3, PartSeconds: 10, Files: 20, Processes: 300, Memory: 256 << 20, Silence: 1, Disk: 256 << 20}
	case 2:
		return production.Limits{Parts: 1 << 20, PartSeconds: 1e-3, Files: 1 << 20, Processes: 1 << 30, ProcessesPerSecond: 1000, Memory: 1 << 40, Silence: 1e9, Disk: math.MaxInt64}
	case 3:
		return production.Limits{PartSeconds: math.Inf(1), Silence: math.NaN(), ProcessesPerSecond: -1}
	}
	return production.Limits{}
}

func FuzzProductionBudget(f *testing.F) {
	for i, s := range hostileSeeds() {
		f.Add([]byte(s), 10.0, uint8(i), uint8(i))
	}
	f.Add([]byte(`{"output_files":[{"format":"mp3"}]}`), 3600.0, uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, seconds float64, format, limits uint8) {
		in, err := production.DecodeInput(body)
		if err != nil {
			return
		}
		p, err := production.New(in, production.ApplyOptions{})
		if err != nil {
			if !errors.Is(err, production.ErrInvalid) {
				t.Fatalf("New: %v does not wrap ErrInvalid", err)
			}
			return
		}
		l := limitsOf(limits)
		probe(p, seconds, format)
		if fit(t, p, l) {
			checkWithinBudget(t, p, l)
		}
	})
}

// FuzzPresetBudget makes a preset of the body and a production from it
// (with the body's chapters, which presets do not have), as a client
// creating a production from a preset does.
func FuzzPresetBudget(f *testing.F) {
	for i, s := range hostileSeeds() {
		f.Add([]byte(strings.Replace(s, "{", `{"preset_name":"p",`, 1)), 10.0, uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, body []byte, seconds float64, format, limits uint8) {
		in, err := preset.DecodeInput(body)
		if err != nil {
			return
		}
		chapters := in.Chapters
		in.Chapters = nil
		pr, err := preset.New(in, production.ApplyOptions{})
		if err != nil {
			return
		}
		pr.UUID = "preset"
		presets := production.Presets{"preset": pr.Template()}
		p, err := production.New(&production.Input{Preset: "preset", Chapters: chapters}, production.ApplyOptions{Presets: presets})
		if err != nil {
			if !errors.Is(err, production.ErrInvalid) {
				t.Fatalf("New: %v does not wrap ErrInvalid", err)
			}
			return
		}
		l := limitsOf(limits)
		probe(p, seconds, format)
		if fit(t, p, l) {
			checkWithinBudget(t, p, l)
		}
	})
}
