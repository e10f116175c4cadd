package production

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// checkGolden compares the JSON of v with testdata/name.golden.json
// structurally (go-cmp over decoded values), rewriting it under -update.
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
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("%s differs from golden file (-want +got):\n%s", name, d)
	}
}

var goldenNow = Time{time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)}

func goldenProduction(t *testing.T) *Production {
	t.Helper()
	in, err := DecodeInput([]byte(`{
		"metadata": {"title": "Episode 12", "artist": "The Hosts", "track": 12, "year": 2025, "tags": "go, audio", "location": {"latitude": "48.2082", "longitude": "16.3738"}},
		"input_file": "https://media.example.org/raw/episode12.wav",
		"output_basename": "episode-12",
		"output_files": [{"format": "mp3", "bitrate": "128"}, {"format": "flac"}, {"format": "aac", "suffix": "_chapters", "ending": "m4b", "split_on_chapters": true}],
		"outgoing_services": [{"uuid": "svc-hosting", "sharing": "public", "downloadable": true}],
		"chapters": [{"start": "00:00:00", "title": "Welcome"}, {"start": "00:05:30.500", "title": "News", "url": "https://example.org/news"}],
		"algorithms": {"loudnesstarget": -16, "denoise": true, "denoisemethod": "dynamic", "debreathamount": 6, "filtering": true},
		"webhook": "https://hooks.example.org/audiopost",
		"image": "https://media.example.org/cover.jpg"
	}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(in, ApplyOptions{Now: goldenNow})
	if err != nil {
		t.Fatal(err)
	}
	p.UUID = "KQ3pM8sWZ2yP4vX9"
	p.StatusPage = "https://audiopost.example.org/production/KQ3pM8sWZ2yP4vX9/status"
	p.EditPage = "https://audiopost.example.org/production/KQ3pM8sWZ2yP4vX9/edit"
	return p
}

func probed(p *Production) {
	p.Channels, p.SampleRate, p.Bitrate, p.Format, p.Length = 2, 48000, 1536, "wav", 1830.25
}

func TestGoldenProductions(t *testing.T) {
	t.Run("new", func(t *testing.T) {
		p := goldenProduction(t)
		checkGolden(t, "production_new", p)
	})
	t.Run("waiting", func(t *testing.T) {
		p := goldenProduction(t)
		probed(p)
		p.Status = StatusWaiting
		checkGolden(t, "production_waiting", p)
	})
	t.Run("processing", func(t *testing.T) {
		p := goldenProduction(t)
		probed(p)
		p.Status = StatusAudioProcessing
		p.ChangeTime = Time{goldenNow.Add(42 * time.Second)}
		checkGolden(t, "production_processing", p)
	})
	t.Run("done", func(t *testing.T) {
		p := goldenProduction(t)
		probed(p)
		p.Status = StatusDone
		p.ChangeTime = Time{goldenNow.Add(5 * time.Minute)}
		p.CutStart, p.CutEnd = 1.5, 2
		p.Cuts = []Cut{{Start: 120, Stop: 124.5}}
		p.Length = 1822.25
		p.WaveformImage = "https://audiopost.example.org/api/download/audio-result/KQ3pM8sWZ2yP4vX9/waveform.png"
		th := "https://audiopost.example.org/api/download/audio-result/KQ3pM8sWZ2yP4vX9/cover_thumb.jpg"
		p.Thumbnail = &th
		sizes := []int64{29_156_000, 301_882_112, 14_600_000}
		for i := range p.OutputFiles {
			p.OutputFiles[i].Size = &sizes[i]
			p.OutputFiles[i].DownloadURL = "https://audiopost.example.org/api/download/audio-result/KQ3pM8sWZ2yP4vX9/" + p.OutputFilename(i)
			p.OutputFiles[i].Checksum = "9e107d9d372bb6826bd81d3542a419d6"
		}
		ok := true
		page := "https://hosting.example.org/episode-12"
		p.OutgoingServices[0].DisplayName, p.OutgoingServices[0].Type = "My Hosting", "hostinga"
		p.OutgoingServices[0].TransferSuccess, p.OutgoingServices[0].Outgoing = &ok, true
		p.OutgoingServices[0].ResultPage = &page
		p.OutgoingServices[0].ResultURLs = []string{"https://hosting.example.org/episode-12.mp3"}
		p.UsedCredits = UsedCredits{Onetime: 0, Recurring: 0.508, Combined: 0.508}
		den, hum := 12.0, 50.0
		p.Statistics = Statistics{
			Levels: &Levels{
				Input: InputLevels{LRA: Level{14.2, UnitLU}, NoiseLevel: Level{-62.1, UnitDB}, MaxMomentary: Level{-9.8, UnitLUFS},
					SignalLevel: Level{-24.3, UnitDB}, SNR: Level{37.8, UnitDB}, MaxShortterm: Level{-13.4, UnitLUFS}, Loudness: Level{-25.7, UnitLUFS}},
				Output: OutputLevels{LRA: Level{5.1, UnitLU}, MaxShortterm: Level{-12.9, UnitLUFS}, MaxMomentary: Level{-10.2, UnitLUFS},
					GainMin: Level{-3.2, UnitDB}, Peak: Level{-1.0, UnitDBTP}, GainMean: Level{9.4, UnitDB}, Loudness: Level{-16.0, UnitLUFS}, GainMax: Level{18.7, UnitDB}},
			},
			MusicSpeech: []MusicSpeechSegment{{Label: "music", Start: 0, Stop: 25 * time.Second}, {Label: "speech", Start: 25 * time.Second, Stop: 1822250 * time.Millisecond}},
			NoiseHumReduction: []NoiseHumSegment{{Denoise: &den, Dehum: &hum, Start: 0, Stop: 600 * time.Second},
				{Start: 600 * time.Second, Stop: 1822250 * time.Millisecond}},
		}
		checkGolden(t, "production_done", p)
	})
	t.Run("error", func(t *testing.T) {
		p := goldenProduction(t)
		probed(p)
		p.SetError(StatusAudioEncoding, "encoding aac failed: codec unavailable")
		p.SetWarning(StatusAudioProcessing, "input is clipped")
		checkGolden(t, "production_error", p)
	})
	t.Run("multitrack done", func(t *testing.T) {
		in, err := DecodeInput([]byte(`{"is_multitrack": true, "metadata": {"title": "Roundtable"},
			"algorithms": {"loudnesstarget": -16, "gate": true, "crossgate": true},
			"multi_input_files": [
				{"type": "multitrack", "id": "host", "input_file": "https://m.example.org/host.wav", "algorithms": {"denoise": true, "backforeground": "foreground"}},
				{"type": "multitrack", "id": "music", "service": "svc-ftp", "input_file": "bed.flac", "offset": 3.5, "algorithms": {"backforeground": "ducking", "backgroundgain": -12}}],
			"output_files": [{"format": "mp3"}, {"format": "tracks"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(in, ApplyOptions{Now: goldenNow})
		if err != nil {
			t.Fatal(err)
		}
		p.UUID = "mt-7f3a"
		p.Status = StatusDone
		p.MultiInputFiles[0].InputChannels, p.MultiInputFiles[0].InputSampleRate, p.MultiInputFiles[0].InputFiletype, p.MultiInputFiles[0].InputLength = 1, 48000, "wav", 900
		p.Statistics = Statistics{
			Tracks: []TrackStatistics{{Identifier: "host", Activity: [][2]float64{{0, 412.5}, {430, 900}},
				Levels: TrackLevels{LRA: Level{8, UnitLU}, GainMean: Level{6, UnitDB}, NoiseLevel: Level{-70, UnitDB}, MaxMomentary: Level{-12, UnitLUFS},
					SignalLevel: Level{-22, UnitDB}, GainMin: Level{-2, UnitDB}, SNR: Level{48, UnitDB}, MaxShortterm: Level{-15, UnitLUFS}, Loudness: Level{-23, UnitLUFS}, GainMax: Level{12, UnitDB}}},
				{Identifier: "music", Levels: TrackLevels{Loudness: Level{math.Inf(-1), UnitLUFS}}}},
			Master: &MasterStatistics{Levels: MasterLevels{LRA: Level{4.5, UnitLU}, MaxMomentary: Level{-11, UnitLUFS}, Peak: Level{-1, UnitDBTP}, MaxShortterm: Level{-13.5, UnitLUFS}, Loudness: Level{-16, UnitLUFS}}},
		}
		checkGolden(t, "production_multitrack_done", p)
	})
}

// TestProductionJSONRoundTrip checks that a stored production reads back
// into the same value (the computed fields are recomputed).
func TestProductionJSONRoundTrip(t *testing.T) {
	p := goldenProduction(t)
	probed(p)
	p.Cuts = []Cut{{Start: 10, Stop: 20}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Production
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(b), string(b2)); d != "" {
		t.Errorf("round trip changed the JSON:\n%s", d)
	}
	if errs := Validate(&back, ValidateOptions{}); errs != nil {
		t.Errorf("stored production no longer valid: %v", errs)
	}
}
