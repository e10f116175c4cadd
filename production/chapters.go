package production

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Chapter is a chapter mark of a production. Start is relative to the main
// input file; OutputStart is where the mark lands in the output files
// (after intros, cut_start and cuts). JSON carries both as HH:MM:SS.mmm
// strings plus start_sec and start_output_sec.
type Chapter struct {
	Start       time.Duration
	Title       string
	URL         string
	Image       *string
	OutputStart time.Duration
}

type chapterJSON struct {
	Start          string  `json:"start"`
	Title          string  `json:"title"`
	URL            string  `json:"url"`
	Image          *string `json:"image"`
	StartSec       float64 `json:"start_sec"`
	StartOutput    string  `json:"start_output"`
	StartOutputSec float64 `json:"start_output_sec"`
}

// MarshalJSON implements json.Marshaler.
func (c Chapter) MarshalJSON() ([]byte, error) {
	return json.Marshal(chapterJSON{
		Start: FormatTimestamp(c.Start), Title: c.Title, URL: c.URL, Image: c.Image,
		StartSec: c.Start.Seconds(), StartOutput: FormatTimestamp(c.OutputStart), StartOutputSec: c.OutputStart.Seconds(),
	})
}

// UnmarshalJSON reads a chapter as MarshalJSON writes it.
func (c *Chapter) UnmarshalJSON(b []byte) error {
	var j chapterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	start, err := ParseTimestamp(j.Start)
	if err != nil {
		return err
	}
	*c = Chapter{Start: start, Title: j.Title, URL: j.URL, Image: j.Image, OutputStart: seconds(j.StartOutputSec)}
	return nil
}

// FormatTimestamp formats d as HH:MM:SS.mmm (hours grow past two digits
// when needed; negative durations format as zero).
func FormatTimestamp(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	ms := (d + time.Millisecond/2) / time.Millisecond
	h := ms / 3600000
	m := ms / 60000 % 60
	s := ms / 1000 % 60
	return fmt.Sprintf("%02d:%02d:%02d.%03d", h, m, s, ms%1000)
}

// ParseTimestamp parses HH:MM:SS[.mmm], MM:SS[.mmm] or a plain number of
// seconds (SS[.mmm]). The leading component may be any size; the others
// must be below 60. Fractions are rounded to milliseconds.
func ParseTimestamp(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w: time %q: %s", ErrInvalid, s, why)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("empty")
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return bad("more than three fields; want HH:MM:SS[.mmm]")
	}
	last := parts[len(parts)-1]
	whole, frac, hasFrac := strings.Cut(last, ".")
	if hasFrac && (frac == "" || !digits(frac)) {
		return bad("fraction must be digits")
	}
	parts[len(parts)-1] = whole
	var total int64
	for i, p := range parts {
		if p == "" || !digits(p) {
			return bad("fields must be digits")
		}
		if len(p) > 9 {
			return bad("too large")
		}
		v, _ := strconv.ParseInt(p, 10, 64)
		if i > 0 && v >= 60 {
			return bad("minutes and seconds must be below 60")
		}
		total = total*60 + v
	}
	if total > MaxTimestampSeconds {
		return bad("too large")
	}
	d := time.Duration(total) * time.Second
	if hasFrac {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		f, _ := strconv.ParseFloat("0."+frac, 64)
		d += time.Duration(math.Round(f*1000)) * time.Millisecond
	}
	return d, nil
}

// MaxTimestampSeconds bounds timestamps (1000 hours) so sums of them cannot
// overflow a Duration.
const MaxTimestampSeconds = 1000 * 3600

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ChapterSyntaxError reports a malformed line of the chapter text format.
type ChapterSyntaxError struct {
	Line int // 1-based
	Msg  string
}

// Error implements error.
func (e *ChapterSyntaxError) Error() string {
	return fmt.Sprintf("chapters line %d: %s", e.Line, e.Msg)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ChapterSyntaxError) Is(target error) bool { return target == ErrInvalid }

// ChapterFields returns chapters as the chapters field of a request
// (start, title, url), for callers that build a request from the text
// format: the simple API, the command line.
func ChapterFields(cs []Chapter) []map[string]string {
	out := make([]map[string]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, map[string]string{"start": FormatTimestamp(c.Start), "title": c.Title, "url": c.URL})
	}
	return out
}

// MaxChapterText bounds the chapter text parsed from a request.
const MaxChapterText = 1 << 20

// ParseChapters parses the chapter text format: one chapter per line,
//
//	HH:MM:SS[.mmm] title [<url>]
//
// Blank lines, \r\n line ends, a leading byte order mark, MM:SS times and
// tabs as separators are tolerated. The title is required. A URL is the
// last word of a line when it is enclosed in angle brackets. Chapters are
// returned in text order; the first error names its 1-based line.
func ParseChapters(text string) ([]Chapter, error) {
	if len(text) > MaxChapterText {
		return nil, &ChapterSyntaxError{Line: 1, Msg: "chapter text larger than 1 MiB"}
	}
	text = strings.TrimPrefix(text, "\ufeff")
	var out []Chapter
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, MaxChapterText+1)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		c, msg := parseChapterLine(l)
		if msg != "" {
			return nil, &ChapterSyntaxError{Line: line, Msg: msg}
		}
		out = append(out, c)
	}
	return out, nil
}

func parseChapterLine(l string) (Chapter, string) {
	ts, rest, _ := strings.Cut(l, " ")
	if i := strings.IndexAny(ts, "\t"); i >= 0 {
		ts, rest = l[:i], l[i+1:]
	}
	start, err := ParseTimestamp(ts)
	if err != nil {
		return Chapter{}, fmt.Sprintf("%q is not a time HH:MM:SS[.mmm]", ts)
	}
	rest = strings.TrimSpace(rest)
	var url string
	if strings.HasSuffix(rest, ">") {
		if i := strings.LastIndexByte(rest, '<'); i >= 0 {
			url = strings.TrimSpace(rest[i+1 : len(rest)-1])
			rest = strings.TrimSpace(rest[:i])
			if url == "" {
				return Chapter{}, "empty <url>"
			}
			if msg := checkURL(url); msg != "" {
				return Chapter{}, "url " + msg
			}
		}
	}
	if rest == "" {
		return Chapter{}, "missing chapter title"
	}
	if !validText(rest) {
		return Chapter{}, "title contains control characters"
	}
	return Chapter{Start: start, Title: rest, URL: url}, ""
}

// FormatChapters writes chapters in the text format ParseChapters reads,
// one per line with \n line ends, in the order given.
func FormatChapters(chs []Chapter) string {
	var b bytes.Buffer
	for _, c := range chs {
		b.WriteString(FormatTimestamp(c.Start))
		b.WriteByte(' ')
		b.WriteString(c.Title)
		if c.URL != "" {
			b.WriteString(" <")
			b.WriteString(c.URL)
			b.WriteByte('>')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// OutputPosition maps a position of the main input to the output files:
// the intro length is added, cut_start and every cut range before the
// position are removed. A position inside a cut moves to where the cut
// was; a position before cut_start lands right after the intro. Cut ranges
// may overlap each other and cut_start; each removed second counts once.
func OutputPosition(start, intro, cutStart time.Duration, cuts []Cut) time.Duration {
	if start < cutStart {
		return intro
	}
	removed := cutStart
	// Merge the cut ranges clipped to [cutStart, start) so overlaps count once.
	type span struct{ a, b time.Duration }
	var spans []span
	for _, c := range cuts {
		a, b := max(seconds(c.Start), cutStart), min(seconds(c.Stop), start)
		if b > a {
			spans = append(spans, span{a, b})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return int(x.a - y.a) })
	var end time.Duration
	for _, s := range spans {
		if a := max(s.a, end); s.b > a {
			removed += s.b - a
			end = s.b
		}
	}
	return intro + start - removed
}
