package livestream_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/livestream"
)

func algorithms(t *testing.T, js string) production.AlgorithmValues {
	t.Helper()
	var raw production.RawAlgorithms
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatal(err)
	}
	errs := production.FieldErrors{}
	v := production.ParseAlgorithms(raw, "algorithms", errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConfigDefaults(t *testing.T) {
	c, warnings, err := livestream.Config(production.AlgorithmValues{})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("defaults: %v %v", err, warnings)
	}
	if c.HighPass == 0 || !c.Leveler || c.LevelerStrength != 1 || !c.Normalize || c.TargetLUFS != -16 || c.MaxTruePeak != 0 || c.Compressor != "soft" || c.Denoise != nil {
		t.Errorf("defaults: %+v", c)
	}
	c, _, err = livestream.Config(algorithms(t, `{"loudnesstarget": -23, "maxpeak": -1, "levelerstrength": 60, "denoise": true, "denoisemethod": "dynamic", "compressor": "off", "hipfilter": false}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.TargetLUFS != -23 || c.MaxTruePeak != -1 || c.LevelerStrength != 0.6 || c.Denoise == nil || c.Denoise.DeverbDB != -1 || c.Compressor != "" || c.HighPass != 0 {
		t.Errorf("mapped: %+v", c)
	}
}

// TestConfigRefusesWholeFileKeys: every setting that needs the whole file
// is an error under its own field, and switching it off is fine.
func TestConfigRefusesWholeFileKeys(t *testing.T) {
	_, _, err := livestream.Config(algorithms(t, `{"cutter": true, "maxlra": 6, "maxs": 3, "loudnessmethod": "dialog", "filtermethod": "autoeq",
		"denoise": true, "denoisemethod": "dynamic", "deverbamount": 12, "debreathamount": 9, "segments": [{"start": 0, "stop": 10}]}`))
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !errors.Is(err, production.ErrInvalid) {
		t.Fatalf("err %v, want field errors", err)
	}
	for _, k := range []string{"cutter", "maxlra", "maxs", "loudnessmethod", "filtermethod", "deverbamount", "debreathamount", "segments"} {
		if msg, ok := fe["algorithms."+k]; !ok || !strings.Contains(msg, "live stream") {
			t.Errorf("algorithms.%s: %q", k, msg)
		}
	}
	if _, _, err := livestream.Config(algorithms(t, `{"cutter": false, "maxlra": 0, "deverbamount": -1, "debreathamount": -1, "filtermethod": "hipfilter"}`)); err != nil {
		t.Errorf("off settings refused: %v", err)
	}
	_, warnings, err := livestream.Config(algorithms(t, `{"musicgain": 3, "msclassifier": "speech"}`))
	if err != nil || len(warnings) != 2 || !strings.Contains(strings.Join(warnings, " "), "musicgain") {
		t.Errorf("speech/music keys: %v %v", err, warnings)
	}
}

func TestStatusHidesPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"icecast://source:hackme@127.0.0.1:8000/live.mp3": "icecast://source:xxx@127.0.0.1:8000/live.mp3",
		"http://example.org/stream":                       "http://example.org/stream",
	} {
		if got := livestream.Redact(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if got := livestream.RedactText("icecast://source:hackme@h:1/m: Connection refused"); strings.Contains(got, "hackme") {
		t.Errorf("message keeps the password: %s", got)
	}
}

func TestConfigDehum(t *testing.T) {
	c, _, err := livestream.Config(algorithms(t, `{"denoise": true, "dehum": 60, "dehumamount": 12}`))
	if err != nil || c.Dehum == nil || c.Dehum.Base != 60 || c.Dehum.ReductionDB != 12 {
		t.Fatalf("dehum: %+v %v", c.Dehum, err)
	}
	if c, _, _ := livestream.Config(algorithms(t, `{"denoise": true, "dehumamount": -1}`)); c.Dehum != nil {
		t.Errorf("dehumamount -1 still removes hum")
	}
}
