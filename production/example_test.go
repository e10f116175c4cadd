package production_test

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/audiopost/audiopost/production"
)

func ExampleNew() {
	in, err := production.DecodeInput([]byte(`{
		"input_file": "https://example.org/ep1.wav",
		"output_files": [{"format": "mp3", "bitrate": 100}],
		"algorithms": {"denoisemethod": "classic", "deverbamount": 12, "loudnesstarget": "-23"}
	}`))
	if err != nil {
		panic(err)
	}
	_, err = production.New(in, production.ApplyOptions{})
	if errs, ok := err.(production.FieldErrors); ok {
		for _, path := range slices.Sorted(maps.Keys(errs)) {
			fmt.Printf("%s: %s\n", path, errs[path])
		}
	}
	// Output:
	// algorithms.deverbamount: needs denoisemethod static, dynamic or speech_isolation
	// output_files.0.bitrate: 100 kbps is not allowed for mp3; choose one of 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320
}

func ExampleAlgorithmValues_In() {
	in, _ := production.DecodeInput([]byte(`{"algorithms": {"filtering": false, "loudnesstarget": -23}}`))
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		panic(err)
	}
	a := p.Algorithms.In(production.ScopeSingletrack)
	fmt.Println(a.Bool("hipfilter"), a.Int("loudnesstarget"), a.Float("maxpeak"), a.Bool("leveler"), a.String("denoisemethod"))
	// Output: false -23 0 true classic
}

func ExampleOutputFilename() {
	input := "https://example.org/uploads/Episode%2042.wav"
	fmt.Println(production.OutputFilename(production.OutputFile{Format: "mp3"}, "", input))
	fmt.Println(production.OutputFilename(production.OutputFile{Format: "aac", Suffix: "-chapters", Ending: "m4b"}, "show42", input))
	fmt.Println(production.OutputFilename(production.OutputFile{Format: "flac", Filename: "master.flac"}, "show42", input))
	// Output:
	// Episode 42.mp3
	// show42-chapters.m4b
	// master.flac
}

func ExampleParseChapters() {
	chs, err := production.ParseChapters("00:00:00 Welcome\n00:02:30.5 News <https://example.org/news>\n")
	if err != nil {
		panic(err)
	}
	for _, c := range chs {
		fmt.Printf("%s %q <%s>\n", production.FormatTimestamp(c.Start), c.Title, c.URL)
	}
	_, err = production.ParseChapters("00:00:00 Welcome\n\n2:3O Typo\n")
	fmt.Println(err)
	// Output:
	// 00:00:00.000 "Welcome" <>
	// 00:02:30.500 "News" <https://example.org/news>
	// chapters line 3: "2:3O" is not a time HH:MM:SS[.mmm]
}

func ExampleOutputPosition() {
	// A chapter 10 minutes into the recording, after a 15 s intro, with 2 s
	// cut from the start and a 5 s cut at 4:00.
	at := production.OutputPosition(600e9, 15e9, 2e9, []production.Cut{{Start: 240, Stop: 245}})
	fmt.Println(production.FormatTimestamp(at))
	// Output: 00:10:08.000
}

// A production is fitted to its work budget when it is saved, once its
// input is probed: chapters past the input's end are dropped with a
// warning, and work the input's length does not allow is a form error.
func ExampleProduction_FitBudget() {
	in, err := production.DecodeInput([]byte(`{
		"input_file": "https://example.org/ep1.wav",
		"chapters": [{"start": 0, "title": "Intro"}, {"start": 4, "title": "Talk"}, {"start": 999999, "title": "Typo"}],
		"output_files": [{"format": "aac", "split_on_chapters": true}]
	}`))
	if err != nil {
		panic(err)
	}
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		panic(err)
	}
	p.InputLength, p.Format = 10, "wav" // as the server probed the input
	if err := p.FitBudget(production.Limits{}); err != nil {
		panic(err)
	}
	fmt.Println(len(p.Chapters), "chapters;", p.WarningMessage)
	w, b := production.PlanWork(p), production.DefaultLimits().Budget(p)
	fmt.Printf("%d parts of at most %d, %d files, %d external processes of at most %d\n", w.Parts, b.Parts, w.Files, w.Processes, b.Processes)

	// Twelve chapters over ten seconds are more parts than ten seconds allow.
	for i := 1; i < 12; i++ {
		p.Chapters = append(p.Chapters, production.Chapter{Start: time.Duration(i) * 800 * time.Millisecond, Title: "More"})
	}
	fmt.Println(p.FitBudget(production.Limits{}))
	// Output:
	// 2 chapters; 1 chapter at or after the end of the input (00:00:10.000) dropped: 277:46:39.000 "Typo"
	// 2 parts of at most 11, 4 files, 8 external processes of at most 280
	// invalid fields: output_files.0.split_on_chapters: would split into 13 parts, one per chapter; 10 s of input allow at most 11 (one per 1 s of input, at most 500)
}
