package dsp_test

import (
	"errors"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// gtCollect is a sink that keeps a copy of everything written to it.
type gtCollect struct {
	got    audio.Buffer
	writes int
	fail   error
	closed int
}

func (s *gtCollect) Write(b audio.Buffer) error {
	s.writes++
	if s.fail != nil {
		return s.fail
	}
	if s.got == nil {
		s.got = make(audio.Buffer, len(b))
	}
	for c := range b {
		s.got[c] = append(s.got[c], b[c]...)
	}
	return nil
}

func (s *gtCollect) Close() error {
	s.closed++
	return nil
}

func gtTee(t testing.TB, src audio.Source, sinks ...audio.Sink) *dsp.Tee {
	t.Helper()
	tee, err := dsp.NewTee(src, sinks...)
	if err != nil {
		t.Fatal(err)
	}
	return tee
}

// The output is the input, and every sink sees exactly the output.
func TestTeeContract(t *testing.T) {
	x := audiotest.Noise(2, 20000, 0.5, 1)
	var sinks []*gtCollect
	got := audiotest.CheckSource(t, func() audio.Source {
		a, b := &gtCollect{}, &gtCollect{}
		sinks = append(sinks, a, b)
		return gtTee(t, gtIrregularSource(x, 48000, uint64(len(sinks))), a, b)
	})
	for c := range x {
		if gtSNR(x[c], got[c]) < 300 || len(got[c]) != len(x[c]) {
			t.Fatal("the tee changes its input")
		}
	}
	for i, s := range sinks {
		if s.got.Frames() != x.Frames() || gtSNR(x[0], s.got[0]) < 300 || gtSNR(x[1], s.got[1]) < 300 {
			t.Fatalf("sink %d saw %d frames, not the stream", i, s.got.Frames())
		}
	}
}

// A loudness meter teed off the middle of a graph measures what flows
// there, exactly as a separate pass over it would.
func TestTeeMeterMidGraph(t *testing.T) {
	const fs = 48000
	x := audio.Buffer{audiotest.Sine(1, fs, 997, 0.2, 2*fs)[0], audiotest.Noise(1, 2*fs, 0.2, 3)[0]}
	opts := loudness.Options{Mode: loudness.ModeEBU}
	// Resample, meter the 44.1 kHz signal, convert back.
	down := gtResample(t, gtIrregularSource(x, fs, 9), 44100, dsp.ResampleMedium)
	if _, err := dsp.NewTee(down, gtNewMeter(t, audio.Format{SampleRate: fs, Channels: 2}, opts)); !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Fatalf("a 48 kHz meter on a 44.1 kHz stream: %v, want ErrInvalidParameter", err)
	}
	meter := gtNewMeter(t, down.Format(), opts)
	up := gtResample(t, gtTee(t, down, meter), fs, dsp.ResampleMedium)
	out := gtReadAll(t, up)
	if out.Frames() != x.Frames() {
		t.Fatalf("%d frames out of %d", out.Frames(), x.Frames())
	}
	mid := gtReadAll(t, gtResample(t, audio.NewBufferSource(x, fs), 44100, dsp.ResampleMedium))
	want, err := loudness.MeasureBuffer(mid, 44100, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := meter.Result()
	if got.Integrated != want.Integrated || got.TruePeak != want.TruePeak || got.LRA != want.LRA || got.Frames != want.Frames {
		t.Fatalf("teed meter: %.4f LUFS, %.4f dBTP, %d frames; separate pass: %.4f LUFS, %.4f dBTP, %d frames",
			got.Integrated, got.TruePeak, got.Frames, want.Integrated, want.TruePeak, want.Frames)
	}
	t.Logf("teed meter at 44.1 kHz: %.2f LUFS, %.2f dBTP (identical to a separate pass)", got.Integrated, got.TruePeak)
}

// A sink's error comes out of Read and stays; sinks after it are not
// written; Close closes the source and leaves the sinks alone.
func TestTeeErrorsAndClose(t *testing.T) {
	x := audiotest.Noise(1, 10000, 0.5, 1)
	a, b, c := &gtCollect{}, &gtCollect{fail: errGT}, &gtCollect{}
	src := gtIrregularSource(x, 48000, 2)
	tee := gtTee(t, src, a, b, c)
	buf := audio.NewBuffer(1, 100)
	if n, err := tee.Read(buf); n != 0 || !errors.Is(err, errGT) {
		t.Fatalf("Read = %d, %v; want the sink's error", n, err)
	}
	if n, err := tee.Read(buf); n != 0 || !errors.Is(err, errGT) {
		t.Fatalf("second Read = %d, %v; want the sink's error again", n, err)
	}
	if a.writes != 1 || b.writes != 1 || c.writes != 0 {
		t.Fatalf("writes %d %d %d; want 1 1 0", a.writes, b.writes, c.writes)
	}
	if err := tee.Close(); err != nil || src.closed != 1 || a.closed+b.closed+c.closed != 0 {
		t.Fatalf("Close: %v; source closed %d times, sinks %d", err, src.closed, a.closed+b.closed+c.closed)
	}
	if _, err := tee.Read(audio.NewBuffer(2, 10)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("stereo buffer for a mono stream: %v", err)
	}
	if _, err := dsp.NewTee(src, a, nil); !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Errorf("nil sink: %v, want ErrInvalidParameter", err)
	}
	// Upstream errors pass through untouched.
	bad := gtIrregularSource(x, 48000, 3)
	bad.fail = errGT
	tee = gtTee(t, bad, &gtCollect{})
	var err error
	for err == nil {
		_, err = tee.Read(buf)
	}
	if !errors.Is(err, errGT) {
		t.Errorf("upstream error: %v", err)
	}
}

func TestTeeZeroAllocs(t *testing.T) {
	meter := gtNewMeter(t, audio.Format{SampleRate: 48000, Channels: 2}, loudness.Options{Mode: loudness.ModeEBU})
	tee := gtTee(t, &gtLoop{buf: audiotest.Noise(2, 10000, 0.5, 1), fs: 48000}, meter, audio.SinkFunc(func(audio.Buffer) error { return nil }))
	buf := audio.NewBuffer(2, 4096)
	if a := testing.AllocsPerRun(50, func() {
		if _, err := tee.Read(buf); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per Read", a)
	}
}

func gtNewMeter(t testing.TB, f audio.Format, opts loudness.Options) *loudness.Meter {
	t.Helper()
	m, err := loudness.NewMeter(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
