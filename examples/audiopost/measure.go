package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/loudness"
)

func init() {
	register("measure", "loudness of files (EBU R128): measure [-json] FILE...", runMeasure)
}

// measurement is one line of `measure -json`. Pointers so that undefined
// readings (-Inf) encode as null.
type measurement struct {
	File             string   `json:"file"`
	IntegratedLUFS   *float64 `json:"integrated_lufs"`
	LRALU            *float64 `json:"lra_lu"`
	TruePeakDBTP     *float64 `json:"true_peak_dbtp"`
	SamplePeakDBFS   *float64 `json:"sample_peak_dbfs"`
	MaxMomentaryLUFS *float64 `json:"max_momentary_lufs"`
	MaxShortTermLUFS *float64 `json:"max_shortterm_lufs"`
}

func runMeasure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost measure [-json] FILE...")
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return errors.New("measure: no input file")
	}
	var tw *tabwriter.Writer
	enc := json.NewEncoder(stdout)
	if !*asJSON {
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "I (LUFS)\tLRA (LU)\tTP (dBTP)\tPeak (dBFS)\tmax M (LUFS)\tmax S (LUFS)\t  FILE")
	}
	var failed []error
	for _, path := range files {
		r, err := measureFile(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintln(stderr, "audiopost measure:", err)
			failed = append(failed, err)
			continue
		}
		if *asJSON {
			if err := enc.Encode(measurement{
				File: path, IntegratedLUFS: num(r.Integrated), LRALU: num(r.LRA),
				TruePeakDBTP: num(r.TruePeak), SamplePeakDBFS: num(r.SamplePeak),
				MaxMomentaryLUFS: num(r.MaxMomentary), MaxShortTermLUFS: num(r.MaxShortTerm),
			}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", cell(r.Integrated), cell(r.LRA), cell(r.TruePeak),
			cell(r.SamplePeak), cell(r.MaxMomentary), cell(r.MaxShortTerm), path)
	}
	if tw != nil {
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("measure: %d of %d files failed: %w", len(failed), len(files), errors.Join(failed...))
	}
	return nil
}

func measureFile(ctx context.Context, path string) (loudness.Result, error) {
	d, err := audio.Open(ctx, path)
	if err != nil {
		return loudness.Result{}, err
	}
	defer d.Close()
	r, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeEBU})
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// num rounds a reading to 0.01 for output and maps -Inf to nil (null).
func num(v float64) *float64 {
	if !loudness.Defined(v) {
		return nil
	}
	r := math.Round(v*100) / 100
	return &r
}

func cell(v float64) string {
	if !loudness.Defined(v) {
		return "-inf"
	}
	return fmt.Sprintf("%.1f", v)
}
