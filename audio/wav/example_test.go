package wav_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
)

// Encode a second of a 24-bit tone to a file through the registry, then
// open it again by content and read it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wav-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tone.wav")

	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	format := audio.Format{SampleRate: 48000, Channels: 2}
	enc, err := audio.NewEncoder(ctx, "wav-24bit", f, format, audio.EncodeOptions{Tags: audio.Tags{Title: "Tone"}})
	if err != nil {
		log.Fatal(err)
	}
	tone := audiotest.Sine(2, 48000, 1000, 0.5, 48000)
	if _, err := audio.Copy(ctx, enc, audio.NewBufferSource(tone, 48000)); err != nil {
		log.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	dec, err := audio.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer dec.Close()
	info := dec.Info()
	fmt.Printf("%s, %d Hz, %d ch, %d bit, %d frames, %.0f kbps, title %q\n",
		info.Format, info.SampleRate, info.Channels, info.BitDepth, info.Frames, info.Bitrate, info.Tags.Title)
	got, err := audio.ReadAll(ctx, dec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read %d frames, frame 12 = %.6f\n", got.Frames(), got[0][12])
	// Output:
	// wav, 48000 Hz, 2 ch, 24 bit, 48000 frames, 2304 kbps, title "Tone"
	// read 48000 frames, frame 12 = 0.500000
}

// Decode a WAV stream from a reader that cannot seek, block by block.
func ExampleNewDecoder() {
	ctx := context.Background()
	// Make a short 16-bit mono stream as a non-seekable writer would get it.
	var stream bytes.Buffer
	enc, err := wav.NewEncoder(ctx, &stream, audio.Format{SampleRate: 8000, Channels: 1}, audio.EncodeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := enc.Write(audio.Buffer{{0, 0.25, 0.5, -0.5, -1}}); err != nil {
		log.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}

	dec, err := wav.NewDecoder(ctx, &stream)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("frames known:", dec.Info().Frames >= 0)
	buf := audio.NewBuffer(1, 2)
	for {
		n, err := dec.Read(buf)
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(buf[0][:n])
	}
	// Output:
	// frames known: false
	// [0 0.25]
	// [0.5 -0.5]
	// [-1]
	// EOF
}

// Encode to a non-seekable writer with a known length, so the header states
// exact sizes, and count clipped samples.
func ExampleNewEncoder() {
	ctx := context.Background()
	var out bytes.Buffer                                                                                                     // like an HTTP response, it cannot seek
	enc, err := wav.NewEncoder(ctx, &out, audio.Format{SampleRate: 8000, Channels: 1}, audio.EncodeOptions{Length: 500_000}) // 0.5 ms: 4 frames
	if err != nil {
		log.Fatal(err)
	}
	if err := enc.Write(audio.Buffer{{0.5, 1.5, -2, 0}}); err != nil {
		log.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("bytes:", out.Len(), "clipped:", enc.Clipped())
	dec, err := wav.NewDecoder(ctx, &out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("frames:", dec.Info().Frames)
	// Output:
	// bytes: 52 clipped: 2
	// frames: 4
}
