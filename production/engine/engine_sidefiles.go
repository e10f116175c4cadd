package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/production/sidefile"

	"github.com/audiopost/audiopost/production"
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
//   - tracks: a multitrack production's processed tracks, zipped (see
//     multitrack.writeTracks).
//
//   - speech, subtitle, transcript: what the speech recognition heard, on
//     the output's timeline (see engine_speech.go).
//
// Outputs this engine cannot make (speech outputs without a recognition,
// image without a cover) are skipped with a warning.

func (r *run) sideFiles(ctx context.Context) error {
	p := r.p
	r.fillOutputFields()
	var skipped []string
	for i, o := range p.OutputFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		of, ok := production.LookupFormat(o.Format)
		if !ok || isAudioOutput(of) {
			continue
		}
		name := p.OutputFilename(i)
		ending := production.FilenameEnding(name, of)
		var data []byte
		var err error
		switch of.Name {
		case "input":
			if r.mt != nil {
				skipped = append(skipped, name+" (a multitrack production has no single input file; the tracks output holds its tracks)")
				continue
			}
			if err := r.copyInput(i, name); err != nil {
				return err
			}
			continue
		case "speech", "subtitle", "transcript":
			why, err := r.writeSpeechOutput(i, name, of, ending)
			if err != nil {
				return err
			}
			if why != "" {
				skipped = append(skipped, why)
			}
			continue
		case "tracks":
			if r.mt == nil {
				skipped = append(skipped, name+" (needs a multitrack production)")
				continue
			}
			if err := r.mt.writeTracks(ctx, i, name, ending); err != nil {
				return err
			}
			continue
		case "descr":
			data, err = r.describe(ending)
		case "stats":
			data, err = sidefile.StatisticsFile(p.Statistics, ending)
		case "chaps":
			data = []byte(production.FormatChapters(outputChapters(p)))
		case "psc":
			data, err = sidefile.PodloveChapters(outputChapters(p), p.Metadata.Title)
		case "image":
			if r.cover == nil {
				skipped = append(skipped, name+" (no cover image)")
				continue
			}
			data, err = artwork.ConvertImage(r.cover.Data, ending)
		case "cutlist":
			data, err = r.cutList(ending)
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
		p.AddWarning(production.StatusAudioEncoding, "outputs skipped: "+strings.Join(skipped, ", "))
	}
	return nil
}

// fillOutputFields sets size, size_string and checksum of every output
// from the files finished so far. An output split on chapters has no file
// of its own: its size and checksum stay empty and its Parts list the
// part files, in chapter order.
func (r *run) fillOutputFields() {
	p := r.p
	for i := range p.OutputFiles {
		o := &p.OutputFiles[i]
		o.Size, o.SizeString, o.Checksum, o.Parts = nil, "", "", nil
	}
	var parts []*fileHandle
	for _, fh := range r.pending {
		if fh.sum == "" {
			continue
		}
		if fh.kind == kindPart {
			parts = append(parts, fh)
			continue
		}
		o := &p.OutputFiles[fh.output]
		size := fh.size
		o.Size, o.SizeString, o.Checksum = &size, production.FormatSize(size), fh.sum
	}
	slices.SortFunc(parts, func(a, b *fileHandle) int { return cmp.Or(a.output-b.output, a.part-b.part) })
	for _, fh := range parts {
		o := &p.OutputFiles[fh.output]
		o.Parts = append(o.Parts, production.OutputPart{Filename: fh.name, Size: fh.size, Checksum: fh.sum})
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
	f, err := r.openFile(r.in.Main)
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
	q.Status = production.StatusDone
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return nil, err
	}
	switch ending {
	case "xml":
		return sidefile.JSONToXML(data, "production")
	case "yaml":
		return sidefile.JSONToYAML(data)
	}
	return append(data, '\n'), nil
}

// cutList renders the cuts the cutters detected and the trims, in the time
// of the main input (as chapter starts are given), whatever the cut mode:
// Audacity labels (txt) or the JSON edit list of dsp/classify, with the
// kept ranges. An export_uncut_audio production thus delivers the audio
// and the list an editor applies to it.
func (r *run) cutList(ending string) ([]byte, error) {
	rate := r.p.SampleRate
	var cuts classify.Cuts
	for _, c := range r.p.Statistics.Cuts {
		why, err := classify.ParseReason(c.Reason)
		if err != nil {
			return nil, err
		}
		cuts = append(cuts, classify.Cut{Start: durFrames(c.Start, rate), End: durFrames(c.Stop, rate), Reason: why})
	}
	frames := max(r.expected, 0)
	if n := len(cuts); n > 0 {
		frames = max(frames, cuts[n-1].End)
	}
	var b bytes.Buffer
	var err error
	if ending == "json" {
		err = classify.WriteEDL(&b, cuts, rate, frames)
	} else {
		err = classify.WriteAudacityLabels(&b, cuts, rate)
	}
	return b.Bytes(), err
}

func durFrames(d time.Duration, rate int) int64 {
	return int64(math.Round(d.Seconds() * float64(rate)))
}
