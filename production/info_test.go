package production

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specKeys are the algorithm keys the API spec names, by scope, with the
// ones the spec leaves unnamed (the cutters' switch, mode and fade time)
// and msclassifier, which single tracks take too.
var specKeys = map[Scope][]string{
	ScopeSingletrack: {"hipfilter", "filtermethod", "leveler", "levelerstrength", "compressor", "normloudness", "loudnesstarget", "maxpeak", "dualmono", "loudnessmethod", "maxlra", "maxs", "maxm", "denoise", "denoisemethod", "denoiseamount", "deverbamount", "debreathamount", "dehum", "dehumamount", "silence_cutter", "filler_cutter", "cough_cutter", "music_cutter", "segments", "levelerstrength_speech", "levelerstrength_music", "compressor_speech", "compressor_music", "musicgain",
		"cutter", "cut_mode", "fadetime", "msclassifier"},
	ScopeMaster: {"leveler", "loudnesstarget", "gate", "crossgate", "maxpeak", "dualmono", "loudnessmethod", "maxlra", "maxs", "maxm"},
	ScopeTrack:  {"hipfilter", "filtermethod", "denoise", "denoisemethod", "denoiseamount", "deverbamount", "debreathamount", "dehum", "dehumamount", "backforeground", "backgroundgain", "ducking_fadetime", "gain", "levelerstrength", "compressor", "pan", "msclassifier", "loop_trim"},
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

func TestViewDefaults(t *testing.T) {
	single := AlgorithmValues{}.In(ScopeSingletrack)
	got := map[string]any{
		"hipfilter": single.Bool("hipfilter"), "filtermethod": single.String("filtermethod"), "leveler": single.Bool("leveler"),
		"levelerstrength": single.Int("levelerstrength"), "levelerstrength_speech": single.Int("levelerstrength_speech"),
		"compressor_music": single.String("compressor_music"), "normloudness": single.Bool("normloudness"),
		"loudnesstarget": single.Int("loudnesstarget"), "loudnessmethod": single.String("loudnessmethod"),
		"maxpeak": single.Float("maxpeak"), "denoisemethod": single.String("denoisemethod"), "debreathamount": single.Int("debreathamount"),
		"levelerstrength_music set": single.Set("levelerstrength_music"),
	}
	want := map[string]any{
		"hipfilter": true, "filtermethod": "autoeq", "leveler": true, "levelerstrength": 100, "levelerstrength_speech": 100,
		"compressor_music": "auto", "normloudness": true, "loudnesstarget": -16, "loudnessmethod": "program", "maxpeak": 0.0,
		"denoisemethod": "classic", "debreathamount": -1, "levelerstrength_music set": false,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("single-track defaults (-want +got):\n%s", d)
	}
	// The split keys follow their base key when unset.
	a := AlgorithmValues{"levelerstrength": 60, "compressor": "hard", "levelerstrength_music": 120}.In(ScopeSingletrack)
	if a.Int("levelerstrength_speech") != 60 || a.Int("levelerstrength_music") != 120 || a.String("compressor_speech") != "hard" {
		t.Errorf("split keys: speech %d music %d compressor %s", a.Int("levelerstrength_speech"), a.Int("levelerstrength_music"), a.String("compressor_speech"))
	}
	master := AlgorithmValues{}.In(ScopeMaster)
	if !master.Bool("gate") || !master.Bool("crossgate") || master.Int("loudnesstarget") != -16 {
		t.Errorf("master defaults: gate %v crossgate %v target %d", master.Bool("gate"), master.Bool("crossgate"), master.Int("loudnesstarget"))
	}
	track := AlgorithmValues{}.In(ScopeTrack)
	if track.String("filtermethod") != "hipfilter" || track.String("backforeground") != "auto" || track.Int("backgroundgain") != -18 ||
		track.Int("ducking_fadetime") != 500 || track.String("msclassifier") != "on" || track.String("pan") != "" {
		t.Errorf("track defaults wrong")
	}
	// Values parsed from a request reach the view.
	errs := FieldErrors{}
	parsed := ParseAlgorithms(RawAlgorithms{"filtering": json.RawMessage(`false`), "maxpeak": json.RawMessage(`"-1.5"`),
		"segments": json.RawMessage(`[{"start":0,"stop":3,"denoisemethod":"speech"}]`)}, "algorithms", errs)
	v := parsed.In(ScopeSingletrack)
	if len(errs) != 0 || v.Bool("hipfilter") || v.Float("maxpeak") != -1.5 || len(v.Segments("segments")) != 1 || v.Segments("segments")[0].Stop != 3 {
		t.Errorf("parsed %+v errs %v", parsed, errs)
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
		"cutlist": {"txt", "json"}, // ours: the cut list the cutters' export mode promises
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
