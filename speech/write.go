package speech

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"
)

// WriteOptions configure the writers. The zero value is the default of
// every output.
type WriteOptions struct {
	// Cues shapes subtitle cues (srt, webvtt).
	Cues CueOptions
	// ParagraphGap is the pause that starts a new transcript paragraph
	// (DefaultParagraphGap when 0).
	ParagraphGap time.Duration
	// Title heads an HTML transcript (and is its <title>); empty means
	// "Transcript".
	Title string
	// Timestamps starts each paragraph of a plain-text transcript with
	// its time ([00:01:23]); HTML transcripts always show it.
	Timestamps bool
}

// ErrNoWriter means Write was asked for a format and ending it has no
// writer for.
var ErrNoWriter = errors.New("speech: no writer for this output")

// Write writes t as the output format (the production output format name:
// "speech", "subtitle" or "transcript") with the given ending: speech as
// json or xml, subtitle as srt or webvtt (vtt), transcript as html or txt.
// An empty ending picks the format's default (the first listed).
func Write(w io.Writer, format, ending string, t *Transcript, opts WriteOptions) error {
	switch format + "." + strings.ToLower(ending) {
	case "speech.json", "speech.":
		return WriteJSON(w, t, opts)
	case "speech.xml":
		return WriteXML(w, t, opts)
	case "subtitle.srt", "subtitle.":
		return WriteSRT(w, Cues(t.Words, opts.Cues), multiSpeaker(t))
	case "subtitle.webvtt", "subtitle.vtt":
		return WriteVTT(w, Cues(t.Words, opts.Cues))
	case "transcript.html", "transcript.":
		return WriteHTML(w, t, opts)
	case "transcript.txt":
		return WriteText(w, t, opts)
	}
	return fmt.Errorf("%w: %s as %q", ErrNoWriter, format, ending)
}

func multiSpeaker(t *Transcript) bool { return len(t.Speakers()) > 1 }

// Timestamp formats d as HH:MM:SS plus milliseconds after sep ("," for
// SRT, "." for WebVTT). Negative durations are written as zero.
func Timestamp(d time.Duration, sep string) string {
	ms := max(d.Milliseconds(), 0)
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

func clock(d time.Duration) string {
	s := max(int64(d/time.Second), 0)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// WriteSRT writes cues as SubRip subtitles. With speakers, each cue's
// first line starts with "Speaker: ".
func WriteSRT(w io.Writer, cues []Cue, speakers bool) error {
	bw := bufio.NewWriter(w)
	for i, c := range cues {
		fmt.Fprintf(bw, "%d\n%s --> %s\n", i+1, Timestamp(c.Start, ","), Timestamp(c.End, ","))
		for j, l := range c.Lines {
			if j == 0 && speakers && c.Speaker != "" {
				l = c.Speaker + ": " + l
			}
			// A blank line would end the cue early.
			bw.WriteString(strings.TrimSpace(strings.ReplaceAll(l, "\n", " ")))
			bw.WriteByte('\n')
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

var vttEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\n", " ")

// WriteVTT writes cues as WebVTT. Cues with a speaker carry a voice tag
// (<v Speaker>).
func WriteVTT(w io.Writer, cues []Cue) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("WEBVTT\n\n")
	for _, c := range cues {
		fmt.Fprintf(bw, "%s --> %s\n", Timestamp(c.Start, "."), Timestamp(c.End, "."))
		for j, l := range c.Lines {
			if j == 0 && c.Speaker != "" {
				bw.WriteString("<v " + vttEscaper.Replace(c.Speaker) + ">")
			}
			bw.WriteString(strings.TrimSpace(vttEscaper.Replace(l)))
			bw.WriteByte('\n')
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// seconds is a time written in seconds with millisecond precision.
type seconds float64

func secs(d time.Duration) seconds { return seconds(math.Round(d.Seconds()*1000) / 1000) }

func (s seconds) duration() time.Duration {
	return time.Duration(math.Round(float64(s) * float64(time.Second)))
}

// The JSON speech data. Segments are paragraphs.
type jsonDoc struct {
	Language   string        `json:"language"`
	Recognizer string        `json:"recognizer"`
	Model      string        `json:"model,omitempty"`
	Duration   seconds       `json:"duration"`
	Text       string        `json:"text"`
	Speakers   []string      `json:"speakers"`
	Segments   []jsonSegment `json:"segments"`
}

type jsonSegment struct {
	Start   seconds    `json:"start"`
	End     seconds    `json:"end"`
	Speaker string     `json:"speaker,omitempty"`
	Text    string     `json:"text"`
	Words   []jsonWord `json:"words"`
}

type jsonWord struct {
	Word       string   `json:"word"`
	Start      seconds  `json:"start"`
	End        seconds  `json:"end"`
	Confidence *float64 `json:"confidence"`
}

func confidence(c float64) *float64 {
	if c < 0 || math.IsNaN(c) {
		return nil
	}
	c = math.Round(min(c, 1)*1000) / 1000
	return &c
}

// WriteJSON writes the speech data as JSON: language, recognizer, model,
// duration (seconds), the full text, the speakers, and segments (the
// transcript's paragraphs) with their words, each with start and end in
// seconds (millisecond precision) and a confidence from 0 to 1 (null when
// the recognizer gave none). ReadJSON reads it back.
func WriteJSON(w io.Writer, t *Transcript, opts WriteOptions) error {
	doc := jsonDoc{
		Language: t.Language, Recognizer: t.Recognizer, Model: t.Model,
		Duration: secs(t.Duration), Text: t.Text(), Speakers: t.Speakers(), Segments: []jsonSegment{},
	}
	if doc.Speakers == nil {
		doc.Speakers = []string{}
	}
	for _, p := range Paragraphs(t.Words, opts.ParagraphGap) {
		s := jsonSegment{Start: secs(p.Start), End: secs(p.End), Speaker: p.Speaker, Text: p.Text()}
		for _, w := range p.Words {
			s.Words = append(s.Words, jsonWord{Word: w.Text, Start: secs(w.Start), End: secs(w.End), Confidence: confidence(w.Confidence)})
		}
		doc.Segments = append(doc.Segments, s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// ReadJSON reads speech data that WriteJSON wrote.
func ReadJSON(r io.Reader) (*Transcript, error) {
	var doc jsonDoc
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("speech: reading speech data: %w", err)
	}
	t := &Transcript{Language: doc.Language, Recognizer: doc.Recognizer, Model: doc.Model, Duration: doc.Duration.duration()}
	for _, s := range doc.Segments {
		for _, w := range s.Words {
			c := NoConfidence
			if w.Confidence != nil {
				c = *w.Confidence
			}
			t.Words = append(t.Words, Word{Text: w.Word, Start: w.Start.duration(), End: w.End.duration(), Confidence: c, Speaker: s.Speaker})
		}
	}
	return t, nil
}

// The XML speech data, the same content as the JSON.
type xmlDoc struct {
	XMLName    xml.Name     `xml:"transcript"`
	Language   string       `xml:"language,attr,omitempty"`
	Recognizer string       `xml:"recognizer,attr,omitempty"`
	Model      string       `xml:"model,attr,omitempty"`
	Duration   string       `xml:"duration,attr"`
	Segments   []xmlSegment `xml:"segment"`
}

type xmlSegment struct {
	Start   string    `xml:"start,attr"`
	End     string    `xml:"end,attr"`
	Speaker string    `xml:"speaker,attr,omitempty"`
	Words   []xmlWord `xml:"word"`
}

type xmlWord struct {
	Start      string `xml:"start,attr"`
	End        string `xml:"end,attr"`
	Confidence string `xml:"confidence,attr,omitempty"`
	Text       string `xml:",chardata"`
}

func xmlSecs(d time.Duration) string { return fmt.Sprintf("%.3f", float64(secs(d))) }

// WriteXML writes the speech data as XML: a <transcript> with language,
// recognizer, model and duration attributes, holding <segment> elements
// (paragraphs; start, end, speaker) of <word> elements (start, end in
// seconds, confidence when known).
func WriteXML(w io.Writer, t *Transcript, opts WriteOptions) error {
	doc := xmlDoc{Language: t.Language, Recognizer: t.Recognizer, Model: t.Model, Duration: xmlSecs(t.Duration)}
	for _, p := range Paragraphs(t.Words, opts.ParagraphGap) {
		s := xmlSegment{Start: xmlSecs(p.Start), End: xmlSecs(p.End), Speaker: p.Speaker}
		for _, w := range p.Words {
			xw := xmlWord{Start: xmlSecs(w.Start), End: xmlSecs(w.End), Text: w.Text}
			if c := confidence(w.Confidence); c != nil {
				xw.Confidence = fmt.Sprintf("%.3f", *c)
			}
			s.Words = append(s.Words, xw)
		}
		doc.Segments = append(doc.Segments, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteText writes a plain-text transcript: one paragraph per block,
// separated by blank lines, each started by "Speaker: " when the
// transcript has more than one speaker, and by [HH:MM:SS] with
// opts.Timestamps.
func WriteText(w io.Writer, t *Transcript, opts WriteOptions) error {
	bw := bufio.NewWriter(w)
	speakers := multiSpeaker(t)
	for i, p := range Paragraphs(t.Words, opts.ParagraphGap) {
		if i > 0 {
			bw.WriteByte('\n')
		}
		if opts.Timestamps {
			bw.WriteString("[" + clock(p.Start) + "] ")
		}
		if speakers && p.Speaker != "" {
			bw.WriteString(p.Speaker + ": ")
		}
		bw.WriteString(p.Text())
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteHTML writes a standalone HTML transcript: a heading, then one
// paragraph per speaker turn or long pause with its time and (for more
// than one speaker) the speaker; every word is a span carrying its start
// and end in seconds (data-start, data-end), so a player page can follow
// along.
func WriteHTML(w io.Writer, t *Transcript, opts WriteOptions) error {
	title := opts.Title
	if title == "" {
		title = "Transcript"
	}
	bw := bufio.NewWriter(w)
	lang := t.Language
	if lang == "" {
		lang = "und"
	}
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", html.EscapeString(lang), html.EscapeString(title))
	bw.WriteString("<style>body{font-family:sans-serif;max-width:45em;margin:2em auto;line-height:1.5}" +
		".time{color:#666;font-size:.85em;margin-right:.5em}.speaker{margin-right:.3em}</style>\n</head>\n<body>\n")
	fmt.Fprintf(bw, "<h1>%s</h1>\n", html.EscapeString(title))
	speakers := multiSpeaker(t)
	for _, p := range Paragraphs(t.Words, opts.ParagraphGap) {
		fmt.Fprintf(bw, "<p data-start=\"%.3f\"><span class=\"time\">%s</span>", float64(secs(p.Start)), clock(p.Start))
		if speakers && p.Speaker != "" {
			fmt.Fprintf(bw, "<strong class=\"speaker\">%s:</strong>", html.EscapeString(p.Speaker))
		}
		for i, w := range p.Words {
			if i > 0 {
				bw.WriteByte(' ')
			}
			fmt.Fprintf(bw, "<span data-start=\"%.3f\" data-end=\"%.3f\">%s</span>", float64(secs(w.Start)), float64(secs(w.End)), html.EscapeString(w.Text))
		}
		bw.WriteString("</p>\n")
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}
