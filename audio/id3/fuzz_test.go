package id3_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
)

func fuzzSeeds(f *testing.F) {
	f.Add(v23(8, "TIT2", "\x00Show", "CHAP", chap("ch0", 0, 1000, "One"), "CHAP", chap("ch1", 1000, 2000, "Two")))
	f.Add(v23(0, "CHAP", chap("c", 0, 1, "")+"WXXX\x00\x00\x00\x05\x00\x00\x01\xff\xfe\x00\x00"))
	f.Add([]byte("ID3\x04\x00\x40\x00\x00\x00\x0a\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("ID3\x03\x00\x00\x7f\x7f\x7f\x7f"))
	if _, ok := need.HasProgram(f, "ffmpeg"); ok {
		mp3 := ffmpegMP3(f, 3, false)
		f.Add(mp3[:tagLen(mp3)+4])
	}
}

// FuzzParseTags: any input is tags or an error of class
// audio.ErrMalformed, and a cover never exceeds the input.
func FuzzParseTags(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte("ID3\x03\x00\x00\x00\x00\x00\x1aTIT2\x00\x00\x00\x03\x00\x00\x00hiCOMM\x00\x00\x00\x01\x00\x00\x00"))
	f.Add([]byte("ID3\x04\x00\x80\x00\x00\x00\x0cTIT2\x00\x00\x00\x02\x00\x03\x03\xff\x00"))
	f.Add([]byte("ID3\x02\x00\x00\x00\x00\x00\x0cPIC\x00\x00\x06\x00PNG\x03\x00x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tags, err := id3.ParseTags(data)
		if err != nil && !errors.Is(err, audio.ErrMalformed) {
			t.Fatalf("unexpected error class: %v", err)
		}
		if tags.Cover != nil && tags.Cover.Size > len(data) {
			t.Fatalf("cover of %d bytes from %d bytes", tags.Cover.Size, len(data))
		}
		if len(data) >= 128 {
			id3.ParseV1(data[len(data)-128:])
		}
	})
}

// FuzzReadChapters: any input is chapters or an error, never a panic or
// an allocation beyond what the input holds.
func FuzzReadChapters(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := id3.ReadChapters(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Image != nil && len(c.Image.Data) > len(data) {
				t.Fatalf("picture of %d bytes from %d bytes of input", len(c.Image.Data), len(data))
			}
		}
	})
}

// FuzzAddChapterExtras: a tag that is rewritten reads back with the same
// chapters plus the extras, and the bytes after the tag are kept.
func FuzzAddChapterExtras(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		before, err := id3.ReadChapters(bytes.NewReader(data))
		if err != nil {
			return
		}
		extras := make([]id3.ChapterExtra, len(before))
		for i := range extras {
			if i%2 == 0 {
				extras[i] = id3.ChapterExtra{URL: "https://example.org/é", Image: &id3.Picture{MIMEType: "image/png", Data: bytes.Repeat([]byte{byte(i)}, 200)}}
			}
		}
		var out bytes.Buffer
		if err := id3.AddChapterExtras(&out, bytes.NewReader(data), extras); err != nil {
			if errors.Is(err, id3.ErrUnsupported) {
				return // e.g. an extended header, which is only read
			}
			t.Fatalf("tag that reads fails to rewrite: %v", err)
		}
		after, err := id3.ReadChapters(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("rewritten tag does not read: %v", err)
		}
		if len(after) != len(before) {
			t.Fatalf("%d chapters after, %d before", len(after), len(before))
		}
		for i, a := range after {
			b, e := before[i], extras[i]
			if a.ElementID != b.ElementID || a.Start != b.Start || a.End != b.End || a.Title != b.Title {
				t.Fatalf("chapter %d changed: %+v, was %+v", i, a, b)
			}
			if e.Image != nil && (a.URL != "https://example.org/%C3%A9" || a.Image == nil || !bytes.Equal(a.Image.Data, e.Image.Data)) {
				t.Fatalf("chapter %d lacks its extras: %+v", i, a)
			}
			if e.Image == nil && (a.URL != b.URL || (a.Image == nil) != (b.Image == nil)) {
				t.Fatalf("chapter %d without extras changed: %+v, was %+v", i, a, b)
			}
		}
		if n, m := tagLen(data), tagLen(out.Bytes()); !bytes.Equal(data[n:], out.Bytes()[m:]) {
			t.Fatal("the bytes after the tag changed")
		}
	})
}
