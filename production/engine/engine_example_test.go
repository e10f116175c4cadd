package engine_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
)

// ExampleEngine_Run processes a WAV file into a loudness-normalized WAV,
// its chapter marks and statistics.
func ExampleEngine_Run() {
	dir, _ := os.MkdirTemp("", "engine-example")
	defer os.RemoveAll(dir)

	// A 10 s voiced signal at a quiet level stands in for a recording.
	const rate = 44100
	input := filepath.Join(dir, "interview.wav")
	f, _ := os.Create(input)
	enc, _ := audio.NewEncoder(context.Background(), "wav", f, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{})
	enc.Write(testaudio.SpeechLike(rate, 10, 0.05))
	enc.Close()
	f.Close()

	req, _ := production.DecodeInput([]byte(`{
		"input_file": "https://example.org/interview.wav",
		"chapters": [{"start": "00:00:00", "title": "Hello"}, {"start": "00:00:05", "title": "Questions"}],
		"algorithms": {"loudnesstarget": -16},
		"output_files": [{"format": "wav"}, {"format": "chaps"}, {"format": "stats", "ending": "json"}]
	}`))
	p, err := production.New(req, production.ApplyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	last := production.Status(-1)
	res, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: out},
		func(s production.Status, fraction float64) {
			if s != last {
				fmt.Println("status:", s)
				last = s
			}
		})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range res.Files {
		fmt.Println("wrote", f.Name)
	}
	fmt.Printf("length %.1f s, loudness %.0f LUFS\n", p.Length, math.Round(p.Statistics.Levels.Output.Loudness.Value))
	chaps, _ := os.ReadFile(filepath.Join(out, "interview.chapters.txt"))
	fmt.Print(string(chaps))
	// Output:
	// status: Audio Processing
	// status: Audio Encoding
	// status: Done
	// wrote interview.wav
	// wrote interview.chapters.txt
	// wrote interview.json
	// length 10.0 s, loudness -16 LUFS
	// 00:00:00.000 Hello
	// 00:00:05.000 Questions
}
