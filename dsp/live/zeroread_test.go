package live_test

import (
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestZeroLengthReadKeepsTail probes each look-ahead stage with an empty
// buffer between reads: such a probe must not report io.EOF while frames
// are still in the stage's delay line, or a caller that checks for the end
// that way loses the stream's last tens of milliseconds.
func TestZeroLengthReadKeepsTail(t *testing.T) {
	const rate = 48000
	in := testaudio.SpeechLike(rate, 1, 0.3)[0]
	stages := map[string]func(audio.Source) (audio.Source, error){
		"leveler": func(s audio.Source) (audio.Source, error) {
			return live.NewLeveler(s, live.LevelerOptions{Strength: 1, Normalize: true, TargetLUFS: -16})
		},
		"peak": func(s audio.Source) (audio.Source, error) { return live.NewPeakStage(s, -1) },
	}
	for name, stage := range stages {
		t.Run(name, func(t *testing.T) {
			s, err := stage(audio.NewBufferSource(audio.Buffer{in}, rate))
			if err != nil {
				t.Fatal(err)
			}
			buf, empty := audio.NewBuffer(1, 480), audio.NewBuffer(1, 0)
			total := 0
			for {
				if n, err := s.Read(empty); n != 0 || (err != nil && err != io.EOF) {
					t.Fatalf("empty read after %d frames: %d, %v", total, n, err)
				} else if err == io.EOF && total != len(in) {
					t.Fatalf("empty read reported the end after %d of %d frames", total, len(in))
				}
				n, err := s.Read(buf)
				total += n
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if total != len(in) {
				t.Errorf("%d frames out of %d in", total, len(in))
			}
			if n, err := s.Read(empty); n != 0 || err != io.EOF {
				t.Errorf("empty read at the end: %d, %v; want 0, io.EOF", n, err)
			}
		})
	}
}
