package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"image/png"
	"testing"

	"github.com/audiopost/audiopost/production"
)

// FuzzThumbnail feeds arbitrary bytes as an uploaded cover: the result is
// an error or a 200x200 PNG, never a panic or a huge allocation.
func FuzzThumbnail(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	f.Add([]byte{0xff, 0xd8, 0xff, 0xe0})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := thumbnail(data)
		if err != nil {
			return
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("thumbnail is not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != ThumbnailSize || b.Dy() != ThumbnailSize {
			t.Fatalf("thumbnail is %v", b)
		}
	})
}

// FuzzSimpleRequest feeds arbitrary simple API form values: the result is
// a form error or a request that production.DecodeInput accepts as a
// JSON object (type errors of fields are fine, malformed JSON is not).
func FuzzSimpleRequest(f *testing.F) {
	f.Add("Title", "a, b", "00:00:00 Intro\n00:01:00.5 Next <https://x.org>", "-16", "true", "yes")
	f.Add("", "", "", "", "", "")
	f.Add("\x00", ",,,", "99:99 x", "1e99", "maybe", "0")
	f.Fuzz(func(t *testing.T, title, tags, chapters, target, hip, appendCh string) {
		fields := map[string]string{"title": title, "tags": tags, "chapters": chapters, "loudnesstarget": target,
			"hipfilter": hip, "append_chapters": appendCh, "track": target}
		body, err := simpleRequest(fields, false, false)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != 400 || len(ae.form) == 0 {
				t.Fatalf("error is not a form error: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("invalid JSON %q", body)
		}
		_, err = production.DecodeInput(body)
		var fe production.FieldErrors
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("request is not a JSON object: %v", err)
		}
	})
}
