package dsp

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// levelChain is a leveling plan and a compressor over src, as a render
// from the programme's frame start would build them.
func levelChain(t *testing.T, src audio.Source, start int64, music []bool) audio.Source {
	t.Helper()
	db := make([]float64, 200)
	for i := range db {
		db[i] = 6 * math.Sin(float64(i)/7)
	}
	pg, err := NewPlanGain(src, GainPlan{BlockLen: 4800, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	pg.StartAt(start)
	speech, _ := CompressorPreset(Hard, -30)
	var c *Compressor
	if music != nil {
		soft, _ := CompressorPreset(Soft, -30)
		c, err = NewSpeechMusicCompressor(pg, &Analysis{BlockLen: 4800, Music: music}, speech, soft)
	} else {
		c, err = NewCompressor(pg, speech)
	}
	if err != nil {
		t.Fatal(err)
	}
	c.StartAt(start)
	return c
}

// TestStartAtContinuesTheRender renders a programme whole and from a
// point part way in, started a few seconds early: past the run-up the two
// agree to far below any output's resolution.
func TestStartAtContinuesTheRender(t *testing.T) {
	b := stereo(testaudio.SynthVoice(testFS, 18, 140, 3))
	music := make([]bool, 200)
	for i := 60; i < 120; i++ {
		music[i] = true
	}
	for _, m := range [][]bool{nil, music} {
		whole, err := audio.ReadAll(context.Background(), levelChain(t, audio.NewBufferSource(b, testFS), 0, m))
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []int{9 * testFS, 9*testFS + 5} { // on and off the compressor's step
			run := keep - 3*testFS
			part, err := audio.ReadAll(context.Background(), levelChain(t, audio.NewBufferSource(b.Slice(run, b.Frames()), testFS), int64(run), m))
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for c := range b {
				for i := keep; i < b.Frames(); i++ {
					worst = max(worst, math.Abs(whole[c][i]-part[c][i-run]))
				}
			}
			if worst > 1e-9 {
				t.Errorf("music %v, kept from %d: differs by up to %g", m != nil, keep, worst)
			}
		}
	}
}

// TestAnalyzerAppend analyses a programme whole and in two halves that
// run apart and are joined: the levels and the loudness agree.
func TestAnalyzerAppend(t *testing.T) {
	b := stereo(testaudio.SynthVoice(testFS, 12.3, 130, 5))
	f := audio.Format{SampleRate: testFS, Channels: 2}
	mk := func(offset int64, hops *[]float64) *Analyzer {
		a, err := NewAnalyzer(f, AnalyzerOptions{NoClasses: true, Blocks: 130,
			OnHopPeak: func(pk float64) { *hops = append(*hops, pk) },
			Loudness:  loudness.Options{Mode: loudness.ModeI | loudness.ModeLRA | loudness.ModeM | loudness.ModeRMS, Offset: offset}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	var hw, ha, hb []float64
	w := mk(0, &hw)
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	whole := w.Finish()
	split := 61 * 4800
	a, c := mk(0, &ha), mk(int64(split), &hb)
	if err := a.Write(b.Slice(0, split)); err != nil {
		t.Fatal(err)
	}
	if err := c.Prime(b.Slice(split-testFS/2, split)); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(b.Slice(split, b.Frames())); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(c); err != nil {
		t.Fatal(err)
	}
	joined := a.Finish()
	if len(joined.Energy) != len(whole.Energy) || len(joined.Raw) != len(whole.Raw) || joined.Frames() != whole.Frames() {
		t.Fatalf("%d blocks, %d frames; whole %d, %d", len(joined.Energy), joined.Frames(), len(whole.Energy), whole.Frames())
	}
	for i := range whole.Energy {
		if d := math.Abs(joined.Energy[i]-whole.Energy[i]) / whole.Energy[i]; d > 1e-9 || joined.Peak[i] != whole.Peak[i] ||
			math.Abs(joined.Raw[i]-whole.Raw[i]) > 1e-12*whole.Raw[i] {
			t.Fatalf("block %d differs: %g/%g %g/%g", i, joined.Energy[i], whole.Energy[i], joined.Raw[i], whole.Raw[i])
		}
	}
	if got := append(ha, hb...); len(got) != len(hw) {
		t.Errorf("%d hop peaks, whole %d", len(got), len(hw))
	}
	for _, v := range [][2]float64{{whole.Loudness.Integrated, joined.Loudness.Integrated}, {whole.Loudness.LRA, joined.Loudness.LRA},
		{whole.Loudness.MaxMomentary, joined.Loudness.MaxMomentary}, {whole.Loudness.RMS, joined.Loudness.RMS}} {
		if math.Abs(v[0]-v[1]) > 1e-6 {
			t.Errorf("loudness %v, joined %v", whole.Loudness, joined.Loudness)
			break
		}
	}
	// Classifying and spectral analyses need the whole stream.
	s, _ := NewAnalyzer(f, AnalyzerOptions{NoClasses: true, Spectrum: true})
	s2, _ := NewAnalyzer(f, AnalyzerOptions{NoClasses: true, Spectrum: true})
	if err := s.Append(s2); !errors.Is(err, loudness.ErrAppend) {
		t.Errorf("spectral analyses joined: %v", err)
	}
}
