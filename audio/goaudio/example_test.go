package goaudio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gaudio "github.com/go-audio/audio"
	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/goaudio"
	"github.com/audiopost/audiopost/dsp"
)

// A go-audio IntBuffer feeds an audiopost node; the result goes back to
// go-audio as integers through a Sink.
func ExampleNewSource() {
	in := &gaudio.IntBuffer{
		Format:         &gaudio.Format{NumChannels: 1, SampleRate: 48000},
		Data:           []int{16384, -16384, 32767, -32768},
		SourceBitDepth: 16,
	}
	src, err := goaudio.NewSource(in)
	if err != nil {
		panic(err)
	}
	var out []int
	sink, _ := goaudio.NewSink(collect{&out}, src.Format(), 16)
	half, _ := dsp.NewGain(src, -6.0206)
	audio.Copy(context.Background(), sink, half)
	fmt.Println(out)
	// Output:
	// [8192 -8192 16383 -16384]
}

// collect is a go-audio IntBufferWriter that keeps the samples.
type collect struct{ out *[]int }

func (c collect) Write(b *gaudio.IntBuffer) error {
	*c.out = append(*c.out, b.Data...)
	return nil
}

// A WAV file read by go-audio's decoder, vetted first, becomes a Source.
func ExampleNewWAVSource() {
	path := filepath.Join(os.TempDir(), "goaudio-example.wav")
	writeTone(path)
	defer os.Remove(path)

	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	src, err := goaudio.NewWAVSource(f)
	if err != nil {
		panic(err)
	}
	buf, _ := audio.ReadAll(context.Background(), src)
	fmt.Printf("%d Hz, %d channels, %d bits, %d frames, first frame %v %v\n",
		src.Format().SampleRate, src.Format().Channels, src.BitDepth(), buf.Frames(), buf[0][0], buf[1][0])
	// Output:
	// 44100 Hz, 2 channels, 24 bits, 4410 frames, first frame 0.25 -0.25
}

// writeTone writes 0.1 s of stereo 24-bit audio through go-audio's encoder
// behind a WAVSink.
func writeTone(path string) {
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	format := audio.Format{SampleRate: 44100, Channels: 2}
	sink, err := goaudio.NewWAVSink(f, format, 24)
	if err != nil {
		panic(err)
	}
	b := audio.NewBuffer(2, 4410)
	for i := range b[0] {
		b[0][i], b[1][i] = 0.25, -0.25
	}
	if err := sink.Write(b); err != nil {
		panic(err)
	}
	if err := sink.Close(); err != nil {
		panic(err)
	}
}

// CheckWAV guards go-audio's own decoder: this 56-byte file's LIST/INFO
// entry claims 4 GiB, which go-audio would allocate.
func ExampleCheckWAV() {
	file := []byte("RIFF\x30\x00\x00\x00WAVE" +
		"fmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00" +
		"LIST\x0c\x00\x00\x00INFOINAM\xf0\xff\xff\xff")
	r := bytes.NewReader(file)
	if err := goaudio.CheckWAV(r); err != nil {
		fmt.Println(errors.Is(err, audio.ErrMalformed), err)
		return
	}
	gwav.NewDecoder(r).FwdToPCM() // never reached
	// Output:
	// true audio: malformed data: LIST/INFO entry "INAM" of 4294967280 bytes in a 12-byte chunk
}
