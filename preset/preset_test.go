package preset

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
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
	pr, err := New(context.Background(), in, nil, production.ApplyOptions{Now: now})
	if err != nil {
		t.Fatalf("New(%s): %v", body, err)
	}
	return pr
}

// store is an in-memory Lookup.
type store map[string]*Preset

func (s store) lookup(_ context.Context, uuid string) (*Preset, error) {
	if pr, ok := s[uuid]; ok {
		return pr, nil
	}
	return nil, fmt.Errorf("preset %q: %w", uuid, ErrNotFound)
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
				_, err = New(context.Background(), in, nil, production.ApplyOptions{})
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

func TestNewProductionFromPreset(t *testing.T) {
	pr := mustNew(t, `{"preset_name":"Weekly","metadata":{"artist":"Preset Artist","album":"Show","genre":"Podcast","tags":["a"]},
		"output_basename":"weekly","output_files":[{"format":"mp3"},{"format":"flac"}],"outgoing_services":[{"uuid":"svc"}],
		"algorithms":{"loudnesstarget":-23,"denoise":true},"webhook":"https://h.org/x","image":"https://x.org/cover.jpg"}`)
	pr.UUID = "pre1"
	s := store{"pre1": pr}
	in, err := production.DecodeInput([]byte(`{"preset":"pre1","input_file":"https://x.org/ep.wav","metadata":{"artist":"Guest Host"},"algorithms":{"denoise":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	tags := audio.Tags{Title: "File Title", Artist: "File Artist", Album: "File Album", Year: "2024-06-01", Track: "7/20"}
	p, err := NewProduction(context.Background(), in, s.lookup, tags, production.ApplyOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Metadata
	// Request beats preset beats file tags; file tags fill what is left.
	if m.Artist != "Guest Host" || m.Album != "Show" || m.Genre != "Podcast" || m.Title != "File Title" || m.Year != "2024" || m.Track != "7" {
		t.Errorf("metadata %+v", m)
	}
	a := p.Algorithms.In(production.ScopeSingletrack)
	if a.Int("loudnesstarget") != -23 || a.Bool("denoise") {
		t.Errorf("algorithms %+v", p.Algorithms)
	}
	if len(p.OutputFiles) != 2 || p.OutputBasename != "weekly" || len(p.OutgoingServices) != 1 || p.Webhook == nil || p.Image == nil {
		t.Errorf("preset values not taken: %+v", p)
	}
	if p.OutputFilename(0) != "weekly.mp3" {
		t.Errorf("filename %s", p.OutputFilename(0))
	}
	// Request output files replace the preset's.
	in2, _ := production.DecodeInput([]byte(`{"preset":"pre1","output_files":[{"format":"opus"}]}`))
	p2, err := NewProduction(context.Background(), in2, s.lookup, audio.Tags{}, production.ApplyOptions{})
	if err != nil || len(p2.OutputFiles) != 1 || p2.OutputFiles[0].Format != "opus" {
		t.Fatalf("output files %+v %v", p2, err)
	}
	// The preset itself is not modified.
	if len(pr.OutputFiles) != 2 || pr.Metadata.Artist != "Preset Artist" {
		t.Error("creating a production changed the preset")
	}
	// Unknown preset.
	in3, _ := production.DecodeInput([]byte(`{"preset":"nope"}`))
	_, err = NewProduction(context.Background(), in3, s.lookup, audio.Tags{}, production.ApplyOptions{})
	var fe production.FieldErrors
	if !errors.As(err, &fe) || fe["preset"] == "" {
		t.Errorf("unknown preset: %v", err)
	}
	// A failing lookup is not a client error.
	boom := errors.New("db down")
	_, err = NewProduction(context.Background(), in3, func(context.Context, string) (*Preset, error) { return nil, boom }, audio.Tags{}, production.ApplyOptions{})
	if !errors.Is(err, boom) {
		t.Errorf("lookup failure: %v", err)
	}
}

func TestMultitrackPresetMerge(t *testing.T) {
	pr := mustNew(t, `{"preset_name":"Roundtable","is_multitrack":true,"algorithms":{"gate":false},
		"multi_input_files":[{"type":"multitrack","id":"host","algorithms":{"gain":3,"pan":"L25"}},{"type":"intro","service":"svc","input_file":"intro.wav"}]}`)
	s := store{"rt": pr}
	in, _ := production.DecodeInput([]byte(`{"preset":"rt","multi_input_files":[{"id":"host","input_file":"https://x.org/host.wav","algorithms":{"gain":-3}},{"type":"multitrack","id":"guest","input_file":"https://x.org/guest.wav"}]}`))
	p, err := NewProduction(context.Background(), in, s.lookup, audio.Tags{}, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsMultitrack || p.Algorithms.In(production.ScopeMaster).Bool("gate") || len(p.MultiInputFiles) != 3 {
		t.Fatalf("%+v", p.MultiInputFiles)
	}
	var host *production.MultiInputFile
	for i := range p.MultiInputFiles {
		if p.MultiInputFiles[i].ID == "host" {
			host = &p.MultiInputFiles[i]
		}
	}
	if host == nil || host.Type != "multitrack" || host.InputFile != "https://x.org/host.wav" {
		t.Fatalf("host %+v", host)
	}
	if ta := host.Algorithms.In(production.ScopeTrack); ta.Int("gain") != -3 || ta.String("pan") != "L25" {
		t.Errorf("host algorithms %+v", host.Algorithms)
	}
	if !p.CanStart() {
		t.Error("multitrack production with tracks cannot start")
	}
}

func TestUpdateProduction(t *testing.T) {
	cover := mustNew(t, `{"preset_name":"Cover","image":"https://x.org/cover.jpg"}`)
	th := "https://x.org/thumb.jpg"
	cover.Thumbnail = &th
	noCover := mustNew(t, `{"preset_name":"Plain","algorithms":{"loudnesstarget":-19},"metadata":{"publisher":"Pub"}}`)
	s := store{"cover": cover, "plain": noCover}
	ctx := context.Background()
	newProd := func() *production.Production {
		in, _ := production.DecodeInput([]byte(`{"input_file":"https://x.org/a.wav","metadata":{"title":"T"},"output_files":[{"format":"mp3"}],"algorithms":{"maxpeak":-1}}`))
		p, err := production.New(in, production.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	upd := func(p *production.Production, body string) error {
		in, err := production.DecodeInput([]byte(body))
		if err != nil {
			return err
		}
		return UpdateProduction(ctx, p, in, s.lookup, production.ApplyOptions{})
	}
	t.Run("preset_cover_image", func(t *testing.T) {
		p := newProd()
		if err := upd(p, `{"preset_cover_image":"cover"}`); err != nil {
			t.Fatal(err)
		}
		if p.Image == nil || *p.Image != "https://x.org/cover.jpg" || p.Thumbnail == nil || *p.Thumbnail != th {
			t.Errorf("image %v thumb %v", p.Image, p.Thumbnail)
		}
		err := upd(p, `{"preset_cover_image":"plain"}`)
		var fe production.FieldErrors
		if !errors.As(err, &fe) || fe["preset_cover_image"] == "" {
			t.Errorf("preset without cover: %v", err)
		}
	})
	t.Run("preset with reset_data", func(t *testing.T) {
		p := newProd()
		err := upd(p, `{"preset":"plain","reset_data":true}`)
		var fe production.FieldErrors
		if !errors.As(err, &fe) || fe["preset"] == "" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("reset_data with cover from preset", func(t *testing.T) {
		p := newProd()
		if err := upd(p, `{"reset_data":true,"preset_cover_image":"cover","output_files":[{"format":"opus"}]}`); err != nil {
			t.Fatal(err)
		}
		if p.InputFile == "" || p.Metadata.Title != "" || len(p.OutputFiles) != 1 || p.OutputFiles[0].Format != "opus" || p.Image == nil || len(p.Algorithms) != 0 {
			t.Errorf("after reset: %+v", p)
		}
	})
	t.Run("preset on update", func(t *testing.T) {
		p := newProd()
		if err := upd(p, `{"preset":"plain","metadata":{"title":"New"}}`); err != nil {
			t.Fatal(err)
		}
		a := p.Algorithms.In(production.ScopeSingletrack)
		if a.Int("loudnesstarget") != -19 || a.Float("maxpeak") != -1 || p.Metadata.Publisher != "Pub" || p.Metadata.Title != "New" || len(p.OutputFiles) != 1 {
			t.Errorf("after preset: %+v %+v", p.Algorithms, p.Metadata)
		}
	})
	t.Run("failed update leaves production unchanged", func(t *testing.T) {
		p := newProd()
		before, _ := json.Marshal(p)
		if err := upd(p, `{"preset":"plain","algorithms":{"loudnesstarget":-1}}`); err == nil {
			t.Fatal("invalid update accepted")
		}
		after, _ := json.Marshal(p)
		if string(before) != string(after) {
			t.Error("production changed by a failed update")
		}
	})
}

func TestPresetUpdate(t *testing.T) {
	ctx := context.Background()
	pr := mustNew(t, `{"preset_name":"A","output_files":[{"format":"mp3"}],"metadata":{"title":"T"},"image":"https://x.org/i.jpg"}`)
	apply := func(body string) error {
		in, err := DecodeInput([]byte(body))
		if err != nil {
			return err
		}
		return pr.Apply(ctx, in, nil, production.ApplyOptions{})
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
