package live_test

import (
	"errors"
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// lookaheadStages are the stages that hold frames back, by name.
var lookaheadStages = map[string]func(audio.Source) (audio.Source, error){
	"leveler": func(s audio.Source) (audio.Source, error) {
		return live.NewLeveler(s, live.LevelerOptions{Strength: 1, Normalize: true, TargetLUFS: -16})
	},
	"peak": func(s audio.Source) (audio.Source, error) { return live.NewPeakStage(s, -1) },
}

// TestZeroLengthReadKeepsTail probes each look-ahead stage with an empty
// buffer between reads: such a probe must not report io.EOF while frames
// are still in the stage's delay line, or a caller that checks for the end
// that way loses the stream's last tens of milliseconds.
func TestZeroLengthReadKeepsTail(t *testing.T) {
	const rate = 48000
	in := testaudio.SpeechLike(rate, 1, 0.3)[0]
	for name, stage := range lookaheadStages {
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

// failAfter delivers its frames, then fails.
type failAfter struct {
	audio.Source
	err error
}

func (f *failAfter) Read(dst audio.Buffer) (int, error) {
	n, err := f.Source.Read(dst)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// TestZeroLengthReadBeforeFailure: when upstream fails, an empty probe
// reports the failure exactly when a read of frames would, neither while
// frames ahead of it may still go out (they would be lost to a caller
// that stops on the probe's error) nor never (a caller that probes would
// wait for ever).
func TestZeroLengthReadBeforeFailure(t *testing.T) {
	const rate = 48000
	in := testaudio.SpeechLike(rate, 1, 0.3)[0]
	boom := errors.New("upstream failed")
	for name, stage := range lookaheadStages {
		t.Run(name, func(t *testing.T) {
			s, err := stage(&failAfter{audio.NewBufferSource(audio.Buffer{in}, rate), boom})
			if err != nil {
				t.Fatal(err)
			}
			buf, empty := audio.NewBuffer(1, 480), audio.NewBuffer(1, 0)
			total, failed := 0, false
			for !failed {
				_, perr := s.Read(empty)
				n, err := s.Read(buf)
				total += n
				if perr != nil && (n > 0 || !errors.Is(err, boom)) {
					t.Fatalf("empty read said %v after %d frames, the next read gave %d frames, %v", perr, total-n, n, err)
				}
				switch {
				case errors.Is(err, boom):
					failed = true
				case err != nil:
					t.Fatal(err)
				case n == 0:
					t.Fatalf("read gave no frames and no error after %d frames", total)
				}
			}
			if total == 0 || total > len(in) {
				t.Errorf("%d frames out of %d before the failure", total, len(in))
			}
			if n, err := s.Read(empty); n != 0 || !errors.Is(err, boom) {
				t.Errorf("empty read after the failure: %d, %v; want 0, %v", n, err, boom)
			}
		})
	}
}
