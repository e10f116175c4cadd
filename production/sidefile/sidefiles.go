// Package sidefile renders the side files of a production: descriptions
// (JSON, XML, YAML), statistics (JSON, YAML, text) and chapter files
// (Podlove Simple Chapters).
package sidefile

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"strings"

	"github.com/audiopost/audiopost/production"
)

// StatisticsFile renders statistics for the stats output: ending json,
// yaml or txt.
func StatisticsFile(s production.Statistics, ending string) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	switch ending {
	case "yaml":
		return JSONToYAML(data)
	case "txt":
		return statisticsText(s), nil
	}
	return append(data, '\n'), nil
}

func statisticsText(s production.Statistics) []byte {
	var b bytes.Buffer
	row := func(name string, l production.Level) {
		v := "-"
		if !math.IsInf(l.Value, 0) && !math.IsNaN(l.Value) {
			v = fmt.Sprintf("%.2f %s", l.Value, l.Unit)
		}
		fmt.Fprintf(&b, "  %-16s %s\n", name+":", v)
	}
	if lv := s.Levels; lv != nil {
		in, out := lv.Input, lv.Output
		b.WriteString("Input levels\n")
		row("Loudness", in.Loudness)
		row("Loudness range", in.LRA)
		row("Max momentary", in.MaxMomentary)
		row("Max short-term", in.MaxShortterm)
		row("Signal level", in.SignalLevel)
		row("Noise level", in.NoiseLevel)
		row("SNR", in.SNR)
		b.WriteString("\nOutput levels\n")
		row("Loudness", out.Loudness)
		row("Loudness range", out.LRA)
		row("Max momentary", out.MaxMomentary)
		row("Max short-term", out.MaxShortterm)
		row("True peak", out.Peak)
		row("Gain min", out.GainMin)
		row("Gain mean", out.GainMean)
		row("Gain max", out.GainMax)
	}
	if len(s.MusicSpeech) > 0 {
		b.WriteString("\nMusic/speech segments\n")
		for _, m := range s.MusicSpeech {
			fmt.Fprintf(&b, "  %s - %s  %s\n", production.FormatTimestamp(m.Start), production.FormatTimestamp(m.Stop), m.Label)
		}
	}
	if len(s.NoiseHumReduction) > 0 {
		b.WriteString("\nNoise and hum reduction\n")
		for _, n := range s.NoiseHumReduction {
			dn, dh := "off", "off"
			if n.Denoise != nil {
				dn = fmt.Sprintf("%.0f dB", *n.Denoise)
			}
			if n.Dehum != nil {
				dh = fmt.Sprintf("%.0f Hz", *n.Dehum)
			}
			fmt.Fprintf(&b, "  %s - %s  denoise %s, dehum %s\n", production.FormatTimestamp(n.Start), production.FormatTimestamp(n.Stop), dn, dh)
		}
	}
	if b.Len() == 0 {
		b.WriteString("No statistics.\n")
	}
	return b.Bytes()
}

// PodloveChapters renders Podlove Simple Chapters 1.2
// (http://podlove.org/simple-chapters) from chapters with output
// positions in Start.
func PodloveChapters(chs []production.Chapter, title string) ([]byte, error) {
	type chapter struct {
		Start string `xml:"start,attr"`
		Title string `xml:"title,attr"`
		Href  string `xml:"href,attr,omitempty"`
		Image string `xml:"image,attr,omitempty"`
	}
	doc := struct {
		XMLName  xml.Name  `xml:"psc:chapters"`
		Version  string    `xml:"version,attr"`
		NS       string    `xml:"xmlns:psc,attr"`
		Comment  string    `xml:",comment"`
		Chapters []chapter `xml:"psc:chapter"`
	}{Version: "1.2", NS: "http://podlove.org/simple-chapters"}
	if title != "" {
		doc.Comment = " " + strings.ReplaceAll(title, "--", "- -") + " "
	}
	for _, c := range chs {
		ch := chapter{Start: production.FormatTimestamp(c.Start), Title: c.Title, Href: c.URL}
		if c.Image != nil {
			ch.Image = *c.Image
		}
		doc.Chapters = append(doc.Chapters, ch)
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
