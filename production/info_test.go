package production

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specKeys are the algorithm keys the API spec names, by scope.
var specKeys = map[Scope][]string{
	ScopeSingletrack: {"hipfilter", "filtermethod", "leveler", "levelerstrength", "compressor", "normloudness", "loudnesstarget", "maxpeak", "dualmono", "loudnessmethod", "maxlra", "maxs", "maxm", "denoise", "denoisemethod", "denoiseamount", "deverbamount", "debreathamount", "dehum", "dehumamount", "silence_cutter", "filler_cutter", "cough_cutter", "music_cutter", "segments", "levelerstrength_speech", "levelerstrength_music", "compressor_speech", "compressor_music", "musicgain"},
	ScopeMaster:      {"leveler", "loudnesstarget", "gate", "crossgate", "maxpeak", "dualmono", "loudnessmethod", "maxlra", "maxs", "maxm"},
	ScopeTrack:       {"hipfilter", "filtermethod", "denoise", "denoisemethod", "denoiseamount", "deverbamount", "debreathamount", "dehum", "dehumamount", "backforeground", "backgroundgain", "ducking_fadetime", "gain", "levelerstrength", "compressor", "pan", "msclassifier", "loop_trim"},
}

func TestAlgorithmTableMatchesSpec(t *testing.T) {
	for scope, keys := range specKeys {
		info := AlgorithmInfoFor(scope)
		if len(info) != len(keys) {
			t.Errorf("scope %v: %d keys in the table, spec has %d", scope.Names(), len(info), len(keys))
		}
		for _, k := range keys {
			e, ok := info[k]
			if !ok {
				t.Errorf("scope %v: key %q missing", scope.Names(), k)
				continue
			}
			if e.DisplayName == "" || e.Description == "" {
				t.Errorf("%s: no display name or description", k)
			}
			a, _ := LookupAlgorithm(k, scope)
			if a.Kind == KindBool && (e.Type != "checkbox" || len(e.Options) != 0) {
				t.Errorf("%s: boolean shown as %s", k, e.Type)
			}
			if (a.Kind == KindInt || a.Kind == KindString || a.Kind == KindFloat) && (e.Type != "select" || len(e.Options) == 0) {
				t.Errorf("%s: select without options", k)
			}
			if a.Default != nil && !a.Allowed(a.Default) {
				t.Errorf("%s: default %v is not one of its options", k, a.Default)
			}
			if e.BelongsTo != "" {
				if _, ok := anyAlgorithm(e.BelongsTo); !ok {
					t.Errorf("%s belongs to unknown %s", k, e.BelongsTo)
				}
			}
		}
	}
	// Each info value marshals with the spec's field names.
	b, err := json.Marshal(AlgorithmInfo()["loudnesstarget"])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, f := range []string{"default_value", "type", "display_name", "description", "belongs_to", "options", "scopes"} {
		if _, ok := m[f]; !ok {
			t.Errorf("loudnesstarget info lacks %s: %s", f, b)
		}
	}
	if m["default_value"] != -16.0 {
		t.Errorf("loudnesstarget default %v, want -16", m["default_value"])
	}
}

func TestTypedDefaults(t *testing.T) {
	got := AlgorithmValues{}.SingleTrack()
	want := Algorithms{
		Filtering: true, FilterMethod: "autoeq", Leveler: true, LevelerStrength: 100,
		LevelerStrengthSpeech: 100, LevelerStrengthMusic: 100, Compressor: "auto", CompressorSpeech: "auto",
		CompressorMusic: "auto", NormLoudness: true, LoudnessTarget: -16, LoudnessMethod: "program",
		DenoiseMethod: "classic", DebreathAmount: -1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("single-track defaults (-want +got):\n%s", d)
	}
	// The split keys follow their base key when unset.
	v := AlgorithmValues{"levelerstrength": 60, "compressor": "hard", "levelerstrength_music": 120}
	a := v.SingleTrack()
	if a.LevelerStrengthSpeech != 60 || a.LevelerStrengthMusic != 120 || a.CompressorSpeech != "hard" {
		t.Errorf("split keys %+v", a)
	}
	if d := cmp.Diff(MasterAlgorithms{Leveler: true, LoudnessTarget: -16, Gate: true, Crossgate: true, LoudnessMethod: "program"}, AlgorithmValues{}.Master()); d != "" {
		t.Errorf("master defaults:\n%s", d)
	}
	wantTrack := TrackAlgorithms{Filtering: true, FilterMethod: "hipfilter", DenoiseMethod: "classic", DebreathAmount: -1,
		BackForeground: "auto", BackgroundGain: -18, DuckingFadeTime: 500, LevelerStrength: 100, Compressor: "auto", MSClassifier: "on"}
	if d := cmp.Diff(wantTrack, AlgorithmValues{}.Track()); d != "" {
		t.Errorf("track defaults:\n%s", d)
	}
	// Values parsed from a request reach the typed view.
	errs := FieldErrors{}
	parsed := ParseAlgorithms(RawAlgorithms{"filtering": json.RawMessage(`false`), "maxpeak": json.RawMessage(`"-1.5"`),
		"segments": json.RawMessage(`[{"start":0,"stop":3,"denoisemethod":"speech"}]`)}, "algorithms", errs)
	a = parsed.SingleTrack()
	if len(errs) != 0 || a.Filtering || a.MaxPeak != -1.5 || len(a.Segments) != 1 || a.Segments[0].Stop != 3 {
		t.Errorf("parsed %+v errs %v", a, errs)
	}
	// Stored values survive a JSON round trip with their Go types.
	b, _ := json.Marshal(parsed)
	var back AlgorithmValues
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(parsed, back); d != "" {
		t.Errorf("round trip:\n%s", d)
	}
}

func TestOutputFormatInfo(t *testing.T) {
	info := OutputFormatInfo()
	specEndings := map[string][]string{
		"mp3": {"mp3"}, "mp3-vbr": {"mp3"}, "vorbis": {"ogg", "oga"}, "opus": {"opus"}, "aac": {"m4a", "mp4", "m4b"},
		"flac": {"flac"}, "alac": {"m4a", "mp4"}, "wav": {"wav"}, "wav-24bit": {"wav"}, "descr": {"json", "xml", "yaml"},
		"stats": {"txt", "json", "yaml"}, "chaps": {"chapters.txt"}, "psc": {"psc", "xml"}, "tracks": {"flac.zip", "wav.zip"},
		"speech": {"json", "xml"}, "subtitle": {"srt", "webvtt"}, "transcript": {"html", "txt"},
		"video": nil, "audiogram": nil, "input": nil, "image": nil, "waveform": nil,
	}
	if len(info) != len(specEndings) {
		t.Errorf("%d formats, spec has %d", len(info), len(specEndings))
	}
	for name, endings := range specEndings {
		fi, ok := info[name]
		if !ok {
			t.Errorf("format %s missing", name)
			continue
		}
		for _, e := range endings {
			if !slices.Contains(fi.Endings, e) {
				t.Errorf("%s lacks ending %s", name, e)
			}
		}
	}
	for name, def := range map[string]string{"mp3": "96", "mp3-vbr": "96", "aac": "64", "vorbis": "80", "opus": "48"} {
		fi := info[name]
		if fi.Type != TypeLossy || fi.DefaultBitrate != def || !slices.Contains(fi.Bitrates, def) || len(fi.BitrateStrings) != len(fi.Bitrates) {
			t.Errorf("%s: %+v", name, fi)
		}
	}
	for _, name := range []string{"flac", "alac", "wav", "wav-24bit"} {
		if fi := info[name]; fi.Type != TypeLossless || fi.Bitrates != nil || fi.DefaultBitrate != "" {
			t.Errorf("%s: %+v", name, fi)
		}
	}
	if info["video"].Type != TypeVideo || info["descr"].Type != TypeDescription {
		t.Error("video/description types")
	}
}
