package wav

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// FuzzDecode decodes arbitrary input, seekable or not, under a frame cap.
// It must never panic or hang, must keep the Source contract, and must fail
// only with errors that wrap the audio sentinels.
func FuzzDecode(f *testing.F) {
	noise := audiotest.Noise(3, 300, 0.9, 5)
	for _, bits := range []int{16, 24, 32} {
		var buf bytes.Buffer
		e, err := NewEncoder(context.Background(), onlyWriter{&buf}, audio.Format{SampleRate: 48000, Channels: 3}, audio.EncodeOptions{BitDepth: bits, Tags: testTags})
		if err != nil {
			f.Fatal(err)
		}
		if err := e.Write(noise); err != nil {
			f.Fatal(err)
		}
		if err := e.Close(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), false)
		f.Add(buf.Bytes(), true)
	}
	f.Add(riff(chunk("fmt ", fmtChunk(formatPCM, 1, 8000, 8)), chunk("LIST", []byte("INFOINAM\x02\x00\x00\x00a\x00")), chunk("data", []byte{1, 2, 3})), false)
	f.Add(riff(chunk("fmt ", extChunk(formatFloat, 2, 44100, 64, 64, 3)), chunk("data", make([]byte, 32))), true)
	f.Add(append([]byte("RF64\xff\xff\xff\xffWAVEds64\x1c\x00\x00\x00"), make([]byte, 28)...), false)

	const maxFrames = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte, seekable bool) {
		var r io.Reader = onlyReader{bytes.NewReader(data)}
		if seekable {
			r = bytes.NewReader(data)
		}
		d, err := NewDecoder(context.Background(), r)
		if err != nil {
			if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnsupported) && !errors.Is(err, audio.ErrUnknownFormat) {
				t.Fatalf("NewDecoder error wraps no audio sentinel: %v", err)
			}
			return
		}
		if err := d.Format().Validate(); err != nil {
			t.Fatalf("decoder accepted an invalid format: %v", err)
		}
		buf := audio.NewBuffer(d.Format().Channels, 1000)
		total := 0
		for total < maxFrames {
			n, err := d.Read(buf)
			if (n == 0) != (err != nil) || n < 0 || n > 1000 {
				t.Fatalf("Read = %d, %v", n, err)
			}
			total += n
			if err == io.EOF {
				if fr := d.Info().Frames; fr >= 0 && int64(total) != fr {
					t.Fatalf("decoded %d frames to EOF, Info says %d", total, fr)
				}
				break
			}
			if err != nil {
				if !errors.Is(err, audio.ErrMalformed) {
					t.Fatalf("Read error is not ErrMalformed: %v", err)
				}
				break
			}
		}
		if total > len(data) {
			t.Fatalf("%d frames from %d bytes", total, len(data))
		}
	})
}
