package production

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
)

func TestTimeJSON(t *testing.T) {
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2024, 5, 1, 12, 30, 5, 0, time.UTC), `"2024-05-01T12:30:05Z"`},
		{time.Date(2024, 5, 1, 12, 30, 5, 123456789, time.UTC), `"2024-05-01T12:30:05.123Z"`},
		{time.Date(2024, 5, 1, 14, 30, 5, 0, time.FixedZone("CEST", 7200)), `"2024-05-01T12:30:05Z"`},
		{time.Time{}, `null`},
	}
	for _, c := range cases {
		b, err := json.Marshal(Time{c.t})
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.t, b, err, c.want)
		}
		var back Time
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(c.t.Truncate(time.Millisecond)) {
			t.Errorf("round trip of %s = %v, %v", b, back, err)
		}
	}
	for in, want := range map[string]string{
		`"2024-05-01T12:30:05"`:          "2024-05-01T12:30:05Z",
		`"2024-05-01T12:30:05.5Z"`:       "2024-05-01T12:30:05.500Z",
		`"2024-05-01T12:30:05.123456Z"`:  "2024-05-01T12:30:05.123Z",
		`"2024-05-01T14:30:05+02:00"`:    "2024-05-01T12:30:05Z",
		`"2024-05-01T10:30:05.25-02:00"`: "2024-05-01T12:30:05.250Z",
	} {
		var tm Time
		if err := json.Unmarshal([]byte(in), &tm); err != nil || tm.String() != want {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", in, tm.String(), err, want)
		}
	}
	for _, bad := range []string{`"yesterday"`, `5`, `"2024-13-01T00:00:00Z"`, `"2024-05-01 12:30:05"`} {
		var tm Time
		if err := json.Unmarshal([]byte(bad), &tm); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

func TestLenientNumbers(t *testing.T) {
	for in, want := range map[string]string{`3`: "3", `"12"`: "12", `" 007 "`: "7", `""`: "", `2024`: "2024", `1e3`: "1000", `null`: ""} {
		var s IntString
		if err := json.Unmarshal([]byte(in), &s); err != nil || string(s) != want {
			t.Errorf("IntString(%s) = %q, %v; want %q", in, s, err, want)
		}
	}
	for _, bad := range []string{`-1`, `1.5`, `"1a"`, `true`, `[]`} {
		var s IntString
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("IntString(%s) accepted", bad)
		}
	}
	for in, want := range map[string]int{`128`: 128, `"96"`: 96, `""`: 0, `null`: 0} {
		var n FlexInt
		if err := json.Unmarshal([]byte(in), &n); err != nil || int(n) != want {
			t.Errorf("FlexInt(%s) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, bad := range []string{`"fast"`, `64.5`, `-64`, `"9999999999"`} {
		var n FlexInt
		if err := json.Unmarshal([]byte(bad), &n); err == nil {
			t.Errorf("FlexInt(%s) accepted", bad)
		}
	}
}

func TestLevelJSON(t *testing.T) {
	cases := []struct {
		l    Level
		want string
	}{
		{Level{-16.02, UnitLUFS}, `[-16.02,"LUFS"]`},
		{Level{math.Inf(-1), UnitLUFS}, `[null,"LUFS"]`},
		{Level{math.NaN(), UnitDB}, `[null,"dB"]`},
		{Level{0, UnitDBTP}, `[0,"dBTP"]`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.l)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.l, b, err, c.want)
		}
	}
	var l Level
	if err := json.Unmarshal([]byte(`[null,"LUFS"]`), &l); err != nil || !math.IsInf(l.Value, -1) || l.Unit != "LUFS" {
		t.Errorf("Unmarshal null level = %v, %v", l, err)
	}
	if err := json.Unmarshal([]byte(`[1,"LU",3]`), &l); err == nil {
		t.Error("three-element level accepted")
	}
}

func TestStatus(t *testing.T) {
	info := StatusInfo()
	if len(info) != 15 || info["2"] != "Error" || info["3"] != "Done" || info["14"] != "Speech Recognition" {
		t.Fatalf("StatusInfo = %v", info)
	}
	processing := map[Status]bool{4: true, 5: true, 6: true, 7: true, 8: true, 12: true, 13: true, 14: true}
	for s := Status(0); s <= 14; s++ {
		if s.Processing() != processing[s] || s.ChangeAllowed() == processing[s] {
			t.Errorf("status %d (%s): processing %v", s, s, s.Processing())
		}
	}
	if Status(15).Valid() || Status(-1).Valid() || Status(15).String() != "Status 15" {
		t.Error("out of range status")
	}
	p := &Production{Status: StatusWaiting, InputFile: "a.wav"}
	if !p.CanStart() {
		t.Error("waiting production with input cannot start")
	}
	p.Status = StatusAudioProcessing
	if p.CanStart() || p.CanChange() {
		t.Error("processing production can start or change")
	}
	p = &Production{IsMultitrack: true, MultiInputFiles: []MultiInputFile{{Type: InputIntro, InputFile: "i.wav"}}}
	if p.CanStart() {
		t.Error("multitrack with only an intro can start")
	}
	p.MultiInputFiles = append(p.MultiInputFiles, MultiInputFile{Type: InputMultitrack, ID: "a", InputFile: "a.wav"})
	if !p.CanStart() {
		t.Error("multitrack with a track cannot start")
	}
	p.SetError(StatusAudioEncoding, "encoder failed")
	if p.Status != StatusError || *p.ErrorStatus != StatusAudioEncoding || p.ErrorMessage != "encoder failed" {
		t.Errorf("SetError: %+v", p)
	}
}

func TestTags(t *testing.T) {
	if got := SplitTags(" a, b,,a , c "); len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Errorf("SplitTags = %q", got)
	}
	if JoinTags([]string{"a", "b"}) != "a, b" {
		t.Error("JoinTags")
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 999_960_000: "1.0 GB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// File tags fill the empty metadata, keywords and the position included;
// set values win, and malformed positions are not imported.
func TestImportTags(t *testing.T) {
	tags := audio.Tags{Title: "File title", LicenseURL: "https://example.org/l", Keywords: "news, science,news",
		Location: "+48.2082+016.3738/", Year: "2024-05-01", Track: "03/12"}
	var m Metadata
	m.ImportTags(tags)
	want := Metadata{Title: "File title", LicenseURL: "https://example.org/l", Tags: []string{"news", "science"},
		Location: &Location{Latitude: "48.2082", Longitude: "16.3738"}, Year: "2024", Track: "3"}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("imported %+v, want %+v", m, want)
	}
	set := Metadata{Title: "Mine", Tags: []string{"own"}, Location: &Location{Latitude: "1", Longitude: "2"}}
	set.ImportTags(tags)
	if set.Title != "Mine" || !reflect.DeepEqual(set.Tags, []string{"own"}) || set.Location.Latitude != "1" {
		t.Errorf("set values overwritten: %+v", set)
	}
	for _, bad := range []string{"", "+4812.49+01622.43/", "+91.0+010.0/", "48.2,16.3", "+48.2+16.3/"} {
		var m Metadata
		m.ImportTags(audio.Tags{Location: bad})
		if m.Location != nil {
			t.Errorf("location %q imported as %+v", bad, m.Location)
		}
	}
	var alt Metadata
	alt.ImportTags(audio.Tags{Location: "-33.8688+151.2093+012.5/"})
	if alt.Location == nil || alt.Location.Latitude != "-33.8688" || alt.Location.Longitude != "151.2093" {
		t.Errorf("location with altitude: %+v", alt.Location)
	}
}
