package chain

import (
	"errors"
	"testing"
)

// FuzzParseAlgorithms: algorithms objects come from API clients. Parsing
// must never panic, must fail only with ErrInvalidConfig, and whatever it
// accepts must validate.
func FuzzParseAlgorithms(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"loudnesstarget": -16, "maxpeak": -1.5, "filtering": "1"}`,
		`{"levelerstrength": 120, "compressor_music": "off", "musicgain": -12}`,
		`{"maxpeak": "-0.5", "maxs": 12, "maxm": 20, "maxlra": 3}`, `{"leveler": null}`, `[]`, `"x"`,
		`{"loudnesstarget": 1e400}`, `{"levelerstrength": -0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseAlgorithms(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted %s but Validate says %v", data, err)
		}
	})
}
