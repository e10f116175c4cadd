package chain_test

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
)

func ExampleParseAlgorithms() {
	cfg, err := chain.ParseAlgorithms([]byte(`{"loudnesstarget": -23, "maxpeak": -1, "compressor": "soft", "denoise": true}`))
	fmt.Println(cfg.LoudnessTarget, cfg.MaxPeak, cfg.Compressor, cfg.FilterMethod, err)

	_, err = chain.ParseAlgorithms([]byte(`{"loudnesstarget": -17}`))
	var fe chain.FieldErrors
	if errors.As(err, &fe) {
		fmt.Println("loudnesstarget:", fe["loudnesstarget"] != "")
	}
	// Output:
	// -23 -1 soft hipfilter <nil>
	// loudnesstarget: true
}

// New runs the analysis and loudness passes; reading the pipeline renders
// the output, which the caller would write to encoders.
func ExampleNew() {
	const fs = 48000
	b := audio.NewBuffer(2, 20*fs)
	for i := range b[0] {
		t := float64(i) / fs
		v := 0.02 * math.Sin(2*math.Pi*220*t) * (1 + math.Sin(2*math.Pi*0.5*t))
		b[0][i], b[1][i] = v, v
	}
	open := func(ctx context.Context) (audio.Source, error) { return audio.NewBufferSource(b, fs), nil }
	p, err := chain.New(context.Background(), open, chain.DefaultConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := audio.ReadAll(context.Background(), p)
	st := p.Stats()
	fmt.Printf("%d frames, %.1f %s\n", out.Frames(), st.Levels.Output.Loudness.V, st.Levels.Output.Loudness.Unit)
	// Output:
	// 960000 frames, -16.0 LUFS
}
