package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/burnin"
)

// Speech recognition (status 14) runs first, on the input as it is (each
// track of a multitrack production, placed at its offset), so that one
// recognition serves everything: the filler cutter takes the filler words
// it heard (and drops acoustic fillers that are words), the subtitles,
// speech data and transcripts follow the output's timeline (cuts and
// intros moved them), and video outputs of a video input get the words
// burned in at their places in the input's video. A recognition that
// fails costs the speech outputs, not the production: they are skipped
// with a warning that says why.

// recognize runs the production's recognizer, if it has one.
func (r *run) recognize(ctx context.Context) error {
	p := r.p
	sr := p.SpeechRecognition
	if sr == nil {
		return nil
	}
	if r.in.Recognizer == nil {
		r.speechSkipped = "no speech recognition service is available to this production"
		return nil
	}
	r.setStatus(production.StatusSpeechRecognition, 0)
	opts := speech.Options{Language: sr.Language, Keywords: sr.Keywords}
	if !p.IsMultitrack {
		opts.Fillers = r.settings.Chain.Cutting.Detect.Filler
	}
	var t *speech.Transcript
	var err error
	if r.mt == nil {
		t, err = r.recognizeSource(ctx, r.openMain, opts)
	} else {
		var tracks []speech.Track
		for i, m := range r.mt.inputs {
			tt, terr := r.recognizeSource(ctx, r.mt.open(i), opts)
			if terr != nil {
				err = fmt.Errorf("track %s: %w", m.ID, terr)
				break
			}
			shiftWords(tt.Words, time.Duration(m.Offset*float64(time.Second)))
			tracks = append(tracks, speech.Track{Speaker: m.ID, Transcript: tt})
		}
		if err == nil {
			t = speech.Merge(tracks...)
		}
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		r.speechSkipped = "speech recognition failed: " + err.Error()
		r.setStatus(production.StatusAudioProcessing, 0)
		return nil
	}
	r.transcript = t
	r.setStatus(production.StatusAudioProcessing, 0)
	return nil
}

// recognizeSource recognises what open yields.
func (r *run) recognizeSource(ctx context.Context, open audio.Opener, opts speech.Options) (*speech.Transcript, error) {
	src, err := open(ctx)
	if err != nil {
		return nil, err
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	return r.in.Recognizer.Recognize(ctx, src, opts)
}

func shiftWords(ws []speech.Word, d time.Duration) {
	for i := range ws {
		ws[i].Start += d
		ws[i].End += d
	}
}

// refineCuts is the chain's Cutting.Refine when a recognition heard the
// input: the filler words become cuts, and an acoustic filler cut whose
// middle falls on a recognised word that is not a filler is dropped (the
// recognizer heard a word there).
func (r *run) refineCuts(rate int) func(classify.Cuts) classify.Cuts {
	if r.transcript == nil || r.mt != nil {
		return nil
	}
	words := r.transcript.Words
	return func(cuts classify.Cuts) classify.Cuts {
		frame := func(d time.Duration) int64 { return int64(math.Round(d.Seconds() * float64(rate))) }
		isWord := func(f int64) bool {
			for _, w := range words {
				if frame(w.Start) <= f && f < frame(w.End) && !speech.IsFiller(w.Text) {
					return true
				}
			}
			return false
		}
		var out []classify.Cut
		for _, c := range cuts {
			if c.Reason == classify.CutFiller && isWord((c.Start+c.End)/2) {
				continue
			}
			out = append(out, c)
		}
		out = append(out, speech.FillerCuts(words, rate, speech.FillerOptions{Pad: 20 * time.Millisecond})...)
		return classify.Normalize(out, 1)
	}
}

// outputTranscript is the transcript on the output's timeline: without
// the words the applied cuts removed, moved by the cuts and by the intros
// before the programme.
func (r *run) outputTranscript(rate int) (*speech.Transcript, error) {
	if r.transcript == nil {
		return nil, nil
	}
	t := r.transcript
	if len(r.p.Cuts) > 0 {
		var cuts []classify.Cut
		for _, c := range r.p.Cuts {
			cuts = append(cuts, classify.Cut{Start: int64(math.Round(c.Start * float64(rate))), End: int64(math.Round(c.Stop * float64(rate)))})
		}
		var err error
		if t, err = speech.ApplyCuts(t, classify.Normalize(cuts, 0), rate); err != nil {
			return nil, err
		}
	}
	out := *t
	out.Words = append([]speech.Word(nil), t.Words...)
	var intro float64
	for _, m := range r.p.MultiInputFiles {
		if m.Type == production.InputIntro {
			intro += math.Max(0, m.InputLength-m.Offset)
		}
	}
	shiftWords(out.Words, time.Duration(intro*float64(time.Second)))
	return &out, nil
}

// writeSpeechOutput writes a subtitle, speech or transcript output.
func (r *run) writeSpeechOutput(output int, name string, of production.OutputFormat, ending string) (skipped string, err error) {
	if r.outTranscript == nil {
		why := r.speechSkipped
		if why == "" {
			why = "the production has no speech recognition"
		}
		return fmt.Sprintf("%s (%s)", name, why), nil
	}
	var buf bytes.Buffer
	if err := speech.Write(&buf, of.Name, ending, r.outTranscript, speech.WriteOptions{}); err != nil {
		return "", fmt.Errorf("output %s: %w", name, err)
	}
	return "", r.writeFile(output, name, buf.Bytes())
}

// burnSubtitles renders, before the encoding pass, the input's video with
// the words burned in for every video output whose subtitles are on, and
// records the files for encoderFor. Outputs it cannot burn into are named
// in a warning.
func (r *run) burnSubtitles(ctx context.Context) error {
	var skipped []string
	for i, o := range r.p.OutputFiles {
		if o.Format != "video" || o.Subtitles == nil || !o.Subtitles.Enabled {
			continue
		}
		name := r.p.OutputFilename(i)
		switch {
		case r.transcript == nil:
			why := r.speechSkipped
			if why == "" {
				why = "burned-in subtitles need speech recognition"
			}
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, why))
			continue
		case !r.info.HasVideo:
			skipped = append(skipped, name+" (subtitles are burned into the video of a video input; this video is drawn from the audio)")
			continue
		}
		if r.burnDir == "" {
			dir, err := os.MkdirTemp(r.e.TempDir, "audiopost-burn-")
			if err != nil {
				return err
			}
			r.burnDir = dir
		}
		ext := filepath.Ext(name)
		if ext == "" {
			ext = ".mp4"
		}
		dst := filepath.Join(r.burnDir, fmt.Sprintf("%d%s", i, strings.ToLower(ext)))
		// Planned as the output's encoder is (Work.OutputTemp), which
		// then copies this video.
		res, err := burnin.Burn(ctx, dst, r.in.Main, r.transcript.Words, burnin.Style(*o.Subtitles),
			burnin.Options{TempDir: r.e.TempDir, MaxBytes: r.tempLimit(i)})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, audio.ErrTempLimit) {
				return r.tempLimitError(i, r.tempLimit(i), err)
			}
			if errors.Is(err, burnin.ErrNoVideo) {
				skipped = append(skipped, name+" (the input has no video stream)")
				continue
			}
			return fmt.Errorf("burning subtitles into %s: %w", name, err)
		}
		if res.Font.Fallback {
			r.p.AddWarning(production.StatusAudioEncoding, fmt.Sprintf("%s: font %q is not installed here; subtitles set in %s", name, o.Subtitles.Font, res.Font.Family))
		}
		if r.burned == nil {
			r.burned = map[string]string{}
		}
		r.burned[name] = dst
	}
	if len(skipped) > 0 {
		r.p.AddWarning(production.StatusAudioEncoding, "subtitles not burned in: "+strings.Join(skipped, ", "))
	}
	return nil
}
