package speech

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// SampleRate is the rate recognizers are fed: 16 kHz, the rate of
// PocketSphinx's models and the one whisper resamples to anyway.
const SampleRate = 16000

// Mono16k reads src to its end and returns it as 16-bit mono PCM at
// SampleRate: channels averaged, resampled by dsp.Resampler (pure Go),
// rounded and clipped. It holds the whole recording in memory, 32 kB per
// second (115 MB per hour). src is not closed.
func Mono16k(ctx context.Context, src audio.Source) ([]int16, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	var mono audio.Source = &downmix{src: src, buf: audio.NewBuffer(f.Channels, audio.DefaultBlock)}
	if f.SampleRate != SampleRate {
		r, err := dsp.NewResampler(noClose{mono}, SampleRate, dsp.ResampleOptions{Quality: dsp.ResampleMedium})
		if err != nil {
			return nil, err
		}
		mono = r
	}
	var out []int16
	buf := audio.NewBuffer(1, audio.DefaultBlock)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := mono.Read(buf)
		for _, x := range buf[0][:n] {
			out = append(out, toInt16(x))
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func toInt16(x float64) int16 {
	if math.IsNaN(x) {
		return 0
	}
	v := math.Round(x * 32768)
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}

// Duration returns the length of n samples at SampleRate.
func Duration(n int) time.Duration {
	return time.Duration(int64(n) * int64(time.Second) / SampleRate)
}

// noClose hides a Close method so that the resampler does not close the
// caller's source.
type noClose struct{ audio.Source }

// downmix averages the channels of src.
type downmix struct {
	src audio.Source
	buf audio.Buffer
}

func (d *downmix) Format() audio.Format {
	return audio.Format{SampleRate: d.src.Format().SampleRate, Channels: 1}
}

func (d *downmix) Read(dst audio.Buffer) (int, error) {
	if len(dst) != 1 {
		return 0, fmt.Errorf("%w: %d channels for a mono stream", audio.ErrFormatMismatch, len(dst))
	}
	want := min(dst.Frames(), d.buf.Frames())
	n, err := d.src.Read(d.buf.Slice(0, want))
	if n == 0 {
		return 0, err
	}
	g := 1 / float64(len(d.buf))
	out := dst[0][:n]
	copy(out, d.buf[0][:n])
	for c := 1; c < len(d.buf); c++ {
		for i, x := range d.buf[c][:n] {
			out[i] += x
		}
	}
	if len(d.buf) > 1 {
		for i := range out {
			out[i] *= g
		}
	}
	return n, nil
}

// WriteWAV writes samples as a 16-bit mono PCM WAV file at SampleRate.
func WriteWAV(w io.Writer, samples []int16) error {
	const header = 44
	data := len(samples) * 2
	if data > math.MaxUint32-header {
		return fmt.Errorf("%w: %s of audio is too long for a WAV file", audio.ErrUnsupported, Duration(len(samples)))
	}
	h := make([]byte, header)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(header-8+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], 1) // mono
	binary.LittleEndian.PutUint32(h[24:], SampleRate)
	binary.LittleEndian.PutUint32(h[28:], SampleRate*2)
	binary.LittleEndian.PutUint16(h[32:], 2)
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	if _, err := w.Write(h); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for _, s := range samples {
		buf = binary.LittleEndian.AppendUint16(buf, uint16(s))
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}
