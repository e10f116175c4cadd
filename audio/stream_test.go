package audio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

func TestBufferSourceContract(t *testing.T) {
	want := audiotest.Noise(2, 10007, 0.5, 1)
	got := audiotest.CheckSource(t, func() audio.Source { return audio.NewBufferSource(want, 48000) })
	if got.Frames() != want.Frames() {
		t.Fatalf("read %d frames, want %d", got.Frames(), want.Frames())
	}
	for c := range want {
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				t.Fatalf("frame %d differs", i)
			}
		}
	}
}

// rawCodec is a minimal real codec used to exercise the registry: a magic
// line, then interleaved float32 stereo at 8 kHz. It can be told to panic or
// to misbehave, like damaged input makes real decoders do.
type rawDecoder struct {
	r       io.Reader
	misuse  string
	scratch []byte
}

func (d *rawDecoder) Format() audio.Format { return audio.Format{SampleRate: 8000, Channels: 2} }
func (d *rawDecoder) Info() audio.Info {
	return audio.Info{Format: "raw", Channels: 2, SampleRate: 8000, Frames: -1, Length: 1}
}
func (d *rawDecoder) Close() error { return nil }
func (d *rawDecoder) Read(dst audio.Buffer) (int, error) {
	switch d.misuse {
	case "panic":
		var s []int
		_ = s[3]
	case "data+eof":
		dst[0][0], dst[1][0] = 0.5, 0.5
		d.misuse = "done"
		return 1, io.EOF
	case "done":
		return 0, io.EOF
	}
	need := dst.Frames() * 8
	if cap(d.scratch) < need {
		d.scratch = make([]byte, need)
	}
	n, err := io.ReadFull(d.r, d.scratch[:need])
	frames := audio.DecodePCM(dst, 0, d.scratch[:n], audio.Float32)
	if frames > 0 {
		return frames, nil
	}
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return 0, err
}

func init() {
	audio.RegisterCodec(audio.Codec{
		Name:  "rawtest",
		Match: func(h []byte) bool { return bytes.HasPrefix(h, []byte("RAWTEST")) },
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) {
			var magic [8]byte
			if _, err := io.ReadFull(r, magic[:]); err != nil {
				return nil, err
			}
			if magic[7] == 'u' {
				return nil, fmt.Errorf("%w: variant u", audio.ErrUnsupported)
			}
			return &rawDecoder{r: r, misuse: map[byte]string{'p': "panic", 'e': "data+eof"}[magic[7]]}, nil
		},
	})
}

// The fallback takes only what the raw codec refuses as unsupported, so
// other tests still see "unknown format" for foreign data.
func init() {
	audio.RegisterCodec(audio.Codec{
		Name: "rawfallback",
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) {
			var magic [8]byte
			if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != "RAWTESTu" {
				return nil, audio.ErrUnknownFormat
			}
			return &rawDecoder{r: r}, nil
		},
	})
}

func TestUnsupportedVariantGoesToFallback(t *testing.T) {
	data := rawFile('u', 300)
	d, err := audio.Decode(context.Background(), bytes.NewReader(data))
	if err != nil {
		t.Fatalf("seekable input: %v", err)
	}
	if b, err := audio.ReadAll(context.Background(), d); err != nil || b.Frames() != 300 {
		t.Fatalf("fallback decoded %d frames, %v", b.Frames(), err)
	}
	// Without Seek the stream cannot be replayed: the refusal stands.
	if _, err := audio.Decode(context.Background(), io.MultiReader(bytes.NewReader(data))); !errors.Is(err, audio.ErrUnsupported) {
		t.Fatalf("non-seekable input: err = %v, want ErrUnsupported", err)
	}
}

func rawFile(misuse byte, frames int) []byte {
	b := audiotest.Noise(2, frames, 0.5, 7)
	out := append([]byte("RAWTEST"), misuse)
	pcm := make([]byte, frames*8)
	audio.EncodePCM(pcm, b, 0, frames, audio.Float32)
	return append(out, pcm...)
}

func TestDecodePicksCodecByContentAndPassesContract(t *testing.T) {
	data := rawFile(' ', 5000)
	audiotest.CheckSource(t, func() audio.Source {
		d, err := audio.Decode(context.Background(), bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
	// A non-seekable reader works too: the sniffed head is replayed.
	d, err := audio.Decode(context.Background(), io.MultiReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := audio.ReadAll(context.Background(), d)
	if err != nil || got.Frames() != 5000 {
		t.Fatalf("non-seekable decode: %d frames, %v", got.Frames(), err)
	}
}

func TestDecodeUnknownFormat(t *testing.T) {
	_, err := audio.Decode(context.Background(), strings.NewReader("definitely not audio"))
	if !errors.Is(err, audio.ErrUnknownFormat) && !errors.Is(err, audio.ErrCodecUnavailable) && !errors.Is(err, audio.ErrMalformed) {
		t.Fatalf("err = %v, want ErrUnknownFormat (or a fallback codec's refusal)", err)
	}
	if _, err := audio.Decode(context.Background(), strings.NewReader("")); !errors.Is(err, audio.ErrMalformed) {
		t.Fatalf("empty input: err = %v, want ErrMalformed", err)
	}
}

func TestDecoderPanicBecomesError(t *testing.T) {
	pd, err := audio.Decode(context.Background(), bytes.NewReader(rawPanicFile()))
	if err != nil {
		t.Fatal(err)
	}
	n, err := pd.Read(audio.NewBuffer(2, 16))
	if n != 0 || !errors.Is(err, audio.ErrMalformed) {
		t.Fatalf("Read = %d, %v; want 0, ErrMalformed", n, err)
	}
	if _, err2 := pd.Read(audio.NewBuffer(2, 16)); !errors.Is(err2, audio.ErrMalformed) {
		t.Fatalf("error not sticky: %v", err2)
	}
}

func rawPanicFile() []byte { return []byte("RAWTESTp") }

func TestDecoderDataWithEOFIsSplit(t *testing.T) {
	d, err := audio.Decode(context.Background(), bytes.NewReader([]byte("RAWTESTe")))
	if err != nil {
		t.Fatal(err)
	}
	buf := audio.NewBuffer(2, 8)
	if n, err := d.Read(buf); n != 1 || err != nil {
		t.Fatalf("first Read = %d, %v; want 1, nil", n, err)
	}
	if n, err := d.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("second Read = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestDecodeMaxDuration(t *testing.T) {
	d, err := audio.Decode(context.Background(), bytes.NewReader(rawFile(' ', 8000*3)), audio.WithMaxDuration(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = audio.ReadAll(context.Background(), d)
	if !errors.Is(err, audio.ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
}

func TestDecodeHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	d, err := audio.Decode(ctx, bytes.NewReader(rawFile(' ', 8000)))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := d.Read(audio.NewBuffer(2, 16)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCopyAndMultiSink(t *testing.T) {
	src := audio.NewBufferSource(audiotest.Sine(1, 8000, 440, 0.5, 10000), 8000)
	var a, b int
	sink := audio.MultiSink(
		audio.SinkFunc(func(x audio.Buffer) error { a += x.Frames(); return nil }),
		audio.SinkFunc(func(x audio.Buffer) error { b += x.Frames(); return nil }),
	)
	n, err := audio.Copy(context.Background(), sink, src)
	if err != nil || n != 10000 || a != 10000 || b != 10000 {
		t.Fatalf("Copy = %d, %v; sinks saw %d and %d", n, err, a, b)
	}
}

func ExampleCopy() {
	tone := audiotest.Sine(2, 48000, 1000, 0.5, 48000)
	var frames int
	var peak float64
	meter := audio.SinkFunc(func(b audio.Buffer) error {
		frames += b.Frames()
		for _, ch := range b {
			for _, v := range ch {
				peak = max(peak, v)
			}
		}
		return nil
	})
	if _, err := audio.Copy(context.Background(), meter, audio.NewBufferSource(tone, 48000)); err != nil {
		panic(err)
	}
	fmt.Printf("%d frames, peak %.2f\n", frames, peak)
	// Output: 48000 frames, peak 0.50
}
