package mixdown_test

import (
	"context"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// A foreground track's compressor narrows the gap between a shouted
// phrase and the rest, more for hard than for soft, and "auto" picks a
// preset from the track's dynamics; without one the gap passes unchanged.
func TestTrackCompressor(t *testing.T) {
	x, spans := testaudio.Phrases(t, fs, testaudio.Sentences[0:4], 0.6, testaudio.Voices[0])
	loud := spans[1:2]
	quiet := append(append([]span(nil), spans[0]), spans[2:]...)
	testaudio.Scale(x[loud[0].Start:loud[0].End], dbAmp(10))
	gap := func(kind dsp.CompressorKind) float64 {
		ts := mixdown.DefaultTrack(opener(audio.Buffer{x}))
		ts.Role, ts.Filter, ts.Compressor = mixdown.RoleForeground, dsp.FilterOff, kind
		md := must(mixdown.New(context.Background(), mixdown.Settings{Tracks: []mixdown.TrackSettings{ts}}))
		out := testaudio.ReadAll(t, must(md.Open(context.Background())))[0]
		return spansDB(out, loud) - spansDB(out, quiet)
	}
	in := spansDB(x, loud) - spansDB(x, quiet)
	none, soft, hard, auto := gap(""), gap(dsp.Soft), gap(dsp.Hard), gap(mixdown.AutoCompression)
	t.Logf("loud-quiet gap: input %.2f dB, none %.2f, soft %.2f, hard %.2f, auto %.2f", in, none, soft, hard, auto)
	if d := none - in; d < -0.1 || d > 0.1 {
		t.Errorf("without a compressor the gap moved %.2f dB", d)
	}
	if in-hard < 2 {
		t.Errorf("hard compression narrowed the gap by %.2f dB, want at least 2", in-hard)
	}
	if in-soft <= 0.2 || soft <= hard {
		t.Errorf("soft compression: gap %.2f dB (input %.2f, hard %.2f); want between", soft, in, hard)
	}
	if auto >= in-0.2 {
		t.Errorf("auto compression left the gap at %.2f dB (input %.2f)", auto, in)
	}
}
