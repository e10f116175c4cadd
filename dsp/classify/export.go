package classify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Cut list export, for cut_mode export_uncut_audio: the audio goes out
// uncut and the list goes with it, for an editor to apply or review.

// WriteAudacityLabels writes the cuts as an Audacity label track: one
// line per cut, "start<TAB>end<TAB>reason", times in seconds with six
// decimals (Audacity's own precision). Import it with File > Import >
// Labels next to the uncut audio.
func WriteAudacityLabels(w io.Writer, cuts Cuts, sampleRate int) error {
	if err := cuts.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, c := range cuts {
		fmt.Fprintf(bw, "%s\t%s\t%s\n", seconds(c.Start, sampleRate), seconds(c.End, sampleRate), c.Reason)
	}
	return bw.Flush()
}

// ReadAudacityLabels reads a label track as WriteAudacityLabels writes it
// (and as Audacity exports one) back into a cut list, rounding times to
// the nearest frame. A label whose text is not a reason gets none.
func ReadAudacityLabels(r io.Reader, sampleRate int) (Cuts, error) {
	var out []Cut
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimRight(sc.Text(), "\r")
		if t == "" || strings.HasPrefix(t, "\\") { // "\" lines carry spectral selections
			continue
		}
		f := strings.SplitN(t, "\t", 3)
		if len(f) < 2 {
			return nil, fmt.Errorf("classify: label line %d: want start<TAB>end", line)
		}
		a, err1 := strconv.ParseFloat(f[0], 64)
		b, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || a < 0 || b < a || math.IsInf(b, 0) {
			return nil, fmt.Errorf("classify: label line %d: bad times %q, %q", line, f[0], f[1])
		}
		var why Reason
		if len(f) == 3 {
			why, _ = ParseReason(f[2])
		}
		out = append(out, Cut{frameAt(a, sampleRate), frameAt(b, sampleRate), why})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return Normalize(out, 0), nil
}

// EDL is the JSON edit decision list of a cut list:
//
//	{
//	  "sample_rate": 48000,
//	  "frames": 4800000,            // length of the uncut input
//	  "duration": 100.0,            // seconds, uncut
//	  "output_frames": 4320000,     // length after apply_cuts
//	  "output_duration": 90.0,
//	  "cuts": [{"start": 12.5, "end": 14.2, "start_frame": 600000,
//	            "end_frame": 681600, "reason": "silence"}, ...],
//	  "kept": [{"start": 0, "end": 12.5, "start_frame": 0, "end_frame": 600000,
//	            "output_start": 0}, ...]
//	}
//
// Times are seconds from the start of the uncut input, except
// output_start, which is where a kept range begins in the cut output.
// The frame fields are exact; the seconds are for people and for tools
// that do not know the sample rate. reason is Reason.String: "silence",
// "filler", "cough", "music", "trim", or several joined by "+".
type EDL struct {
	SampleRate     int       `json:"sample_rate"`     // of the input, Hz
	Frames         int64     `json:"frames"`          // uncut input length
	Duration       float64   `json:"duration"`        // seconds, uncut
	OutputFrames   int64     `json:"output_frames"`   // length after apply_cuts
	OutputDuration float64   `json:"output_duration"` // seconds, after apply_cuts
	Cuts           []EDLCut  `json:"cuts"`            // removed ranges, in order
	Kept           []EDLKept `json:"kept"`            // surviving ranges, in order
}

// EDLCut is one removed range of an EDL.
type EDLCut struct {
	Start      float64 `json:"start"`       // seconds
	End        float64 `json:"end"`         // seconds, exclusive
	StartFrame int64   `json:"start_frame"` // exact start
	EndFrame   int64   `json:"end_frame"`   // exact end, exclusive
	Reason     string  `json:"reason"`      // Reason.String
}

// EDLKept is one kept range of an EDL.
type EDLKept struct {
	Start       float64 `json:"start"`        // seconds in the input
	End         float64 `json:"end"`          // seconds in the input, exclusive
	StartFrame  int64   `json:"start_frame"`  // exact start in the input
	EndFrame    int64   `json:"end_frame"`    // exact end, exclusive
	OutputStart float64 `json:"output_start"` // seconds in the cut output
}

// NewEDL describes the cut list of a recording of frames frames.
func NewEDL(cuts Cuts, sampleRate int, frames int64) (*EDL, error) {
	if err := cuts.Validate(); err != nil {
		return nil, err
	}
	if sampleRate <= 0 || frames < 0 {
		return nil, fmt.Errorf("classify: EDL of %d frames at %d Hz", frames, sampleRate)
	}
	cuts = cuts.Clip(frames)
	fs := float64(sampleRate)
	e := &EDL{SampleRate: sampleRate, Frames: frames, Duration: float64(frames) / fs,
		OutputFrames: frames - cuts.Removed(), Cuts: []EDLCut{}, Kept: []EDLKept{}}
	e.OutputDuration = float64(e.OutputFrames) / fs
	for _, c := range cuts {
		e.Cuts = append(e.Cuts, EDLCut{float64(c.Start) / fs, float64(c.End) / fs, c.Start, c.End, c.Reason.String()})
	}
	var out int64
	for _, k := range cuts.Kept(frames) {
		e.Kept = append(e.Kept, EDLKept{float64(k.Start) / fs, float64(k.End) / fs, k.Start, k.End, float64(out) / fs})
		out += k.End - k.Start
	}
	return e, nil
}

// CutList returns the EDL's cuts as a cut list (from the frame fields).
func (e *EDL) CutList() (Cuts, error) {
	out := make(Cuts, 0, len(e.Cuts))
	for _, c := range e.Cuts {
		why, err := ParseReason(c.Reason)
		if err != nil {
			return nil, err
		}
		out = append(out, Cut{c.StartFrame, c.EndFrame, why})
	}
	return out, out.Validate()
}

// WriteEDL writes the EDL of cuts as indented JSON.
func WriteEDL(w io.Writer, cuts Cuts, sampleRate int, frames int64) error {
	e, err := NewEDL(cuts, sampleRate, frames)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(e)
}

func seconds(frame int64, sampleRate int) string {
	return strconv.FormatFloat(float64(frame)/float64(sampleRate), 'f', 6, 64)
}

func frameAt(sec float64, sampleRate int) int64 {
	return int64(math.Round(sec * float64(sampleRate)))
}
