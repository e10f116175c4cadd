package production

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Side files are written after the encoding pass, in output order, so
// that the description and statistics describe the finished audio:
//
//   - descr: the production as the API returns it (JSON, XML with root
//     <production>, or YAML), with the sizes and checksums of the audio
//     outputs; a side file's own size is not in it.
//   - stats: the statistics as JSON or YAML (the API's shape), or as text
//     for humans.
//   - chaps: the chapter text format (see ParseChapters) with output
//     positions.
//   - psc: Podlove Simple Chapters 1.2 with output positions.
//   - image: the cover image, converted when its type differs from the
//     output's ending.
//   - waveform: the PNG of the output audio.
//   - input: an unchanged copy of the input file.
//
// Outputs this engine cannot make (tracks for multitrack, the speech
// recognition outputs, image without a cover) are skipped with a warning.

func (r *run) sideFiles(ctx context.Context) error {
	p := r.p
	r.fillOutputFields()
	var skipped []string
	for i, o := range p.OutputFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		of, ok := LookupFormat(o.Format)
		if !ok || isAudioOutput(of) {
			continue
		}
		name := p.OutputFilename(i)
		ending := filenameEnding(name, of)
		var data []byte
		var err error
		switch of.Name {
		case "input":
			if err := r.copyInput(i, name); err != nil {
				return err
			}
			continue
		case "descr":
			data, err = r.describe(ending)
		case "stats":
			data, err = StatisticsFile(p.Statistics, ending)
		case "chaps":
			data = []byte(FormatChapters(outputChapters(p)))
		case "psc":
			data, err = PodloveChapters(outputChapters(p), p.Metadata.Title)
		case "image":
			if r.cover == nil {
				skipped = append(skipped, name+" (no cover image)")
				continue
			}
			data, err = ConvertImage(r.cover.Data, ending)
		case "waveform":
			data = r.result.Waveform
		default:
			skipped = append(skipped, fmt.Sprintf("%s (%s is not made by the single-track engine)", name, of.Name))
			continue
		}
		if err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
		if err := r.writeFile(i, name, data); err != nil {
			return err
		}
	}
	r.fillOutputFields()
	if len(skipped) > 0 {
		msg := "outputs skipped: " + strings.Join(skipped, ", ")
		if p.WarningMessage != "" {
			msg = p.WarningMessage + "; " + msg
		}
		p.SetWarning(StatusAudioEncoding, msg)
	}
	return nil
}

// fillOutputFields sets size, size_string and checksum of every output
// from the files finished so far (see publish for split outputs).
func (r *run) fillOutputFields() {
	p := r.p
	for i := range p.OutputFiles {
		p.OutputFiles[i].Size, p.OutputFiles[i].SizeString, p.OutputFiles[i].Checksum = nil, "", ""
	}
	for _, fh := range r.pending {
		if fh.sum == "" {
			continue
		}
		o := &p.OutputFiles[fh.output]
		switch fh.kind {
		case kindMain:
			size := fh.size
			o.Size, o.Checksum = &size, fh.sum
		case kindPart:
			size := fh.size
			if o.Size != nil {
				size += *o.Size
			}
			o.Size = &size
		default:
			continue
		}
		o.SizeString = FormatSize(*o.Size)
	}
}

func (r *run) writeFile(output int, name string, data []byte) error {
	fh, err := r.create(name, output, kindMain)
	if err != nil {
		return err
	}
	if _, err := fh.writer().Write(data); err != nil {
		return fmt.Errorf("output %s: %w", name, err)
	}
	return fh.finish()
}

func (r *run) copyInput(output int, name string) error {
	fh, err := r.create(name, output, kindMain)
	if err != nil {
		return err
	}
	f, err := os.Open(r.in.Main)
	if err != nil {
		return fmt.Errorf("input file: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(fh.writer(), f); err != nil {
		return fmt.Errorf("output %s: %w", name, err)
	}
	return fh.finish()
}

// describe renders the production description. It shows the production
// as it will be when the run succeeds (status Done): the file is published
// only then.
func (r *run) describe(ending string) ([]byte, error) {
	q := *r.p
	q.Status = StatusDone
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return nil, err
	}
	switch ending {
	case "xml":
		return JSONToXML(data, "production")
	case "yaml":
		return JSONToYAML(data)
	}
	return append(data, '\n'), nil
}

// StatisticsFile renders statistics for the stats output: ending json,
// yaml or txt.
func StatisticsFile(s Statistics, ending string) ([]byte, error) {
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

func statisticsText(s Statistics) []byte {
	var b bytes.Buffer
	row := func(name string, l Level) {
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
			fmt.Fprintf(&b, "  %s - %s  %s\n", FormatTimestamp(m.Start), FormatTimestamp(m.Stop), m.Label)
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
			fmt.Fprintf(&b, "  %s - %s  denoise %s, dehum %s\n", FormatTimestamp(n.Start), FormatTimestamp(n.Stop), dn, dh)
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
func PodloveChapters(chs []Chapter, title string) ([]byte, error) {
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
		ch := chapter{Start: FormatTimestamp(c.Start), Title: c.Title, Href: c.URL}
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
