package production_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
)

var presetNow = production.Time{Time: time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)}

func mustPreset(t *testing.T, body string) *preset.Preset {
	t.Helper()
	in, err := preset.DecodeInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := preset.New(in, production.ApplyOptions{Now: presetNow})
	if err != nil {
		t.Fatalf("New(%s): %v", body, err)
	}
	return pr
}

// presets are stored presets by uuid.
type presets map[string]*preset.Preset

func (s presets) templates() production.Presets {
	out := production.Presets{}
	for id, pr := range s {
		out[id] = pr.Template()
	}
	return out
}

// newProduction creates a production as the application layer does: the
// presets looked up, then the input's tags imported.
func newProduction(in *production.Input, s presets, tags audio.Tags, now production.Time) (*production.Production, error) {
	p, err := production.New(in, production.ApplyOptions{Now: now, Presets: s.templates()})
	if err != nil {
		return nil, err
	}
	p.Metadata.ImportTags(tags)
	return p, nil
}

func TestNewProductionFromPreset(t *testing.T) {
	pr := mustPreset(t, `{"preset_name":"Weekly","metadata":{"artist":"Preset Artist","album":"Show","genre":"Podcast","tags":["a"]},
		"output_basename":"weekly","output_files":[{"format":"mp3"},{"format":"flac"}],"outgoing_services":[{"uuid":"svc"}],
		"algorithms":{"loudnesstarget":-23,"denoise":true},"webhook":"https://h.org/x","image":"https://x.org/cover.jpg"}`)
	pr.UUID = "pre1"
	s := presets{"pre1": pr}
	in, err := production.DecodeInput([]byte(`{"preset":"pre1","input_file":"https://x.org/ep.wav","metadata":{"artist":"Guest Host"},"algorithms":{"denoise":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	tags := audio.Tags{Title: "File Title", Artist: "File Artist", Album: "File Album", Year: "2024-06-01", Track: "7/20"}
	p, err := newProduction(in, s, tags, presetNow)
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
	p2, err := newProduction(in2, s, audio.Tags{}, production.Time{})
	if err != nil || len(p2.OutputFiles) != 1 || p2.OutputFiles[0].Format != "opus" {
		t.Fatalf("output files %+v %v", p2, err)
	}
	// The preset itself is not modified.
	if len(pr.OutputFiles) != 2 || pr.Metadata.Artist != "Preset Artist" {
		t.Error("creating a production changed the preset")
	}
	// Unknown preset.
	in3, _ := production.DecodeInput([]byte(`{"preset":"nope"}`))
	_, err = newProduction(in3, s, audio.Tags{}, production.Time{})
	var fe production.FieldErrors
	if !errors.As(err, &fe) || fe["preset"] == "" {
		t.Errorf("unknown preset: %v", err)
	}
	// Where presets cannot be looked up, naming one is a form error too.
	if _, err := production.New(in3, production.ApplyOptions{}); !errors.As(err, &fe) || fe["preset"] == "" {
		t.Errorf("preset without lookup: %v", err)
	}
}

func TestMultitrackPresetMerge(t *testing.T) {
	pr := mustPreset(t, `{"preset_name":"Roundtable","is_multitrack":true,"algorithms":{"gate":false},
		"multi_input_files":[{"type":"multitrack","id":"host","algorithms":{"gain":3,"pan":"L25"}},{"type":"intro","service":"svc","input_file":"intro.wav"}]}`)
	s := presets{"rt": pr}
	in, _ := production.DecodeInput([]byte(`{"preset":"rt","multi_input_files":[{"id":"host","input_file":"https://x.org/host.wav","algorithms":{"gain":-3}},{"type":"multitrack","id":"guest","input_file":"https://x.org/guest.wav"}]}`))
	p, err := newProduction(in, s, audio.Tags{}, production.Time{})
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

func TestApplyPreset(t *testing.T) {
	cover := mustPreset(t, `{"preset_name":"Cover","image":"https://x.org/cover.jpg"}`)
	th := "https://x.org/thumb.jpg"
	cover.Thumbnail = &th
	noCover := mustPreset(t, `{"preset_name":"Plain","algorithms":{"loudnesstarget":-19},"metadata":{"publisher":"Pub"}}`)
	s := presets{"cover": cover, "plain": noCover}
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
		return p.Apply(in, production.ApplyOptions{Presets: s.templates()})
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
