package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/engine"
)

// BenchmarkEngineRun processes 60 s of stereo 44.1 kHz WAV into WAV, FLAC,
// a mono WAV mixdown, the waveform and the description: the pure-Go path
// of the pipeline (chain passes included). The custom metric x_realtime
// is seconds of audio processed per second.
func BenchmarkEngineRun(b *testing.B) {
	const rate, seconds = 44100, 60
	dir := b.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(b, input, testaudio.SpeechLike(rate, seconds, 0.05), rate)
	eng := &engine.Engine{Logger: slog.New(slog.DiscardHandler)}
	out := engine.DirWriter{Dir: b.TempDir()}
	req := `{"input_file": "https://example.org/in.wav", "output_files": [
		{"format": "wav", "mono_mixdown": true}, {"format": "flac"}, {"format": "waveform"}, {"format": "descr", "ending": "json"}]}`
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := newProduction(b, req)
		b.StartTimer()
		if _, err := eng.Run(context.Background(), p, engine.Inputs{Main: input}, out, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(seconds)*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
