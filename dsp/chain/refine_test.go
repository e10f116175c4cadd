package chain

import (
	"context"
	"testing"

	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Cutting.Refine sees the detection and decides what is cut: a cut it
// adds is made (the output is that much shorter) and reported, one it
// removes is not.
func TestCuttingRefine(t *testing.T) {
	skipUnderRace(t)
	x, _ := testaudio.Phrases(t, fs, testaudio.Sentences[:2], 0.6, testaudio.Voices[0])
	var seen classify.Cuts
	extra := classify.Cut{Start: fs / 2, End: fs, Reason: classify.CutFiller}
	cfg := DefaultConfig()
	cfg.Cutting = Cutting{Mode: classify.ApplyCuts, Fade: 0.01, Detect: classify.CutOptions{Filler: true}}
	cfg.Cutting.Refine = func(c classify.Cuts) classify.Cuts {
		seen = append(classify.Cuts(nil), c...)
		return classify.Cuts{extra}
	}
	y := renderMono(t, x, cfg)
	if len(y) != len(x)-int(extra.Len()) {
		t.Errorf("output %d frames, want the input's %d less the refined cut's %d", len(y), len(x), extra.Len())
	}
	p, err := New(context.Background(), bufferOpener(stereoOf(x)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if st := p.Stats(); len(st.Cuts) != 1 || st.Cuts[0] != extra || len(st.Applied) != 1 {
		t.Errorf("stats cuts %v applied %v (detected before refining: %v)", st.Cuts, st.Applied, seen)
	}
	cfg.Cutting.Refine = func(classify.Cuts) classify.Cuts { return classify.Cuts{{Start: 10, End: 5}} }
	if _, err := New(context.Background(), bufferOpener(stereoOf(x)), cfg); err == nil {
		t.Error("an invalid refined cut list was accepted")
	}
}
