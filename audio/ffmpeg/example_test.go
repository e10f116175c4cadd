package ffmpeg_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/ffmpeg"
)

// Encode one second of a tone as Opus with a title and a chapter, then read
// the result back with ffprobe.
func ExampleNewEncoder() {
	ctx := context.Background()
	var out bytes.Buffer
	opts := audio.EncodeOptions{
		Tags:     audio.Tags{Title: "Tone"},
		Chapters: []audio.Chapter{{Start: 0, Title: "Start"}, {Start: 500 * time.Millisecond, Title: "Half"}},
	}
	enc, err := ffmpeg.NewEncoder(ctx, "opus", &out, audio.Format{SampleRate: 48000, Channels: 2}, opts)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := audio.Copy(ctx, enc, audio.NewBufferSource(audiotest.Sine(2, 48000, 440, 0.5, 48000), 48000)); err != nil {
		log.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}
	d, err := ffmpeg.ProbeDetails(ctx, bytes.NewReader(out.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Format, d.Container, d.Channels, d.SampleRate, d.Tags.Title, len(d.Chapters), d.Chapters[1].Title)
	// Output: opus ogg 2 48000 Tone 2 Half
}

// Decode an ALAC file: the probe states its exact length, and the decoder
// delivers exactly that many frames.
func ExampleDecode() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tone.m4a")
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	enc, err := ffmpeg.NewEncoder(ctx, "alac", f, audio.Format{SampleRate: 44100, Channels: 1}, audio.EncodeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := audio.Copy(ctx, enc, audio.NewBufferSource(audiotest.Sine(1, 44100, 440, 0.5, 22050), 44100)); err != nil {
		log.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	in, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	dec, err := ffmpeg.Decode(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	defer dec.Close()
	pcm, err := audio.ReadAll(ctx, dec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dec.Info().Format, dec.Info().Frames, pcm.Frames())
	// Output: alac 22050 22050
}

func ExampleVBRQuality() {
	// mp3-vbr output at the API's default bitrate uses LAME -V 7.
	fmt.Println(ffmpeg.VBRQuality(96))
	// Output: 7
}
