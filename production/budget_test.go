package production

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// probedAt returns the production of body as if its inputs had been probed:
// the main input (when it has one) length seconds long in format, and
// every intro, outro and track too.
func probedAt(t *testing.T, body string, length float64, format string) *Production {
	t.Helper()
	p, err := create(t, body)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if p.InputFile != "" {
		p.InputLength, p.Length, p.Format = length, length, format
	}
	for i := range p.MultiInputFiles {
		m := &p.MultiInputFiles[i]
		if m.InputFile != "" {
			m.InputLength, m.InputFiletype = length, format
		}
	}
	return p
}

// chaptersJSON returns n chapters every step seconds from 0.
func chaptersJSON(n int, step float64) string {
	var b strings.Builder
	b.WriteString(`"chapters":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"start":%g,"title":"Chapter %d"}`, float64(i)*step, i+1)
	}
	b.WriteByte(']')
	return b.String()
}

const input = `"input_file":"https://example.org/in.wav"`

func TestFitBudgetDropsChaptersPastTheEnd(t *testing.T) {
	p := probedAt(t, `{`+input+`,"chapters":[{"start":0,"title":"Start"},{"start":"00:00:09.999","title":"Last"},
		{"start":10,"title":"At the end"},{"start":999999,"title":"Far"}],"output_files":[{"format":"aac","split_on_chapters":true}]}`, 10, "wav")
	if err := p.FitBudget(Limits{}); err != nil {
		t.Fatalf("FitBudget: %v", err)
	}
	var kept []string
	for _, c := range p.Chapters {
		kept = append(kept, c.Title)
	}
	if strings.Join(kept, ",") != "Start,Last" {
		t.Errorf("kept %q, want Start and Last", kept)
	}
	want := `2 chapters at or after the end of the input (00:00:10.000) dropped: 00:00:10.000 "At the end", 277:46:39.000 "Far"`
	if p.WarningMessage != want {
		t.Errorf("warning %q\nwant    %q", p.WarningMessage, want)
	}
	if p.WarningStatus == nil || *p.WarningStatus != p.Status {
		t.Errorf("warning status %v, want the production's %v", p.WarningStatus, p.Status)
	}
	// Nothing more to drop: no second warning.
	if err := p.FitBudget(Limits{}); err != nil || strings.Count(p.WarningMessage, "dropped") != 1 {
		t.Errorf("second FitBudget: %v, warning %q", err, p.WarningMessage)
	}
}

func TestChaptersDroppedWarningNamesFirstFive(t *testing.T) {
	p := probedAt(t, `{`+input+`,`+chaptersJSON(1000, 1)+`}`, 10, "wav")
	if err := p.FitBudget(Limits{}); err != nil {
		t.Fatal(err)
	}
	if len(p.Chapters) != 10 {
		t.Fatalf("%d chapters kept, want 10", len(p.Chapters))
	}
	want := `990 chapters at or after the end of the input (00:00:10.000) dropped: 00:00:10.000 "Chapter 11", 00:00:11.000 "Chapter 12", ` +
		`00:00:12.000 "Chapter 13", 00:00:13.000 "Chapter 14", 00:00:14.000 "Chapter 15" and 985 more`
	if p.WarningMessage != want {
		t.Errorf("warning %q\nwant    %q", p.WarningMessage, want)
	}
}

// TestBudgetUnknownUntilProbed: without a probed length nothing is dropped
// and no length-bound rule applies; the check waits for the input.
func TestBudgetUnknownUntilProbed(t *testing.T) {
	p, err := create(t, `{`+input+`,`+chaptersJSON(1000, 0.5)+`,"output_files":[{"format":"opus","split_on_chapters":true}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if b := (Limits{}).Budget(p); b.Known {
		t.Fatalf("budget known before the input was probed: %+v", b)
	}
	if err := p.FitBudget(Limits{}); err != nil || len(p.Chapters) != 1000 || p.WarningMessage != "" {
		t.Fatalf("FitBudget before probing: %v, %d chapters, warning %q", err, len(p.Chapters), p.WarningMessage)
	}
}

func TestCheckWorkSplitParts(t *testing.T) {
	for _, c := range []struct {
		name     string
		chapters int
		step     float64
		length   float64
		limits   Limits
		want     string // message at output_files.0.split_on_chapters, "" for none
	}{
		{"one part per second", 10, 1, 10, Limits{}, ""},
		{"eleven on ten seconds", 11, 0.9, 10, Limits{}, ""},
		{"twenty on ten seconds", 20, 0.5, 10, Limits{}, "would split into 20 parts, one per chapter; 10 s of input allow at most 11 (one per 1 s of input, at most 500)"},
		{"a thousand on an hour", 1000, 3, 3600, Limits{}, "would split into 1000 parts, one per chapter; 1 h 0 min of input allow at most 500 (one per 1 s of input, at most 500)"},
		{"configured", 30, 1, 60, Limits{Parts: 25}, "at most 25 (one per 1 s of input, at most 25)"},
		{"configured seconds", 30, 1, 60, Limits{PartSeconds: 5}, "at most 13 (one per 5 s of input, at most 500)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := probedAt(t, `{`+input+`,`+chaptersJSON(c.chapters, c.step)+`,"output_files":[{"format":"opus","split_on_chapters":true},{"format":"wav"}]}`, c.length, "wav")
			err := p.FitBudget(c.limits)
			if len(p.Chapters) != c.chapters {
				t.Fatalf("%d chapters left of %d", len(p.Chapters), c.chapters)
			}
			fe := fieldErr(t, err)
			if c.want == "" {
				if fe != nil {
					t.Fatalf("rejected: %v", fe)
				}
				if w := PlanWork(p); w.Parts != c.chapters || w.Files != c.chapters+1+2 {
					t.Errorf("planned %d parts and %d files, want %d and %d", w.Parts, w.Files, c.chapters, c.chapters+3)
				}
				return
			}
			if msg := fe["output_files.0.split_on_chapters"]; !strings.Contains(msg, c.want) {
				t.Fatalf("output_files.0.split_on_chapters: %q, want %q (all: %v)", msg, c.want, fe)
			}
		})
	}
}

// TestCheckWorkFilesAndProcesses: many split lossy outputs of a short
// input are held by the processes they would start, bound to the input's
// length; a long input by the files.
func TestCheckWorkFilesAndProcesses(t *testing.T) {
	outputs := func(n int, format string) string {
		var b strings.Builder
		b.WriteString(`"output_files":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"format":%q,"split_on_chapters":true,"suffix":"-%d"}`, format, i)
		}
		return b.String() + "]"
	}
	// 32 outputs of 11 parts of 10 s: 352 files, 1,408 processes (each part
	// an encoder and its verifying decoder, twice); 10 s allow 280.
	p := probedAt(t, `{`+input+`,`+chaptersJSON(11, 0.9)+`,`+outputs(32, "mp3")+`}`, 10, "wav")
	fe := fieldErr(t, p.FitBudget(Limits{}))
	if msg := fe["output_files"]; !strings.Contains(msg, "would start 1408 external processes") || !strings.Contains(msg, "at most 280") {
		t.Errorf("output_files: %q (all %v)", msg, fe)
	}
	// The same as WAV starts no process: 354 files are fine.
	p = probedAt(t, `{`+input+`,`+chaptersJSON(11, 0.9)+`,`+outputs(32, "wav")+`}`, 10, "wav")
	if err := p.FitBudget(Limits{}); err != nil {
		t.Errorf("32 split WAV outputs of 10 s: %v", err)
	}
	// An hour in 400 parts, as 3 WAV outputs: 1,202 files.
	p = probedAt(t, `{`+input+`,`+chaptersJSON(400, 9)+`,`+outputs(3, "wav")+`}`, 3600, "wav")
	fe = fieldErr(t, p.FitBudget(Limits{}))
	if msg := fe["output_files"]; msg != "would write 1202 files (split parts included); at most 1000" {
		t.Errorf("output_files: %q (all %v)", msg, fe)
	}
	if err := p.FitBudget(Limits{Files: 1202}); err != nil {
		t.Errorf("with Files 1202: %v", err)
	}
}

func TestCheckWorkOffsets(t *testing.T) {
	tracks := func(offsets ...string) string {
		var b strings.Builder
		b.WriteString(`{"is_multitrack":true,"output_files":[{"format":"wav"}],"multi_input_files":[`)
		for i, o := range offsets {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"type":"multitrack","id":"t%d","input_file":"https://example.org/%d.wav","offset":%s}`, i, i, o)
		}
		return b.String() + "]}"
	}
	// Two 10 s tracks: 20 s of input, 600 s of silence allowed.
	if err := probedAt(t, tracks("0", "610"), 10, "wav").FitBudget(Limits{}); err != nil {
		t.Errorf("offset 610: %v", err)
	}
	fe := fieldErr(t, probedAt(t, tracks("0", "611"), 10, "wav").FitBudget(Limits{}))
	want := "places the track's end at 10 min 21 s; the inputs together are 20 s long, and offsets may add at most 10 min 0 s of silence"
	if fe["multi_input_files.1.offset"] != want || len(fe) != 1 {
		t.Errorf("offset 611: %v", fe)
	}
	// Every track too far is named.
	fe = fieldErr(t, probedAt(t, tracks("5000", "0", "86400"), 10, "wav").FitBudget(Limits{}))
	if len(fe) != 2 || fe["multi_input_files.0.offset"] == "" || fe["multi_input_files.2.offset"] == "" {
		t.Errorf("offsets 5000 and 86400: %v", fe)
	}
	if err := probedAt(t, tracks("5000"), 10, "wav").FitBudget(Limits{Silence: 5000}); err != nil {
		t.Errorf("offset 5000 with 5000 s of silence allowed: %v", err)
	}
	// The fixed caps hold before any probe; 1e12 s would overflow a
	// time.Duration.
	for _, o := range []string{"1e12", "1e6", "86400.5", "-1"} {
		_, err := create(t, tracks("0", o))
		if fe := fieldErr(t, err); !strings.Contains(fe["multi_input_files.1.offset"], "from 0 to 86400") {
			t.Errorf("offset %s: %v", o, fe)
		}
	}
	// A looped track follows the others: its own length does not lengthen
	// the programme, and chapters are placed on the mix. One that starts
	// after the others' end still makes the mix last until its start, as
	// dsp/mixdown renders it.
	mix := func(bedOffset string) string {
		return `{"is_multitrack":true,"chapters":[{"start":11,"title":"In"},{"start":17,"title":"Bed"},{"start":25,"title":"Past"}],"multi_input_files":[
		{"type":"multitrack","id":"a","input_file":"https://example.org/a.wav","offset":5},
		{"type":"multitrack","id":"bed","input_file":"https://example.org/bed.wav","offset":` + bedOffset + `,"algorithms":{"loop_trim":true}}]}`
	}
	for _, c := range []struct {
		bed      string
		duration float64
		kept     int
	}{{"3", 15, 1}, {"20", 20, 2}} {
		p := probedAt(t, mix(c.bed), 10, "wav")
		if err := p.FitBudget(Limits{}); err != nil || len(p.Chapters) != c.kept {
			t.Errorf("bed at %s s: %v, kept %+v", c.bed, err, p.Chapters)
		}
		if w := PlanWork(p); w.Duration != c.duration || w.Tracks != 2 {
			t.Errorf("bed at %s s: planned %v s of %d tracks, want %v s of 2", c.bed, w.Duration, w.Tracks, c.duration)
		}
	}
	fe = fieldErr(t, probedAt(t, mix("700"), 10, "wav").FitBudget(Limits{}))
	if !strings.Contains(fe["multi_input_files.1.offset"], "places the track's end at 11 min 40 s") {
		t.Errorf("bed at 700 s: %v", fe)
	}
}

func TestCheckWorkMemory(t *testing.T) {
	videos := `"output_files":[{"format":"audiogram"},{"format":"audiogram","suffix":"-b"},{"format":"audiogram","suffix":"-c"},{"format":"audiogram","suffix":"-d"}]`
	p := probedAt(t, `{`+input+`,`+videos+`}`, 60, "wav")
	fe := fieldErr(t, p.FitBudget(Limits{}))
	if !strings.Contains(fe[""], "processing would need about 1088 MB of memory") {
		t.Errorf("four video renders: %v", fe)
	}
	if err := p.FitBudget(Limits{Memory: 2 << 30}); err != nil {
		t.Errorf("with 2 GB: %v", err)
	}
	// Chapter images are held in memory: 130 distinct ones do not fit.
	var b strings.Builder
	b.WriteString(`{` + input + `,"chapters":[`)
	for i := range 130 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"start":%d,"title":"c","image":"https://example.org/%d.png"}`, i, i)
	}
	b.WriteString(`]}`)
	p = probedAt(t, b.String(), 600, "wav")
	if fe := fieldErr(t, p.FitBudget(Limits{})); !strings.Contains(fe[""], "chapter images") {
		t.Errorf("130 chapter images: %v", fe)
	}
}

// TestPlanWorkRoomMemory: the noise reduction's room model keeps band
// levels of its whole input, so a three-hour input with denoise on plans
// 45 MB more than without, and its reverb reduction up to 25 MB (stereo,
// 48 kHz); a multitrack production that much for each denoised track,
// the reverb reduction's blocks in proportion to the track's rate.
func TestPlanWorkRoomMemory(t *testing.T) {
	const hours = 3
	plan := func(body string) int64 { return PlanWork(probedAt(t, body, hours*3600, "wav")).Memory }
	off, on := plan(`{`+input+`}`), plan(`{`+input+`,"algorithms":{"denoise":true}}`)
	if want := hours*roomMemoryPerHour + reverbMemory(2, 48000); on-off != want {
		t.Errorf("denoise on plans %d MB more, want %d", (on-off)>>20, want>>20)
	}
	// WPE's buffers on 8 s blocks, stereo, 48 kHz: 21.7 MB (10^6 bytes)
	// by their sizes, as BenchmarkNodes/dynamic-deverb-room's 27.5 MB
	// allocated against 13.3 on 2 s blocks (7.4 of them WPE's) agree.
	if r := reverbMemory(2, 48000); r < 21_700_000 || r > 26_000_000 {
		t.Errorf("the reverb reduction of a stereo 48 kHz input plans %d bytes, want 21.7 to 26 MB", r)
	}
	tracks := func(denoise string) string {
		return `{"is_multitrack":true,"multi_input_files":[
		{"type":"multitrack","id":"a","input_file":"https://example.org/a.wav","algorithms":{"denoise":` + denoise + `}},
		{"type":"multitrack","id":"b","input_file":"https://example.org/b.wav","algorithms":{"denoise":` + denoise + `}},
		{"type":"multitrack","id":"c","input_file":"https://example.org/c.wav"}]}`
	}
	if d, want := plan(tracks("true"))-plan(tracks("false")), 2*(hours*roomMemoryPerHour+reverbMemory(2, 48000)); d != want {
		t.Errorf("two denoised tracks plan %d MB more, want %d", d>>20, want>>20)
	}
	p := probedAt(t, tracks("true"), hours*3600, "wav")
	p.MultiInputFiles[0].InputChannels, p.MultiInputFiles[0].InputSampleRate = 1, 96000
	if d, want := PlanWork(p).Memory-plan(tracks("true")), reverbMemory(1, 96000)-reverbMemory(2, 48000); d != want || want != -reverbChannelMemory {
		t.Errorf("a mono 96 kHz track instead of stereo 48 kHz plans %d MB more, want %d", d>>20, -reverbChannelMemory>>20)
	}
}

// TestPlanWorkDenoisedTracks: sixteen stereo 48 kHz one-hour multitrack
// tracks with denoise on fit the default memory limit, as they did
// before the reverb reduction was counted; with WPE's two blocks of full
// spectra (60 MB a track instead of 24) they planned 1584 MB.
func TestPlanWorkDenoisedTracks(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"is_multitrack":true,"multi_input_files":[`)
	for i := range 16 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"multitrack","id":"t%d","input_file":"https://example.org/t%d.wav","algorithms":{"denoise":true}}`, i, i)
	}
	b.WriteString(`]}`)
	p := probedAt(t, b.String(), 3600, "wav")
	for i := range p.MultiInputFiles {
		p.MultiInputFiles[i].InputChannels, p.MultiInputFiles[i].InputSampleRate = 2, 48000
	}
	if err := p.FitBudget(Limits{}); err != nil {
		t.Errorf("16 denoised stereo one-hour tracks (%d MB planned): %v", PlanWork(p).Memory>>20, err)
	}
}

// TestCheckWorkDisk: a two-hour Opus input decodes to 2.6 GB of 32-bit
// floats (production/engine keeps it for the whole run); a WAV input of
// the same length decodes to nothing. Beyond the disk limit the error
// names the input when its decode alone does not fit, the outputs when
// their temporary files tip the sum.
func TestCheckWorkDisk(t *testing.T) {
	const hours2 = 7200
	stereo48 := func(p *Production) *Production {
		p.Channels, p.SampleRate = 2, 48000
		return p
	}
	body := `{` + input + `,"output_files":[{"format":"flac"}]}`
	p := stereo48(probedAt(t, body, hours2, "opus"))
	w := PlanWork(p)
	if want := int64(hours2*48000*2*4 + fileOverheadBytes); w.DecodedDisk != want || w.DecodedInputs["input_file"] != want || w.OutputDisk != 0 || w.Disk != want {
		t.Errorf("two hours of Opus: planned %+v, want %d decoded", w, want)
	}
	if err := p.FitBudget(Limits{}); err != nil {
		t.Errorf("two hours of Opus under the default %d GB: %v", DefaultDisk>>30, err)
	}
	fe := fieldErr(t, p.FitBudget(Limits{Disk: 2 << 30}))
	if want := "processing would need up to 2.6 GB of temporary disk (2.6 GB for inputs only ffmpeg decodes, kept as 32-bit floats; 0.0 MB for the encoders' temporary files); at most 2.0 GB"; fe["input_file"] != want || len(fe) != 1 {
		t.Errorf("two hours of Opus under 2 GB: %v", fe)
	}
	if w := PlanWork(stereo48(probedAt(t, body, hours2, "wav"))); w.Disk != 0 {
		t.Errorf("two hours of WAV: planned %d bytes of disk", w.Disk)
	}
	// Unknown channels and rate count as stereo at 48 kHz.
	if w := PlanWork(probedAt(t, body, hours2, "aac")); w.DecodedDisk != int64(hours2*48000*2*4+fileOverheadBytes) {
		t.Errorf("unprobed format: planned %d bytes", w.DecodedDisk)
	}

	// Lossy outputs: twice the file at the format's highest bitrate, with
	// the cover (the chapter-tagged copy beside the file).
	lossy := `{` + input + `,"output_files":[{"format":"mp3","bitrate":64},{"format":"opus"},{"format":"wav"}]}`
	p = stereo48(probedAt(t, lossy, hours2, "wav"))
	w = PlanWork(p)
	mp3 := int64(320_000/8*hours2*containerOverhead) + fileOverheadBytes + coverBytes
	opus := int64(256_000/8*hours2*containerOverhead) + fileOverheadBytes + coverBytes
	if w.OutputDisk != 2*(mp3+opus) || w.DecodedDisk != 0 {
		t.Errorf("mp3 and opus outputs: planned %d bytes, want %d", w.OutputDisk, 2*(mp3+opus))
	}
	// Each encoder is held to its part.
	if !slices.Equal(w.OutputTemp, []int64{2 * mp3, 2 * opus, 0}) {
		t.Errorf("mp3, opus and wav outputs: planned %v for their encoders, want %v", w.OutputTemp, []int64{2 * mp3, 2 * opus, 0})
	}
	fe = fieldErr(t, p.FitBudget(Limits{Disk: 1 << 30}))
	if !strings.Contains(fe["output_files"], "up to 1.1 GB of temporary disk") || len(fe) != 1 {
		t.Errorf("mp3 and opus outputs under 1 GB: %v", fe)
	}
	// The same outputs from the Opus input: its decode alone fits 3 GB,
	// with the outputs it does not, and the outputs are named.
	p = stereo48(probedAt(t, lossy, hours2, "opus"))
	if fe := fieldErr(t, p.FitBudget(Limits{Disk: 3 << 30})); !strings.Contains(fe["output_files"], "(2.6 GB for inputs") || len(fe) != 1 {
		t.Errorf("Opus input and lossy outputs under 3 GB: %v", fe)
	}

	// A multitrack production: every track ffmpeg decodes, named by the
	// largest, and the "tracks" output's largest track (4 bytes a sample
	// up to its end in the mix).
	multi := `{"is_multitrack":true,"output_files":[{"format":"tracks"}],"multi_input_files":[
		{"type":"multitrack","id":"a","input_file":"https://example.org/a.m4a"},
		{"type":"multitrack","id":"b","input_file":"https://example.org/b.m4a","offset":600}]}`
	p = probedAt(t, multi, hours2, "aac")
	for i := range p.MultiInputFiles {
		p.MultiInputFiles[i].InputChannels, p.MultiInputFiles[i].InputSampleRate = 1+i, 48000
	}
	w = PlanWork(p)
	a, b := int64(hours2*48000*1*4+fileOverheadBytes), int64(hours2*48000*2*4+fileOverheadBytes)
	if w.DecodedInputs["multi_input_files.0"] != a || w.DecodedInputs["multi_input_files.1"] != b || w.DecodedDisk != a+b {
		t.Errorf("two tracks: planned %v", w.DecodedInputs)
	}
	if want := int64((hours2+600)*48000*2*4 + fileOverheadBytes); w.OutputDisk != want || w.OutputTemp[0] != want {
		t.Errorf("tracks output: planned %d bytes (%v for its encoder), want %d", w.OutputDisk, w.OutputTemp, want)
	}
	if fe := fieldErr(t, p.FitBudget(Limits{Disk: 3 << 30})); !strings.HasPrefix(fe["multi_input_files.1"], "processing would need up to 6.7 GB") || len(fe) != 1 {
		t.Errorf("two tracks under 3 GB: %v", fe)
	}
}

// TestPlanDiskVideo: a "video" output of a video input copies the
// input's video stream, planned at the input file's size (which holds
// it), whatever its bitrate; at the render's 2 Mbit/s only when the size
// is not known. A waveform video of an audio input, and a video input
// with subtitles burned in, are renders.
func TestPlanDiskVideo(t *testing.T) {
	const hour = 3600
	p := probedAt(t, `{`+input+`,"output_files":[{"format":"video"}]}`, hour, "aac")
	p.HasVideo = true
	audio := int64(320_000/8*hour*containerOverhead) + fileOverheadBytes + coverBytes
	render := int64(audiogramBitsPerSecond / 8 * hour * containerOverhead)
	for _, size := range []int64{4 << 30, 100 << 20} { // 9.5 and 0.2 Mbit/s of video
		p.InputSize = size
		if w := PlanWork(p); w.OutputDisk != 2*(audio+size) {
			t.Errorf("an hour of video in %d bytes, copied: planned %d bytes, want %d", size, w.OutputDisk, 2*(audio+size))
		}
	}
	p.InputSize = 0
	if w := PlanWork(p); w.OutputDisk != 2*(audio+render) {
		t.Errorf("a video input of unknown size: planned %d bytes, want %d", w.OutputDisk, 2*(audio+render))
	}
	// Over the limit, the copy is named with its figures.
	p.InputSize = 4 << 30
	if fe := fieldErr(t, p.FitBudget(Limits{})); !strings.Contains(fe["output_files"], "8.3 GB for the encoders' temporary files") || len(fe) != 1 {
		t.Errorf("4 GB of video copied under %d GB: %v", DefaultDisk>>30, fe)
	}
	p.HasVideo = false
	if w := PlanWork(p); w.OutputDisk != 2*(audio+render) {
		t.Errorf("the waveform video of an audio input: planned %d bytes, want %d", w.OutputDisk, 2*(audio+render))
	}
	p = probedAt(t, `{`+input+`,"speech_recognition":{"uuid":"s"},"output_files":[{"format":"video","subtitle_font":"inter"}]}`, hour, "aac")
	p.HasVideo, p.InputSize = true, 100<<20
	if w := PlanWork(p); w.OutputDisk != 4*(audio+render) {
		t.Errorf("subtitles burned into a video input: planned %d bytes, want %d", w.OutputDisk, 4*(audio+render))
	}
}

// TestPlanInputDecoder: an input whose format's name is one the engine
// reads itself ("wav": PCM in Matroska, a WAV in A-law) but which ffmpeg
// decodes, as its probe found, is planned as ffmpeg's: its decode kept as
// 32-bit floats and the decoders of every pass (PCM may be deeper than 24
// bits); a WAV the pure-Go codec reads, or one stored without its
// decoder, as before.
func TestPlanInputDecoder(t *testing.T) {
	const hour = 3600
	p := probedAt(t, `{`+input+`,"output_files":[{"format":"flac"}]}`, hour, "wav")
	p.Channels, p.SampleRate = 2, 48000
	decoded := int64(hour*48000*2*4 + fileOverheadBytes)
	for _, c := range []struct {
		decoder          string
		disk             int64
		processes, concu int
	}{{"ffmpeg", decoded, inputPasses, 2}, {"wav", 0, 0, 0}, {"", 0, 0, 0}} {
		p.InputDecoder = c.decoder
		w := PlanWork(p)
		if w.DecodedDisk != c.disk || w.Processes != c.processes || w.Concurrent != c.concu {
			t.Errorf("a WAV-named input read by %q: planned %d bytes, %d processes (%d at once), want %d, %d (%d)",
				c.decoder, w.DecodedDisk, w.Processes, w.Concurrent, c.disk, c.processes, c.concu)
		}
	}
	// An MP3 stream that ffmpeg reads (in Matroska) is lossy: decoded once.
	p.Format, p.InputDecoder = "mp3", "ffmpeg"
	if w := PlanWork(p); w.DecodedDisk != decoded || w.Processes != 2 || w.Concurrent != 0 {
		t.Errorf("MP3 read by ffmpeg: planned %d bytes, %d processes (%d at once)", w.DecodedDisk, w.Processes, w.Concurrent)
	}
	// The decoder stays out of responses.
	p.MultiInputFiles = []MultiInputFile{{Type: InputIntro, ID: "intro", InputFile: "i.mkv", InputDecoder: "ffmpeg"}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "input_decoder") || p.MultiInputFiles[0].InputDecoder != "ffmpeg" {
		t.Errorf("the decoder in a response, or lost: %s", b)
	}
}

// TestPlanWorkProcesses pins the process plan of a small production: an
// AAC input ffmpeg decodes (once: its probe and its decoder), a lossy
// output with chapters, a split one and a lossless one; then the same
// from an ALAC input, which ffmpeg decodes on every pass.
func TestPlanWorkProcesses(t *testing.T) {
	const outputs = `"output_files":[{"format":"mp3"},{"format":"opus","split_on_chapters":true},{"format":"flac"},{"format":"alac"}]}`
	p := probedAt(t, `{`+input+`,`+chaptersJSON(3, 2)+`,`+outputs, 10, "aac")
	w := PlanWork(p)
	// mp3: (encoder + verifier + chapters) x 2; opus: 3 parts x (encoder
	// + verifier) x 2; alac: encoder + chapters; the input: probe and
	// decoder, before the encoding pass.
	if want := 6 + 12 + 2 + 2; w.Processes != want {
		t.Errorf("planned %d processes, want %d", w.Processes, want)
	}
	if want := 2 + 2 + 1; w.Concurrent != want {
		t.Errorf("planned %d at once, want %d", w.Concurrent, want)
	}
	if w.Files != 1+3+1+1+2 || w.Parts != 3 || w.Outputs != 4 {
		t.Errorf("planned %+v", w)
	}
	// Without loudness normalization nothing verifies the lossy files.
	p.Algorithms = p.Algorithms.Merge(AlgorithmValues{"normloudness": false})
	if w := PlanWork(p); w.Processes != 2+4+6+2 {
		t.Errorf("without normloudness: %d processes", w.Processes)
	}
	// ALAC may be deeper than 24 bits: 6 passes, two decoders at once.
	p = probedAt(t, `{`+input+`,`+chaptersJSON(3, 2)+`,`+outputs, 10, "alac")
	if w := PlanWork(p); w.Processes != 6+12+2+6 || w.Concurrent != 2+2+1+2 {
		t.Errorf("ALAC input: planned %d processes, %d at once; want %d, %d", w.Processes, w.Concurrent, 6+12+2+6, 2+2+1+2)
	}
}

func TestFixedCaps(t *testing.T) {
	many := func(name string, n int, item func(i int) string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{%q:[`, name)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item(i))
		}
		return b.String() + "]}"
	}
	for _, c := range []struct {
		field string
		limit int
		item  func(i int) string
	}{
		{"chapters", MaxChapters, func(i int) string { return fmt.Sprintf(`{"start":%d,"title":"c"}`, i) }},
		{"output_files", MaxOutputFiles, func(i int) string { return fmt.Sprintf(`{"format":"wav","suffix":"-%d"}`, i) }},
		{"multi_input_files", MaxMultiInputFiles, func(i int) string { return fmt.Sprintf(`{"type":"intro","id":"i%d"}`, i) }},
	} {
		if _, err := create(t, many(c.field, c.limit, c.item)); err != nil {
			t.Errorf("%d %s: %v", c.limit, c.field, err)
		}
		_, err := create(t, many(c.field, c.limit+1, c.item))
		if fe := fieldErr(t, err); fe[c.field] != fmt.Sprintf("has %d entries; at most %d are allowed", c.limit+1, c.limit) {
			t.Errorf("%d %s: %v", c.limit+1, c.field, fe)
		}
	}
	segs := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"algorithms":{"segments":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"start":%d,"stop":%d}`, i, i+1)
		}
		return b.String() + "]}}"
	}
	if _, err := create(t, segs(MaxSegments)); err != nil {
		t.Errorf("%d segments: %v", MaxSegments, err)
	}
	_, err := create(t, segs(MaxSegments+1))
	if fe := fieldErr(t, err); !strings.Contains(fe["algorithms.segments"], "at most 1000") {
		t.Errorf("%d segments: %v", MaxSegments+1, fe)
	}
	// A chapter start can never overflow a Duration, nor a sum of them.
	if d := time.Duration(MaxTimestampSeconds) * time.Second * MaxChapters; d < 0 {
		t.Errorf("MaxChapters chapters at MaxTimestampSeconds overflow: %v", d)
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	if got := (Limits{}).WithDefaults(); got != DefaultLimits() {
		t.Errorf("zero Limits: %+v", got)
	}
	got := Limits{Parts: -1, PartSeconds: -2, Silence: -1, Memory: 5}.WithDefaults()
	if want := DefaultLimits(); got.Parts != want.Parts || got.PartSeconds != want.PartSeconds || got.Silence != want.Silence || got.Memory != 5 || got.Disk != DefaultDisk {
		t.Errorf("negative fields: %+v", got)
	}
}

// TestFieldErrorsErrorNamesRequestMessages: a message about no particular
// field (the memory budget's) is in the error text, as "(request)".
func TestFieldErrorsErrorNamesRequestMessages(t *testing.T) {
	got := FieldErrors{"": "too much", "chapters": "too many"}.Error()
	if want := "invalid fields: (request): too much; chapters: too many"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
