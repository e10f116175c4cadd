package sidefile

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/production"
)

func TestJSONToYAML(t *testing.T) {
	in := `{"title": "Ep 1", "year": "2026", "track": 3, "ok": true, "none": null,
		"tricky": ["yes", "", " pad", "a: b", "-dash", "line\nbreak", "#x", "naïve café"],
		"empty": [], "obj": {}, "nested": {"list": [{"a": 1.5}, {"b": [1, 2]}]}}`
	got, err := JSONToYAML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `title: Ep 1
year: "2026"
track: 3
ok: true
none: null
tricky:
  - "yes"
  - ""
  - " pad"
  - "a: b"
  - "-dash"
  - "line\nbreak"
  - "#x"
  - naïve café
empty: []
obj: {}
nested:
  list:
    -
      a: 1.5
    -
      b:
        - 1
        - 2
`
	if string(got) != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSONToXML(t *testing.T) {
	in := `{"uuid": "x<y>&z", "chapters": [{"title": "A"}, {"title": "B"}], "tags": ["t1"], "image": null, "3d": 1, "music_speech": [1]}`
	got, err := JSONToXML([]byte(in), "production")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"production"`
		UUID     string   `xml:"uuid"`
		Chapters []string `xml:"chapters>chapter>title"`
		Tags     []string `xml:"tags>tag"`
		D        string   `xml:"_3d"`
		MS       []string `xml:"music_speech>item"`
	}
	if err := xml.Unmarshal(got, &doc); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if doc.UUID != "x<y>&z" || len(doc.Chapters) != 2 || doc.Chapters[1] != "B" || len(doc.Tags) != 1 || doc.D != "1" || len(doc.MS) != 1 {
		t.Errorf("parsed back %+v from\n%s", doc, got)
	}
	if !strings.Contains(string(got), `<image nil="true"/>`) {
		t.Errorf("null not marked:\n%s", got)
	}
}

func TestStatisticsFileText(t *testing.T) {
	s := production.Statistics{Levels: &production.Levels{Output: production.OutputLevels{Loudness: production.Level{Value: -16.02, Unit: production.UnitLUFS}, Peak: production.Level{Value: -1, Unit: production.UnitDBTP}}},
		MusicSpeech: []production.MusicSpeechSegment{{Label: "music", Start: 0, Stop: 25 * time.Second}}}
	txt, err := StatisticsFile(s, "txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Loudness:        -16.02 LUFS", "True peak:       -1.00 dBTP", "00:00:00.000 - 00:00:25.000  music"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("stats text lacks %q:\n%s", want, txt)
		}
	}
	js, err := StatisticsFile(s, "json")
	if err != nil {
		t.Fatal(err)
	}
	var back production.Statistics
	if err := json.Unmarshal(js, &back); err != nil || back.Levels.Output.Loudness.Value != -16.02 {
		t.Errorf("stats json does not read back: %v", err)
	}
}

func TestPodloveChapters(t *testing.T) {
	img := "https://example.org/c.png"
	data, err := PodloveChapters([]production.Chapter{{Start: 0, Title: "Intro & more"}, {Start: 90500 * time.Millisecond, Title: "Two", URL: "https://x.org/?a=1&b=2", Image: &img}}, "Show -- 1")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name
		Version  string `xml:"version,attr"`
		Chapters []struct {
			Start string `xml:"start,attr"`
			Title string `xml:"title,attr"`
			Href  string `xml:"href,attr"`
			Image string `xml:"image,attr"`
		} `xml:"chapter"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if doc.XMLName.Local != "chapters" || doc.XMLName.Space != "http://podlove.org/simple-chapters" || doc.Version != "1.2" {
		t.Errorf("root %v version %q", doc.XMLName, doc.Version)
	}
	if len(doc.Chapters) != 2 || doc.Chapters[0].Title != "Intro & more" || doc.Chapters[1].Start != "00:01:30.500" ||
		doc.Chapters[1].Href != "https://x.org/?a=1&b=2" || doc.Chapters[1].Image != img {
		t.Errorf("chapters %+v", doc.Chapters)
	}
}

// FuzzSideFileStrings feeds arbitrary strings (titles and metadata come
// from clients) through both emitters: the XML must be well-formed and
// give the string back; the YAML scalar must be either plain and safe or
// a JSON string that decodes to it.
func FuzzSideFileStrings(f *testing.F) {
	for _, s := range []string{"", "plain", "yes", "a: b", "x\x00y", "\ufeffbom", "]]>", "<tag>", "  ", "1e5", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		js, _ := json.Marshal(map[string]string{"title": s})
		x, err := JSONToXML(js, "production")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Title string `xml:"title"`
		}
		dec := xml.NewDecoder(bytes.NewReader(x))
		if err := dec.Decode(&doc); err != nil {
			// encoding/xml rejects characters XML 1.0 cannot carry;
			// EscapeText replaces them, so this must not happen.
			t.Fatalf("XML for %q does not parse: %v\n%s", s, err, x)
		}
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if cd, ok := tok.(xml.CharData); err != nil || !ok || len(bytes.TrimSpace(cd)) > 0 {
				t.Fatalf("trailing XML content for %q: %v %v", s, tok, err)
			}
		}
		var m map[string]string
		_ = json.Unmarshal(js, &m)
		back := m["title"] // what JSON made of s (invalid UTF-8 replaced)
		if doc.Title != xmlSafe(back) {
			t.Fatalf("XML gives %q back for %q", doc.Title, back)
		}
		y := yamlString(back)
		if y == back {
			if !yamlPlainOK(back) || strings.ContainsAny(back[:1], "\"'") {
				t.Fatalf("unsafe plain scalar %q", back)
			}
			return
		}
		var dec2 string
		if err := json.Unmarshal([]byte(y), &dec2); err != nil || dec2 != back {
			t.Fatalf("quoted scalar %s does not decode to %q", y, back)
		}
	})
}

// xmlSafe is what xml.EscapeText makes of characters XML cannot carry.
func xmlSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == 0x09 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			b.WriteRune(r)
		} else {
			b.WriteRune('\uFFFD')
		}
	}
	// XML parsers normalise \r\n and \r to \n.
	out := strings.ReplaceAll(b.String(), "\r\n", "\n")
	return out
}
