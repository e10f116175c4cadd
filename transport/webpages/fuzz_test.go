package webpages

import (
	"encoding/json"
	"testing"

	"github.com/audiopost/audiopost/production"
)

// FuzzEditRequest feeds arbitrary edit form values: editRequest never
// panics, and a request it builds only sets algorithm values the table
// allows, which the API's decoder accepts.
func FuzzEditRequest(f *testing.F) {
	f.Add("Title", "2024", "on", "-23", "", "100")
	f.Add("", "next year", "", "-99", "x", "")
	f.Add("\x00<script>", "1e3", "off", "-16.0", "Same", "-1")
	f.Fuzz(func(t *testing.T, title, year, leveler, target, speech, amount string) {
		p := &production.Production{Algorithms: production.AlgorithmValues{"denoise": true}}
		form := map[string][]string{
			"title": {title}, "year": {year}, "alg.leveler": {leveler}, "alg.loudnesstarget": {target},
			"alg.levelerstrength_speech": {speech}, "alg.denoiseamount": {amount},
		}
		body, errs := editRequest(p, form)
		if len(errs) > 0 {
			if body != nil {
				t.Fatalf("errors %v with a body", errs)
			}
			return
		}
		var req struct {
			Algorithms map[string]json.RawMessage `json:"algorithms"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		for k, raw := range req.Algorithms {
			a, ok := production.LookupAlgorithm(k, production.ScopeSingletrack)
			if !ok {
				t.Fatalf("unknown key %q sent", k)
			}
			if string(raw) == "null" {
				if a.DefaultFrom == "" {
					t.Fatalf("%s unset though it has no base key", k)
				}
				continue
			}
			vals := production.ParseAlgorithms(production.RawAlgorithms{k: raw}, "algorithms", production.FieldErrors{})
			if v, ok := vals[k]; !ok || !a.Allowed(v) {
				t.Fatalf("%s=%s is not an allowed value", k, raw)
			}
		}
		if _, err := production.DecodeInput(body); err != nil {
			// Only the free-text year may be rejected, as a field error.
			fe, ok := err.(production.FieldErrors)
			if !ok || len(fe) != 1 || fe["metadata.year"] == "" {
				t.Fatalf("DecodeInput: %v", err)
			}
		}
	})
}
