package flac_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/flac"
)

// Encode a second of a 24-bit stereo sine with a title, then decode it
// through the codec registry.
func ExampleNewEncoder() {
	ctx := context.Background()
	sine := audiotest.Sine(2, 48000, 440, 0.5, 48000)
	var file bytes.Buffer
	enc, err := flac.NewEncoder(ctx, &file, audio.Format{SampleRate: 48000, Channels: 2},
		audio.EncodeOptions{BitDepth: 24, Tags: audio.Tags{Title: "A4"}})
	if err != nil {
		panic(err)
	}
	if err := enc.Write(sine); err != nil {
		panic(err)
	}
	if err := enc.Close(); err != nil {
		panic(err)
	}

	dec, err := audio.Decode(ctx, &file)
	if err != nil {
		panic(err)
	}
	defer dec.Close()
	got, err := audio.ReadAll(ctx, dec)
	if err != nil {
		panic(err)
	}
	info := dec.Info()
	fmt.Println(info.Format, info.BitDepth, "bit", info.Channels, "ch", info.SampleRate, "Hz", info.Tags.Title)
	fmt.Println(got.Frames(), "frames, clipped:", enc.Clipped())
	// Output:
	// flac 24 bit 2 ch 48000 Hz A4
	// 48000 frames, clipped: 0
}
