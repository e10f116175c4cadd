package local_test

import (
	"context"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/browser/local"
)

// FuzzNewProduction: any settings either make a production that passes
// the API's validation and asks only for formats made here, or are
// refused with an error; nothing panics.
func FuzzNewProduction(f *testing.F) {
	for _, s := range []string{
		`{"output_files": [{"format": "flac"}]}`,
		`{"preset": {"preset_name": "P", "algorithms": {"loudnesstarget": -23}}, "output_files": [{"format": "wav"}]}`,
		`{"preset": {"output_files": [{"format": "mp3"}]}}`,
		`{"preset": "x"}`, `{"preset": null}`, `{"preset": []}`, `[]`, `null`, ``,
		`{"algorithms": {"denoise": true, "segments": [{"start": 1}]}, "output_files": [{"format": "stats", "ending": "json"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, settings string) {
		p, err := local.NewProduction(context.Background(), []byte(settings), "in.wav")
		if err != nil {
			return
		}
		if errs := production.Validate(p, production.ValidateOptions{}); len(errs) > 0 {
			t.Fatalf("%s: accepted, but %v", settings, errs)
		}
		for _, o := range p.OutputFiles {
			if !offered(o.Format) {
				t.Fatalf("%s: accepted %s", settings, o.Format)
			}
		}
	})
}

func offered(f string) bool {
	for _, o := range local.Offered {
		if o == f {
			return true
		}
	}
	return false
}
