package recognizers_test

import (
	"context"
	"fmt"
	"os"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/burnin"
	"github.com/audiopost/audiopost/speech/recognizers"
)

// The integration in outline: a service configuration builds the
// recognizer, the input is recognised once, fillers become cuts, the
// words follow the cuts, and every output is written from the result.
func Example() {
	ctx := context.Background()
	rec, err := recognizers.New(speech.Config{Type: "pocketsphinx"}) // or {Type: "whisper", BaseURL: ..., Model: ..., APIKey: ...}
	if err != nil {
		fmt.Println(err) // a *speech.ConfigError naming the field
		return
	}
	src, err := audio.Open(ctx, "input.wav")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	tr, err := rec.Recognize(ctx, src, speech.Options{Language: "en", Keywords: []string{"audiopost"}})
	if err != nil {
		fmt.Println(err) // errors.Is speech.ErrUnavailable, ErrLanguage or ErrFailed
		return
	}
	rate := src.Format().SampleRate
	cuts := speech.FillerCuts(tr.Words, rate, speech.FillerOptions{}) // for the filler cutter
	out, _ := speech.ApplyCuts(tr, cuts, rate)                        // the words of the cut output
	speech.Write(os.Stdout, "subtitle", "srt", out, speech.WriteOptions{})
	speech.Write(os.Stdout, "transcript", "html", out, speech.WriteOptions{Title: "Episode 1"})

	style := burnin.DefaultStyle() // burnin.Style(*outputFile.Subtitles) in a production
	if errs := style.Validate(); errs != nil {
		fmt.Println(errs) // keyed subtitle_font, subtitle_font_size, ...
		return
	}
	burnin.Burn(ctx, "subtitled.mp4", "video.mp4", out.Words, style, burnin.Options{})
}
