package preset_test

import (
	"fmt"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
)

// A production made from a preset: the preset's values first, the
// request's over them, the input's tags where the metadata is still empty.
func ExamplePreset_Template() {
	pin, _ := preset.DecodeInput([]byte(`{"preset_name": "Weekly", "metadata": {"album": "The Show", "artist": "Hosts"},
		"output_files": [{"format": "mp3"}, {"format": "aac", "ending": "m4b"}], "algorithms": {"loudnesstarget": -19}}`))
	weekly, err := preset.New(pin, production.ApplyOptions{})
	if err != nil {
		panic(err)
	}
	in, _ := production.DecodeInput([]byte(`{"preset": "weekly", "input_file": "https://example.org/ep7.wav", "metadata": {"artist": "Guest"}}`))
	p, err := production.New(in, production.ApplyOptions{Presets: production.Presets{"weekly": weekly.Template()}})
	if err != nil {
		panic(err)
	}
	p.Metadata.ImportTags(audio.Tags{Title: "Episode 7", Artist: "Tagged Artist"})
	fmt.Println(p.Metadata.Title, "|", p.Metadata.Artist, "|", p.Metadata.Album)
	fmt.Println(p.Algorithms.In(production.ScopeSingletrack).Int("loudnesstarget"), p.OutputFilename(0), p.OutputFilename(1))
	// Output:
	// Episode 7 | Guest | The Show
	// -19 ep7.mp3 ep7.m4b
}
