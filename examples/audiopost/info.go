package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs" // every decoder, ffmpeg as the fallback
)

func init() {
	register("info", "print what a file contains, as JSON", runInfo)
}

// infoOutput is audio.Info under the field names of the API's production
// (format, channels, samplerate, bitrate, length, has_video) plus its tags;
// container, exact frame count and bit depth are internal and left out.
type infoOutput struct {
	Format     string     `json:"format"`
	Channels   int        `json:"channels"`
	SampleRate int        `json:"samplerate"`
	Bitrate    float64    `json:"bitrate"`
	Length     float64    `json:"length"`
	HasVideo   bool       `json:"has_video"`
	Tags       audio.Tags `json:"tags"`
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost info FILE")
		fmt.Fprintln(stderr, "Prints the format, channels, sample rate, bitrate (kbps), length (s), has_video and tags of FILE as one JSON object.")
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		fs.Usage()
		return fmt.Errorf("info: want exactly one file, got %d arguments", len(files))
	}
	info, err := audio.ProbeFile(ctx, files[0])
	if err != nil {
		return err
	}
	out := infoOutput{
		Format:     info.Format,
		Channels:   info.Channels,
		SampleRate: info.SampleRate,
		Bitrate:    info.Bitrate,
		Length:     info.Length,
		HasVideo:   info.HasVideo,
		Tags:       info.Tags,
	}
	if c := info.Tags.Cover; c != nil {
		// Codecs that read the picture's bytes may leave Size unset; one
		// whose size is unknown says nothing useful and is left out.
		pic := *c
		if pic.Size == 0 {
			pic.Size = len(pic.Data)
		}
		out.Tags.Cover = &pic
		if pic.Size == 0 {
			out.Tags.Cover = nil
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
