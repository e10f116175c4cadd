package engine

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"testing"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/loudness"
)

// LAME at constant bitrates up to 192 kb/s decodes about 0.45 dB below
// its input (the LAME in Debian 13 does); the probe must predict the loss
// on a tone it has not seen, and the compensated encoder keep its level
// within 0.1 LU.
func TestCodecGainCompensatesMP3(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric measurement; the plain run covers it")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	ctx := context.Background()
	f := audio.Format{Channels: 2, SampleRate: 48000}
	g, err := codecGainDB(ctx, "mp3", 96, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mp3 96 kb/s compensation %+.3f dB", g)

	// A signal the probe has not seen: 1 kHz at -18 dBFS for 5 s.
	n := 5 * f.SampleRate
	tone := audio.NewBuffer(2, n)
	for i := range n {
		v := 0.126 * math.Sin(2*math.Pi*1000*float64(i)/float64(f.SampleRate))
		tone[0][i], tone[1][i] = v, v
	}
	in, err := integrated(ctx, audio.NewBufferSource(tone, f.SampleRate))
	if err != nil {
		t.Fatal(err)
	}
	plain := encodeDecodeLoudness(t, tone, f, false)
	fixed := encodeDecodeLoudness(t, tone, f, true)
	t.Logf("input %.2f LUFS; decoded %.2f LUFS plain, %.2f LUFS compensated", in, plain, fixed)
	if loss := in - plain; math.Abs(loss-g) > 0.1 {
		t.Errorf("encoder loses %.2f LU on a 1 kHz tone, the probe predicted %.2f", loss, g)
	}
	if math.Abs(fixed-in) > 0.1 {
		t.Errorf("compensated mp3 decodes %.2f LUFS from a %.2f LUFS input", fixed, in)
	}
}

func encodeDecodeLoudness(t *testing.T, b audio.Buffer, f audio.Format, compensate bool) float64 {
	t.Helper()
	ctx := context.Background()
	var file bytes.Buffer
	enc, err := audio.NewEncoder(ctx, "mp3", &file, f, audio.EncodeOptions{Bitrate: 96})
	if err != nil {
		t.Fatal(err)
	}
	var sink audio.Sink = enc
	if compensate {
		g, _ := codecGainDB(ctx, "mp3", 96, f)
		sink = newGainSink(g, f.Channels, enc)
	}
	for off := 0; off < b.Frames(); off += audio.DefaultBlock {
		if err := sink.Write(b.Slice(off, min(off+audio.DefaultBlock, b.Frames()))); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := audio.Decode(ctx, bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	return res.Integrated
}
