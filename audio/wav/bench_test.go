package wav

import (
	"context"
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// loopReader serves a header and then the same PCM bytes forever: a stream
// of unknown size that never ends, so a benchmark can read blocks without
// reopening anything.
type loopReader struct {
	head, pcm []byte
	pos       int
}

func (l *loopReader) Read(p []byte) (int, error) {
	if len(l.head) > 0 {
		n := copy(p, l.head)
		l.head = l.head[n:]
		return n, nil
	}
	n := copy(p, l.pcm[l.pos:])
	l.pos = (l.pos + n) % len(l.pcm)
	return n, nil
}

// BenchmarkRead measures decoding one 4096-frame block; x-realtime is the
// audio duration decoded per second of wall time.
func BenchmarkRead(b *testing.B) {
	for _, tc := range []struct {
		name string
		bits int
	}{{"s16-stereo", 16}, {"s24-stereo", 24}, {"f32-stereo", 32}} {
		b.Run(tc.name, func(b *testing.B) {
			const rate, block = 48000, 4096
			e, err := NewEncoder(context.Background(), io.Discard, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{BitDepth: tc.bits})
			if err != nil {
				b.Fatal(err)
			}
			head := e.header(-1)
			pcm := make([]byte, rate*e.blockAlign)
			audio.EncodePCM(pcm, audiotest.Noise(2, rate, 0.5, 1), 0, rate, e.enc)
			d, err := NewDecoder(context.Background(), &loopReader{head: head, pcm: pcm})
			if err != nil {
				b.Fatal(err)
			}
			buf := audio.NewBuffer(2, block)
			b.SetBytes(int64(block * e.blockAlign))
			b.ReportAllocs()
			for b.Loop() {
				if n, err := d.Read(buf); n != block || err != nil {
					b.Fatalf("Read = %d, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N)*block/rate/b.Elapsed().Seconds(), "x-realtime")
		})
	}
}

// BenchmarkWrite measures encoding one 4096-frame stereo block.
func BenchmarkWrite(b *testing.B) {
	for _, bits := range []int{16, 24, 32} {
		b.Run(itoa(bits)+"bit", func(b *testing.B) {
			const rate, block = 48000, 4096
			e, err := NewEncoder(context.Background(), io.Discard, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{BitDepth: bits})
			if err != nil {
				b.Fatal(err)
			}
			buf := audiotest.Noise(2, block, 0.9, 2)
			b.SetBytes(int64(block * e.blockAlign))
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*block/rate/b.Elapsed().Seconds(), "x-realtime")
		})
	}
}
