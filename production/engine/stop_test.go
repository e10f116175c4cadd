package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// maxStopLatency is how long a stopped production may take to land in
// Production Not Started Yet (10) after its context is cancelled.
const maxStopLatency = 2 * time.Second

// stoppingProcessor is the chain, run as usual, that stops the run from
// inside: in its call number call (Process is call 1, each Processed.Again
// the next), once a second of audio was read from the open-th input that
// call opened (a pass over the input), or, with open 0, from the processed
// audio it returned. With hot it adds 6 dB after the chain and drops the
// chain's own measurement, so that every lossy output decodes above
// maxpeak and the lossy verification renders again (call 2, through
// Again, which reads the input only for the loudness passes and the
// render).
type stoppingProcessor struct {
	hot         bool
	call, open  int
	stop        func()
	mu          sync.Mutex
	calls, opns int
}

func (h *stoppingProcessor) Process(ctx context.Context, open audio.Opener, job engine.ProcessJob) (*engine.Processed, error) {
	// The chain's Again keeps the opener of the first call: it counts
	// against whichever call is current.
	counted := func(ctx context.Context) (audio.Source, error) {
		src, err := open(ctx)
		if err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.opns++
		call, n := h.calls, h.opns
		h.mu.Unlock()
		if call != h.call || n != h.open {
			return src, nil
		}
		return &gainSource{Source: src, gain: 1, after: int64(src.Format().SampleRate), fn: h.stop}, nil
	}
	return h.wrap(func() (*engine.Processed, error) { return engine.ChainProcessor{}.Process(ctx, counted, job) })
}

// wrap starts the next call, runs it and wraps what it returns, Again
// included.
func (h *stoppingProcessor) wrap(process func() (*engine.Processed, error)) (*engine.Processed, error) {
	h.mu.Lock()
	h.calls++
	call := h.calls
	h.opns = 0
	h.mu.Unlock()
	pr, err := process()
	if err != nil {
		return nil, err
	}
	gain := 1.0
	if h.hot {
		gain, pr.Measured = 2, nil
	}
	src := &gainSource{Source: pr.Source, gain: gain}
	if call == h.call && h.open == 0 {
		src.after, src.fn = int64(src.Format().SampleRate), h.stop
	}
	pr.Source = src
	if again := pr.Again; again != nil {
		pr.Again = func(ctx context.Context, job engine.ProcessJob) (*engine.Processed, error) {
			return h.wrap(func() (*engine.Processed, error) { return again(ctx, job) })
		}
	}
	return pr, nil
}

// gainSource scales a source; fn runs once after frames were read.
type gainSource struct {
	audio.Source
	gain  float64
	read  int64
	after int64
	fn    func()
}

func (g *gainSource) Read(dst audio.Buffer) (int, error) {
	n, err := g.Source.Read(dst)
	for c := range dst {
		for i := range n {
			dst[c][i] *= g.gain
		}
	}
	g.read += int64(n)
	if g.fn != nil && g.read >= g.after {
		g.fn()
		g.fn = nil
	}
	return n, err
}

func (g *gainSource) Close() error {
	if c, ok := g.Source.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// TestStopLatency stops a production in each stage and measures how long
// the engine takes to return after the cancellation, with the production
// back in status 10 and no file left behind.
func TestStopLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a production in every stage")
	}
	t.Parallel()
	need.Programs(t, "ffmpeg")
	const rate = 44100
	dir := t.TempDir()
	input := filepath.Join(dir, "talk.wav")
	// 3 s: the stops inside the chain come a second into their pass, and
	// each subtest runs the production up to its stage (the lossy
	// verification's, all of it; 5 s took 11 s of CPU).
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.05), rate)
	// Two chapters: each split output's part is an encoder and its
	// monitor, two ffmpeg runs (three chapters: 68 runs in all).
	const request = `{"input_file": "https://example.org/talk.wav", "output_basename": "talk",
		"chapters": [{"start": "0", "title": "One"}, {"start": "1.5", "title": "Two"}],
		"output_files": [{"format": "mp3", "split_on_chapters": true}, {"format": "aac", "mono_mixdown": true},
			{"format": "flac"}, {"format": "opus", "mono_mixdown": true, "split_on_chapters": true}]}`
	stages := []struct {
		name   string
		status production.Status // cancel when the run reports it
		frac   float64           // ... with at least this fraction done
		proc   *stoppingProcessor
	}{
		// The analysis pass, then the loudness pass over the input.
		{"audio processing (analysis)", production.StatusAudioProcessing, 0.3, nil},
		{"audio processing (loudness pass)", 0, 0, &stoppingProcessor{call: 1, open: 2}},
		{"audio encoding", production.StatusAudioEncoding, 0.3, nil},
		{"mono mixdown", production.StatusMonoMixdown, 0, nil},
		{"split on chapters", production.StatusSplitChapters, 0, nil},
		// The lossy verification processes and encodes again.
		{"lossy verification (processing)", 0, 0, &stoppingProcessor{hot: true, call: 2, open: 1}},
		{"lossy verification (encoding)", 0, 0, &stoppingProcessor{hot: true, call: 2}},
	}
	for _, st := range stages {
		t.Run(st.name, func(t *testing.T) {
			engineTemp := t.TempDir()
			outDir := t.TempDir()
			p := newProduction(t, request)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			var cancelled time.Time
			stop := func() {
				once.Do(func() {
					cancelled = time.Now()
					cancel()
				})
			}
			eng := &engine.Engine{TempDir: engineTemp}
			if st.proc != nil {
				st.proc.stop = stop
				eng.Processor = st.proc
			}
			var last production.Status
			progress := func(s production.Status, frac float64) {
				last = s
				if st.proc == nil && s == st.status && frac >= st.frac {
					stop()
				}
			}
			_, err := eng.Run(ctx, p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, progress)
			landed := time.Now()
			if cancelled.IsZero() {
				t.Fatalf("the run never reached the stage (err %v, status %v)", err, p.Status)
			}
			took := landed.Sub(cancelled)
			t.Logf("stop in %s landed after %v", st.name, took.Round(time.Millisecond))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
			if p.Status != production.StatusNotStarted || last != production.StatusNotStarted {
				t.Errorf("status %v (last reported %v), want 10", p.Status, last)
			}
			if took > maxStopLatency {
				t.Errorf("stop took %v, want at most %v", took, maxStopLatency)
			}
			if left := listDir(t, outDir); len(left) > 0 {
				t.Errorf("stopped run left files: %q", left)
			}
			if left := listDir(t, engineTemp); len(left) > 0 {
				t.Errorf("stopped run left temporary files: %q", left)
			}
		})
	}
}
