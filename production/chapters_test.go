package production

import (
	"errors"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	ok := map[string]time.Duration{
		"00:00:00":        0,
		"01:02:03":        time.Hour + 2*time.Minute + 3*time.Second,
		"01:02:03.5":      time.Hour + 2*time.Minute + 3500*time.Millisecond,
		"1:02:03.123":     time.Hour + 2*time.Minute + 3123*time.Millisecond,
		"02:03":           2*time.Minute + 3*time.Second,
		"75.25":           75250 * time.Millisecond,
		"125:00:00":       125 * time.Hour,
		" 00:00:01.0009 ": 1001 * time.Millisecond,
	}
	for in, want := range ok {
		got, err := ParseTimestamp(in)
		if err != nil || got != want {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1:2:3:4", "00:60:00", "00:00:60", "aa:bb", "1:-2", "00:00:01.", "00:00:01.x", "+5", "9999999999", "1000:00:01"} {
		if _, err := ParseTimestamp(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTimestamp(%q) accepted", bad)
		}
	}
	if FormatTimestamp(3723004*time.Millisecond) != "01:02:03.004" || FormatTimestamp(-time.Second) != "00:00:00.000" {
		t.Error("FormatTimestamp")
	}
}

func TestParseChapters(t *testing.T) {
	text := "\ufeff00:00:00 Intro\r\n\r\n00:01:30.250 Main topic <https://example.org/topic>\n  02:05 Short form\ttime\n01:00:00.000\tTab separated\n"
	got, err := ParseChapters(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Chapter{
		{Start: 0, Title: "Intro"},
		{Start: 90250 * time.Millisecond, Title: "Main topic", URL: "https://example.org/topic"},
		{Start: 125 * time.Second, Title: "Short form\ttime"},
		{Start: time.Hour, Title: "Tab separated"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d chapters, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Start != want[i].Start || got[i].Title != want[i].Title || got[i].URL != want[i].URL {
			t.Errorf("chapter %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	again, err := ParseChapters(FormatChapters(got))
	if err != nil || len(again) != len(got) {
		t.Fatalf("round trip: %v", err)
	}
	for i := range got {
		if again[i].Start != got[i].Start || again[i].Title != got[i].Title || again[i].URL != got[i].URL {
			t.Errorf("round trip chapter %d = %+v, want %+v", i, again[i], got[i])
		}
	}
	bad := []struct {
		text string
		line int
	}{
		{"00:00:00 A\nxx B\n", 2},
		{"00:00:00 A\n\n\n00:00:10\n", 4},
		{"00:00:00 A <>\n", 1},
		{"00:00:00 A <ftp://x>\n", 1},
		{"00:61:00 A\n", 1},
		{"00:00:00 <https://x.org>\n", 1},
		{"00:00:00 A\x01B\n", 1},
	}
	for _, c := range bad {
		_, err := ParseChapters(c.text)
		var se *ChapterSyntaxError
		if !errors.As(err, &se) || se.Line != c.line || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseChapters(%q) = %v, want error on line %d", c.text, err, c.line)
		}
	}
	if chs, err := ParseChapters("00:00:00 a <b> title"); err != nil || chs[0].Title != "a <b> title" || chs[0].URL != "" {
		t.Errorf("angle brackets inside title: %+v %v", chs, err)
	}
}

func TestOutputPosition(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	cases := []struct {
		name                   string
		start, intro, cutStart float64
		cuts                   []Cut
		want                   float64
	}{
		{"plain", 60, 0, 0, nil, 60},
		{"intro", 60, 12.5, 0, nil, 72.5},
		{"intro minus cut_start", 60, 10, 4, nil, 66},
		{"before cut_start", 2, 10, 4, nil, 10},
		{"cut before mark", 60, 0, 0, []Cut{{10, 15}}, 55},
		{"cut after mark", 60, 0, 0, []Cut{{70, 80}}, 60},
		{"mark inside cut", 12, 0, 0, []Cut{{10, 15}}, 10},
		{"overlapping cuts count once", 60, 0, 0, []Cut{{10, 20}, {15, 25}, {30, 31}}, 44},
		{"cut overlapping cut_start", 60, 5, 10, []Cut{{5, 12}, {40, 45}}, 48},
		{"all together", 100, 8, 3, []Cut{{50, 52.5}, {20, 21}, {200, 300}}, 101.5},
	}
	for _, c := range cases {
		got := OutputPosition(s(c.start), s(c.intro), s(c.cutStart), c.cuts)
		if got != s(c.want) {
			t.Errorf("%s: OutputPosition = %v, want %v", c.name, got, s(c.want))
		}
	}
	p := &Production{
		Chapters:        []Chapter{{Start: s(120), Title: "B"}, {Start: s(0), Title: "A"}},
		MultiInputFiles: []MultiInputFile{{Type: InputIntro, InputLength: 15, Offset: 3}, {Type: InputOutro, InputLength: 20}},
		CutStart:        2,
		Cuts:            []Cut{{30, 40}},
	}
	got := p.ChapterPositions()
	if got[0].Title != "A" || got[0].OutputStart != s(12) || got[1].OutputStart != s(120+12-2-10) {
		t.Errorf("ChapterPositions = %+v", got)
	}
}
