package mixdown_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// contractScene is a short production: a stereo host microphone, a mono
// guest microphone (each with the other's bleed) and a stereo music bed
// that starts 0.5 s earlier.
type contractScene struct {
	tracks []audio.Buffer
	an     *mixdown.Analysis
}

func newContractScene(t testing.TB) *contractScene {
	t.Helper()
	return cached("contract", func() *contractScene { return buildContractScene(t) })
}

func buildContractScene(t testing.TB) *contractScene {
	t.Helper()
	clean, _ := conversation(t, [][]string{{testaudio.Sentences[0]}, {testaudio.Sentences[1]}}, testaudio.Voices[:2], 0.5, 0.5, 0.5)
	mics, _ := microphones(clean, []float64{0, -6}, -20, -60)
	host := audio.Buffer{mics[0], testaudio.Scale(append([]float64(nil), mics[0]...), 0.7)}
	s := &contractScene{tracks: []audio.Buffer{host, {mics[1]}, stereoMusic(float64(len(mics[0]))/fs+0.5, 9)}}
	var tr []mixdown.Track
	for k, b := range s.tracks {
		tr = append(tr, mixdown.Track{Source: audio.NewBufferSource(b, fs), Offset: []int64{fs / 2, fs / 2, 0}[k]})
	}
	an, err := mixdown.Analyze(context.Background(), tr, mixdown.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.an = an
	return s
}

type nodeCase struct {
	name  string
	track int
	// make builds the node over src (a source of the track's audio).
	make func(t testing.TB, src audio.Source, an *mixdown.Analysis) audio.Source
}

// must ends the test binary on a constructor's error: the cases build
// nodes from valid parameters, so an error is a bug.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func nodeCases() []nodeCase {
	return []nodeCase{
		{"Gate", 0, func(t testing.TB, src audio.Source, an *mixdown.Analysis) audio.Source {
			return must(mixdown.NewGate(src, an, 0, mixdown.GateOptions{Noise: true, Crossgate: true}))
		}},
		{"NoiseGate", 1, func(t testing.TB, src audio.Source, an *mixdown.Analysis) audio.Source {
			return must(mixdown.NewGate(src, an, 1, mixdown.GateOptions{Noise: true}))
		}},
		{"Balance", 1, func(t testing.TB, src audio.Source, an *mixdown.Analysis) audio.Source {
			return must(mixdown.NewBalance(src, an, 1, mixdown.BalanceOptions{Strength: 1}))
		}},
		{"Ducker", 2, func(t testing.TB, src audio.Source, an *mixdown.Analysis) audio.Source {
			return must(mixdown.NewDucker(src, an, 2, mixdown.DuckOptions{FadeTime: 250e6}))
		}},
	}
}

// Every node passes the Source contract with the same samples at every
// block size, keeps the frame count and rejects a wrongly shaped buffer.
func TestNodesContract(t *testing.T) {
	s := newContractScene(t)
	if s.an.Tracks[2].Role != mixdown.RoleDucking {
		t.Fatalf("music bed is %v", s.an.Tracks[2].Role)
	}
	for _, nc := range nodeCases() {
		t.Run(nc.name, func(t *testing.T) {
			in := s.tracks[nc.track]
			out := audiotest.CheckSource(t, func() audio.Source { return nc.make(t, audio.NewBufferSource(in, fs), s.an) })
			if out.Frames() != in.Frames() {
				t.Errorf("%d frames out of %d", out.Frames(), in.Frames())
			}
			src := nc.make(t, audio.NewBufferSource(in, fs), s.an)
			if _, err := src.Read(audio.NewBuffer(len(in)+1, 16)); err == nil {
				t.Error("a buffer with a channel too many was accepted")
			}
		})
	}
	t.Run("LoopTrim", func(t *testing.T) {
		for _, length := range []int64{fs / 3, 5 * fs / 2} {
			out := audiotest.CheckSource(t, func() audio.Source {
				return must(mixdown.NewLoopTrim(context.Background(), opener(stereoMusic(1, 3)), mixdown.LoopTrimOptions{Length: length, SourceFrames: fs}))
			})
			if int64(out.Frames()) != length {
				t.Errorf("%d frames, want %d", out.Frames(), length)
			}
		}
	})
	t.Run("Mixdown", func(t *testing.T) {
		md := newMixdown(t, s)
		out := audiotest.CheckSource(t, func() audio.Source { return must(md.Open(context.Background())) })
		if want := int64(s.tracks[0].Frames()) + fs/2; int64(out.Frames()) != want {
			t.Errorf("mix of %d frames, want %d", out.Frames(), want)
		}
		for i := range s.tracks {
			if testing.Short() && i != 2 {
				continue
			}
			tr := audiotest.CheckSource(t, func() audio.Source { return must(md.OpenTrack(context.Background(), i)) })
			if i == 2 && int64(tr.Frames()) != int64(s.tracks[0].Frames())+fs/2 {
				t.Errorf("looped bed of %d frames, want %d", tr.Frames(), int64(s.tracks[0].Frames())+fs/2)
			}
		}
		if _, err := md.OpenTrack(context.Background(), 3); !errors.Is(err, dsp.ErrInvalidParameter) {
			t.Errorf("OpenTrack(3) = %v", err)
		}
	})
}

func newMixdown(t testing.TB, s *contractScene) *mixdown.Mixdown {
	t.Helper()
	st := mixdown.Settings{Leveler: true, Gate: true, Crossgate: true}
	for k, b := range s.tracks {
		ts := mixdown.DefaultTrack(opener(b))
		ts.Offset = []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 0}[k]
		ts.Pan = []float64{-0.3, 0.3, 0}[k]
		ts.LoopTrim = k == 2
		st.Tracks = append(st.Tracks, ts)
	}
	return must(mixdown.New(context.Background(), st))
}

// No node allocates per Read once running, including a loop at its seams
// (given an opener that does not allocate) and the whole mixdown graph.
func TestNodesZeroAllocs(t *testing.T) {
	s := newContractScene(t)
	check := func(t *testing.T, src audio.Source) {
		buf := audio.NewBuffer(src.Format().Channels, 4096)
		for range 4 {
			src.Read(buf)
		}
		if a := testing.AllocsPerRun(50, func() {
			if _, err := src.Read(buf); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v allocations per Read, want 0", a)
		}
	}
	for _, nc := range nodeCases() {
		t.Run(nc.name, func(t *testing.T) {
			check(t, nc.make(t, &loopSource{buf: s.tracks[nc.track], end: -1}, s.an))
		})
	}
	t.Run("LoopTrim", func(t *testing.T) {
		src := &loopSource{buf: stereoMusic(0.5, 3)}
		open := func(context.Context) (audio.Source, error) { // no allocation per pass
			src.pos, src.end = 0, fs/2
			return src, nil
		}
		check(t, must(mixdown.NewLoopTrim(context.Background(), open, mixdown.LoopTrimOptions{Length: 1 << 40, SourceFrames: fs / 2})))
	})
	t.Run("Mixdown", func(t *testing.T) { // 55 reads of 4096 frames: 4.7 s of the 6.5 s scene
		check(t, must(newMixdown(t, s).Open(context.Background())))
	})
}

// Closing a node closes its upstream; closing the mixdown graph closes
// every decoder, loop passes included.
func TestNodesClose(t *testing.T) {
	s := newContractScene(t)
	for _, nc := range nodeCases() {
		co := &countingOpener{b: s.tracks[nc.track]}
		src := nc.make(t, must(co.open(context.Background())), s.an)
		if err := src.(interface{ Close() error }).Close(); err != nil || co.closes != 1 {
			t.Errorf("%s: Close = %v, %d upstream closes", nc.name, err, co.closes)
		}
	}
}

func TestNodesRejectBadParameters(t *testing.T) {
	s := newContractScene(t)
	src := audio.NewBufferSource(s.tracks[0], fs)
	for name, err := range map[string]error{
		"gate track":     second(mixdown.NewGate(src, s.an, 3, mixdown.GateOptions{Noise: true})),
		"gate range":     second(mixdown.NewGate(src, s.an, 0, mixdown.GateOptions{Noise: true, RangeDB: -3})),
		"balance":        second(mixdown.NewBalance(src, s.an, 0, mixdown.BalanceOptions{Strength: 2})),
		"ducker rate":    second(mixdown.NewDucker(audio.NewBufferSource(s.tracks[2], 44100), s.an, 2, mixdown.DuckOptions{})),
		"analyze none":   second(mixdown.Analyze(context.Background(), nil, mixdown.AnalyzeOptions{})),
		"analyze offset": second(mixdown.Analyze(context.Background(), []mixdown.Track{{Source: src, Offset: -1}}, mixdown.AnalyzeOptions{})),
		"analyze rates": second(mixdown.Analyze(context.Background(), []mixdown.Track{{Source: src},
			{Source: audio.NewBufferSource(s.tracks[1], 44100)}}, mixdown.AnalyzeOptions{})),
		"role":    second(mixdown.ParseRole("sideways")),
		"pan":     second(mixdown.ParsePan("L101")),
		"mixdown": second(mixdown.New(context.Background(), mixdown.Settings{})),
	} {
		if !errors.Is(err, dsp.ErrInvalidParameter) {
			t.Errorf("%s: %v, want dsp.ErrInvalidParameter", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Empty, one-sample and silent tracks analyse and mix without trouble.
func TestDegenerateTracks(t *testing.T) {
	s := newContractScene(t)
	var st mixdown.Settings
	st.Leveler, st.Gate, st.Crossgate = true, true, true
	for _, b := range []audio.Buffer{s.tracks[0], {nil}, {{0.5}}, {make([]float64, fs)}} {
		ts := mixdown.DefaultTrack(opener(b))
		st.Tracks = append(st.Tracks, ts)
	}
	st.Tracks[1].LoopTrim = true
	md := must(mixdown.New(context.Background(), st))
	out := testaudio.ReadAll(t, must(md.Open(context.Background())))
	if out.Frames() != s.tracks[0].Frames() {
		t.Errorf("%d frames, want %d", out.Frames(), s.tracks[0].Frames())
	}
	for k, ta := range md.Analysis().Tracks[1:] {
		if v := ta.Seconds(mixdown.Voice); v != 0 {
			t.Errorf("degenerate track %d speaks %.2f s", k+1, v)
		}
	}
}
