package goaudio

import (
	"bytes"
	"testing"

	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
)

// FuzzWAVSource: whatever the bytes, NewWAVSource and Read do not panic,
// reading ends, and a file CheckWAV accepts does not make go-audio's own
// metadata pass (ReadMetadata from the start) panic either.
func FuzzWAVSource(f *testing.F) {
	for _, tc := range hostileFiles() {
		f.Add(tc.file)
	}
	info := append([]byte("INFO"), chunk("INAM", []byte("title\x00"))...)
	f.Add(riff(chunk("fmt ", fmtBody(formatPCM, 2, 44100, 16)), chunk("LIST", info), chunk("data", make([]byte, 40)), chunk("cue ", make([]byte, 28))))
	f.Add(riff(chunk("fmt ", fmtBody(formatFloat, 1, 8000, 32)), chunk("data", make([]byte, 12))))
	f.Fuzz(func(t *testing.T, file []byte) {
		s, err := NewWAVSource(bytes.NewReader(file))
		if err != nil {
			return
		}
		buf := audio.NewBuffer(s.Format().Channels, 333)
		total := 0
		for reads := 0; ; reads++ {
			n, err := s.Read(buf)
			total += n
			if err != nil {
				break
			}
			if reads > len(file) {
				t.Fatal("no end")
			}
		}
		if total*s.Format().Channels*s.Encoding().Bytes() > len(file) {
			t.Fatalf("%d frames from %d bytes", total, len(file))
		}
		gwav.NewDecoder(bytes.NewReader(file)).ReadMetadata()
	})
}
