package preset

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden.json")

var now = production.Time{Time: time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)}

func mustNew(t *testing.T, body string) *Preset {
	t.Helper()
	in, err := DecodeInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := New(in, production.ApplyOptions{Now: now})
	if err != nil {
		t.Fatalf("New(%s): %v", body, err)
	}
	return pr
}

func TestPresetValidation(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"minimal", `{"preset_name":"Podcast"}`, ""},
		{"name required", `{"metadata":{"title":"x"}}`, "preset_name"},
		{"name blank", `{"preset_name":"  "}`, "preset_name"},
		{"name type", `{"preset_name":5}`, "preset_name"},
		{"no chapters", `{"preset_name":"p","chapters":[{"start":"0","title":"a"}]}`, "chapters"},
		{"no input file", `{"preset_name":"p","input_file":"https://x.org/a.wav"}`, "input_file"},
		{"not from preset", `{"preset_name":"p","preset":"other"}`, "preset"},
		{"intro from service", `{"preset_name":"p","multi_input_files":[{"type":"intro","service":"svc","input_file":"intro.wav"}]}`, ""},
		{"intro from url", `{"preset_name":"p","multi_input_files":[{"type":"intro","input_file":"https://x.org/i.wav"}]}`, ""},
		{"intro needs source", `{"preset_name":"p","multi_input_files":[{"type":"outro"}]}`, "multi_input_files.0.input_file"},
		{"production rules apply", `{"preset_name":"p","algorithms":{"loudnesstarget":-17}}`, "algorithms.loudnesstarget"},
		{"multitrack rules apply", `{"preset_name":"p","is_multitrack":true,"algorithms":{"denoise":true}}`, "algorithms.denoise"},
		{"output service urls", `{"preset_name":"p","output_files":[{"format":"mp3","outgoing_service_urls":["https://x.org/s"]}]}`, ""},
		{"same output names allowed without input", `{"preset_name":"p","output_files":[{"format":"mp3"},{"format":"mp3-vbr"}]}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := DecodeInput([]byte(c.body))
			if err == nil {
				_, err = New(in, production.ApplyOptions{})
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("valid preset rejected: %v", err)
				}
				return
			}
			var fe production.FieldErrors
			if !errors.As(err, &fe) || !errors.Is(err, production.ErrInvalid) {
				t.Fatalf("got %v, want form errors", err)
			}
			if _, ok := fe[c.want]; !ok {
				t.Fatalf("got %v, want error at %s", fe, c.want)
			}
		})
	}
	if errs := Validate(&Preset{}); errs["preset_name"] == "" {
		t.Errorf("Validate of empty preset: %v", errs)
	}
}
func TestPresetUpdate(t *testing.T) {
	pr := mustNew(t, `{"preset_name":"A","output_files":[{"format":"mp3"}],"metadata":{"title":"T"},"image":"https://x.org/i.jpg"}`)
	apply := func(body string) error {
		in, err := DecodeInput([]byte(body))
		if err != nil {
			return err
		}
		return pr.Apply(in, production.ApplyOptions{})
	}
	if err := apply(`{"output_files":[{"format":"flac"}],"preset_name":"B"}`); err != nil {
		t.Fatal(err)
	}
	if len(pr.OutputFiles) != 2 || pr.PresetName != "B" {
		t.Fatalf("%+v", pr)
	}
	if err := apply(`{"reset_cover_image":true}`); err != nil || pr.Image != nil {
		t.Fatalf("cover %v %v", pr.Image, err)
	}
	if err := apply(`{"reset_data":true,"metadata":{"album":"X"}}`); err != nil {
		t.Fatal(err)
	}
	if pr.PresetName != "B" || len(pr.OutputFiles) != 0 || pr.Metadata.Title != "" || pr.Metadata.Album != "X" || pr.CreationTime != now {
		t.Fatalf("after reset %+v", pr)
	}
	if err := apply(`{"preset_name":""}`); err == nil {
		t.Error("empty preset_name accepted on update")
	}
	if err := apply(`{"preset_cover_image":"x"}`); err == nil {
		t.Error("preset_cover_image without lookup accepted")
	}
	// A preset takes another preset's cover.
	cover := mustNew(t, `{"preset_name":"Cover","image":"https://x.org/cover.jpg"}`)
	in, _ := DecodeInput([]byte(`{"preset_cover_image":"cover"}`))
	if err := pr.Apply(in, production.ApplyOptions{Presets: production.Presets{"cover": cover.Template()}}); err != nil || pr.Image == nil || *pr.Image != "https://x.org/cover.jpg" {
		t.Errorf("preset_cover_image on a preset: %v %v", pr.Image, err)
	}
}

func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".golden.json")
	if *updateGolden {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	var g, w any
	_ = json.Unmarshal(got, &g)
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, d)
	}
}

func TestGoldenPresets(t *testing.T) {
	pr := mustNew(t, `{"preset_name":"Minimal"}`)
	pr.UUID = "p-min"
	checkGolden(t, "preset_new", pr)

	full := mustNew(t, `{"preset_name":"Weekly Show","metadata":{"artist":"Hosts","year":"2025","tags":"weekly, talk"},
		"output_basename":"weekly","output_files":[{"format":"mp3","bitrate":128,"outgoing_services":["svc-ftp"],"outgoing_service_urls":["ftp://ftp.example.org/weekly/"]},{"format":"flac"}],
		"outgoing_services":[{"uuid":"svc-ftp"}],"algorithms":{"loudnesstarget":-16,"filtering":true},
		"multi_input_files":[{"type":"intro","service":"svc-ftp","input_file":"jingle.wav","offset":0.5}],
		"speech_recognition":{"uuid":"sr-1","language":"en"},"webhook":"https://hooks.example.org/p","image":"https://x.org/cover.jpg"}`)
	full.UUID = "p-full"
	checkGolden(t, "preset_full", full)

	mt := mustNew(t, `{"preset_name":"Roundtable","is_multitrack":true,"algorithms":{"crossgate":false},
		"multi_input_files":[{"type":"multitrack","id":"host","algorithms":{"backforeground":"foreground"}},{"type":"multitrack","id":"bed","algorithms":{"backforeground":"ducking","loop_trim":true}}]}`)
	mt.UUID = "p-mt"
	checkGolden(t, "preset_multitrack", mt)

	// A stored preset reads back to the same JSON.
	b, _ := json.Marshal(full)
	var back Preset
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if d := cmp.Diff(string(b), string(b2)); d != "" {
		t.Errorf("round trip:\n%s", d)
	}
	if !strings.Contains(string(b), `"outgoing_service_urls":[]`) || strings.Contains(string(b), `"status"`) || strings.Contains(string(b), `"chapters"`) {
		t.Errorf("preset shape: %s", b)
	}
}
