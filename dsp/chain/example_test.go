package chain_test

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
)

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
	cfg := chain.DefaultConfig()
	cfg.TargetLUFS, cfg.MaxTruePeak = -23, -1
	p, err := chain.New(context.Background(), open, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	out, _ := audio.ReadAll(context.Background(), p)
	st := p.Stats()
	fmt.Printf("%d frames, %.1f LUFS, true peak under -1 dBTP: %v\n", out.Frames(), st.Output.Integrated, st.Output.TruePeak <= -1)
	// Output:
	// 960000 frames, -23.0 LUFS, true peak under -1 dBTP: true
}
