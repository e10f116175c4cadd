package production

import (
	"slices"
	"strings"
	"testing"
)

// A key accepted with no effect is named in the production's warning, on
// creation and on every change; one that takes effect is not.
func TestSettingsWithoutEffect(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"dehum without denoise", `{"algorithms":{"dehum":50}}`, []string{"algorithms.dehum (needs denoise: true)"}},
		{"the family without denoise", `{"algorithms":{"denoise":false,"denoisemethod":"dynamic","denoiseamount":12,"deverbamount":6,"debreathamount":6,"dehumamount":12}}`,
			[]string{"algorithms.denoisemethod (needs denoise: true)", "algorithms.denoiseamount (needs denoise: true)", "algorithms.deverbamount (needs denoise: true)",
				"algorithms.debreathamount (needs denoise: true)", "algorithms.dehumamount (needs denoise: true)"}},
		{"segments without denoise", `{"algorithms":{"segments":[{"start":0,"stop":5,"denoisemethod":"music"}]}}`, []string{"algorithms.segments (needs denoise: true)"}},
		{"dehum with hum removal off", `{"algorithms":{"denoise":true,"dehum":60,"dehumamount":-1}}`, []string{"algorithms.dehum (hum removal is off: dehumamount -1)"}},
		{"track dehum without denoise", `{"is_multitrack":true,"multi_input_files":[{"type":"multitrack","id":"a","algorithms":{"dehum":50}}]}`,
			[]string{"multi_input_files.0.algorithms.dehum (needs denoise: true)"}},
		// Applied: the family under denoise, noise reduction off included.
		{"dehum with denoise", `{"algorithms":{"denoise":true,"dehum":50}}`, nil},
		{"deverb and debreath with noise reduction off", `{"algorithms":{"denoise":true,"denoisemethod":"dynamic","denoiseamount":-1,"deverbamount":12,"debreathamount":6}}`, nil},
		// Defaults sent back and explicit offs ask for nothing.
		{"defaults sent back", `{"algorithms":{"denoise":false,"denoisemethod":"classic","denoiseamount":0,"deverbamount":0,"debreathamount":-1,"dehum":0,"dehumamount":0}}`, nil},
		{"offs without denoise", `{"algorithms":{"denoiseamount":-1,"deverbamount":-1,"dehumamount":-1}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustCreate(t, c.body)
			got := p.SettingsWithoutEffect()
			if !slices.Equal(got, c.want) {
				t.Fatalf("without effect %q, want %q", got, c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(p.WarningMessage, w) {
					t.Errorf("warning %q does not name %s", p.WarningMessage, w)
				}
			}
			if c.want == nil && p.WarningMessage != "" {
				t.Errorf("warning %q", p.WarningMessage)
			}
		})
	}
	// Switching denoise on takes the warning away.
	p := mustCreate(t, `{"algorithms":{"dehum":50}}`)
	if err := update(t, p, `{"algorithms":{"denoise":true}}`); err != nil {
		t.Fatal(err)
	}
	if p.WarningMessage != "" {
		t.Errorf("after denoise on: warning %q", p.WarningMessage)
	}
}
