package preset_test

import (
	"context"
	"fmt"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
)

func ExampleNewProduction() {
	ctx := context.Background()
	pin, _ := preset.DecodeInput([]byte(`{"preset_name": "Weekly", "metadata": {"album": "The Show", "artist": "Hosts"},
		"output_files": [{"format": "mp3"}, {"format": "aac", "ending": "m4b"}], "algorithms": {"loudnesstarget": -19}}`))
	weekly, err := preset.New(ctx, pin, nil, production.ApplyOptions{})
	if err != nil {
		panic(err)
	}
	lookup := func(_ context.Context, uuid string) (*preset.Preset, error) {
		if uuid == "weekly" {
			return weekly, nil
		}
		return nil, preset.ErrNotFound
	}
	in, _ := production.DecodeInput([]byte(`{"preset": "weekly", "input_file": "https://example.org/ep7.wav", "metadata": {"artist": "Guest"}}`))
	fileTags := audio.Tags{Title: "Episode 7", Artist: "Tagged Artist"}
	p, err := preset.NewProduction(ctx, in, lookup, fileTags, production.ApplyOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Metadata.Title, "|", p.Metadata.Artist, "|", p.Metadata.Album)
	fmt.Println(p.Algorithms.In(production.ScopeSingletrack).Int("loudnesstarget"), p.OutputFilename(0), p.OutputFilename(1))
	// Output:
	// Episode 7 | Guest | The Show
	// -19 ep7.mp3 ep7.m4b
}
