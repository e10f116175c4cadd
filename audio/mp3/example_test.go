package mp3_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/mp3" // registers the decoder
)

// silence returns n MPEG-1 Layer III frames (128 kbps, 44.1 kHz, joint
// stereo) with empty side information: valid frames that decode to silence.
func silence(n int) []byte {
	frame := make([]byte, 417)
	copy(frame, []byte{0xFF, 0xFB, 0x90, 0x64})
	return bytes.Repeat(frame, n)
}

// Decode an MP3 through the codec registry. From a seekable reader the
// duration is known before decoding, by counting frame headers.
func Example() {
	ctx := context.Background()
	dec, err := audio.Decode(ctx, bytes.NewReader(silence(10)))
	if err != nil {
		panic(err)
	}
	defer dec.Close()
	info := dec.Info()
	fmt.Printf("%s %d ch %d Hz %.0f kbps\n", info.Format, info.Channels, info.SampleRate, info.Bitrate)
	fmt.Println("frames from the headers:", info.Frames)
	pcm, err := audio.ReadAll(ctx, dec)
	if err != nil {
		panic(err)
	}
	fmt.Println("frames decoded:", pcm.Frames())
	// Output:
	// mp3 2 ch 44100 Hz 128 kbps
	// frames from the headers: 11520
	// frames decoded: 11520
}
