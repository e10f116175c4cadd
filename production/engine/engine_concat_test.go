package engine

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

func constant(ch, n int, v float64) audio.Buffer {
	b := audio.NewBuffer(ch, n)
	for c := range b {
		for i := range b[c] {
			b[c][i] = v
		}
	}
	return b
}

func TestSeriesOverlaps(t *testing.T) {
	const rate = 1000
	// intro (1.0, 100 frames, overlapping 30 into main), main (10.0, 500
	// frames), outro (100.0, 50 frames, overlapping 20 of main's end).
	open := func() audio.Source {
		return newSeries(audio.Format{SampleRate: rate, Channels: 2}, []audio.Source{
			audio.NewBufferSource(constant(2, 100, 1), rate),
			audio.NewBufferSource(constant(2, 500, 10), rate),
			audio.NewBufferSource(constant(2, 50, 100), rate),
		}, []int{30, 20, 0})
	}
	out := audiotest.CheckSource(t, open)
	if got, want := out.Frames(), 100+500+50-30-20; got != want {
		t.Fatalf("%d frames, want %d", got, want)
	}
	want := func(i int) float64 {
		v := 0.0
		if i < 100 {
			v += 1
		}
		if i >= 70 && i < 570 {
			v += 10
		}
		if i >= 550 {
			v += 100
		}
		return v
	}
	for c := range out {
		for i, v := range out[c] {
			if v != want(i) {
				t.Fatalf("channel %d frame %d = %v, want %v", c, i, v, want(i))
			}
		}
	}
}

// A segment shorter than the overlap before it: the carry plays on.
func TestSeriesShortSegment(t *testing.T) {
	const rate = 1000
	open := func() audio.Source {
		return newSeries(audio.Format{SampleRate: rate, Channels: 1}, []audio.Source{
			audio.NewBufferSource(constant(1, 100, 1), rate),
			audio.NewBufferSource(constant(1, 10, 2), rate),
		}, []int{40, 0})
	}
	out := audiotest.CheckSource(t, open)
	if out.Frames() != 100 {
		t.Fatalf("%d frames, want 100 (the short second segment lies inside the overlap)", out.Frames())
	}
	for i, v := range out[0] {
		want := 1.0
		if i >= 60 && i < 70 {
			want = 3
		}
		if v != want {
			t.Fatalf("frame %d = %v, want %v", i, v, want)
		}
	}
}

func TestChannelMap(t *testing.T) {
	st := audio.NewBuffer(2, 4)
	copy(st[0], []float64{1, 2, 3, 4})
	copy(st[1], []float64{3, 2, 1, 0})
	out := audiotest.CheckSource(t, func() audio.Source { return channelMap(audio.NewBufferSource(st, 8000), 1) })
	for i, v := range out[0] {
		if v != 2 {
			t.Errorf("mono frame %d = %v, want the mean 2", i, v)
		}
	}
	up := audiotest.CheckSource(t, func() audio.Source { return channelMap(audio.NewBufferSource(out, 8000), 2) })
	if len(up) != 2 || up[1][3] != 2 {
		t.Errorf("mono to stereo: %v", up)
	}
}

func BenchmarkSeries(b *testing.B) {
	const rate = 48000
	intro := audiotest.Noise(2, 10*rate, 0.5, 1)
	main := audiotest.Noise(2, 60*rate, 0.5, 2)
	buf := audio.NewBuffer(2, audio.DefaultBlock)
	b.ReportAllocs()
	for b.Loop() {
		s := newSeries(audio.Format{SampleRate: rate, Channels: 2},
			[]audio.Source{audio.NewBufferSource(intro, rate), audio.NewBufferSource(main, rate)}, []int{2 * rate, 0})
		for {
			if _, err := s.Read(buf); err != nil {
				break
			}
		}
	}
}
