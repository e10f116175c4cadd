package simpleform

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

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
			var ae *envelope.Error
			if !errors.As(err, &ae) || ae.Status != 400 || len(ae.Form) == 0 {
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
