package flac

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must return an error
// or audio, never panic, hang or decode more than the input can hold.
func FuzzDecode(f *testing.F) {
	for _, bits := range []int{16, 24} {
		var buf bytes.Buffer
		in := intSignal(2, 300, bits, 1)
		e, _ := NewEncoder(context.Background(), &buf, audio.Format{SampleRate: 44100, Channels: 2},
			audio.EncodeOptions{BitDepth: bits, Tags: audio.Tags{Title: "t", Cover: &audio.Picture{MIMEType: "image/png", Data: []byte("\x89PNG")}}})
		e.Write(in)
		e.Close()
		f.Add(buf.Bytes())
	}
	f.Add(verbatimFLAC(4, 8000, [][]int32{{1, -2, 3, -4, 5}}))
	f.Add(verbatimFLAC(32, 8000, [][]int32{{1 << 30, -1 << 31}, {7, 8}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		Match(data)
		d, err := NewDecoder(context.Background(), bytes.NewReader(data))
		if err != nil {
			return
		}
		buf := audio.NewBuffer(d.Format().Channels, 1000)
		var total int
		for {
			n, err := d.Read(buf)
			total += n
			if err != nil {
				if err != io.EOF && !errors.Is(err, audio.ErrMalformed) {
					t.Fatalf("unexpected error class: %v", err)
				}
				break
			}
			// A FLAC frame holds at most 65536 samples in at least a few
			// bytes, so output is bounded by the input size.
			if total > 65536*(len(data)+1) {
				t.Fatalf("%d frames from %d bytes", total, len(data))
			}
		}
	})
}
