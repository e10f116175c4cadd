package production

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseChapters checks that the chapter parser never panics, reports
// every failure as a ChapterSyntaxError with a line inside the text, and
// that what it accepts survives FormatChapters unchanged.
func FuzzParseChapters(f *testing.F) {
	for _, s := range []string{
		"00:00:00 Intro\n00:01:30.250 Main <https://example.org>\n",
		"\ufeff02:05 Short\r\n\r\n1:00:00.5\tTabbed\n",
		"00:00:00 a <b> c\n", "00:00:00 <https://x.org>", "99:59:59.999 end", "00:00:01.", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		chs, err := ParseChapters(text)
		if err != nil {
			var se *ChapterSyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("bad error %v for %q", err, text)
			}
			return
		}
		again, err := ParseChapters(FormatChapters(chs))
		if err != nil {
			t.Fatalf("formatted chapters do not parse: %v\n%q", err, FormatChapters(chs))
		}
		if len(again) != len(chs) {
			t.Fatalf("round trip changed count %d -> %d", len(chs), len(again))
		}
		for i := range chs {
			if again[i].Start != chs[i].Start || again[i].Title != chs[i].Title || again[i].URL != chs[i].URL {
				t.Fatalf("round trip changed chapter %d: %+v -> %+v", i, chs[i], again[i])
			}
		}
	})
}

// FuzzDecodeProduction feeds arbitrary request bodies through decoding,
// creation, validation and marshalling: nothing may panic, every rejection
// must be an ErrInvalid error, and every accepted production must be valid,
// marshal, and read back into a valid production.
func FuzzDecodeProduction(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"metadata":{"title":"x","track":"3","tags":"a,b"}}`,
		`{"output_files":[{"format":"mp3","bitrate":"128"},{"format":"video","subtitle_font_size":30}],"speech_recognition":{"uuid":"s"}}`,
		`{"algorithms":{"segments":[{"start":0,"stop":1},{"start":1,"stop":2}],"denoisemethod":"dynamic","debreathamount":6}}`,
		`{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"pan":"L50"}}]}`,
		`{"chapters":[{"start":"00:00:01","title":"t"}],"input_file":"https://x.org/a.wav"}`,
		`{"reset_data":true,"preset":"x"}`, `[]`, `{"algorithms":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeInput(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("decode error %v does not wrap ErrInvalid", err)
			}
			return
		}
		p, err := New(in, ApplyOptions{})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("create error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if errs := Validate(p, ValidateOptions{}); errs != nil {
			t.Fatalf("accepted production is invalid: %v", errs)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back Production
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("stored production does not read back: %v\n%s", err, b)
		}
		if errs := Validate(&back, ValidateOptions{}); errs != nil {
			t.Fatalf("production invalid after a JSON round trip: %v\n%s", errs, b)
		}
	})
}
