package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
)

const probeSeed = `{"streams":[{"index":0,"codec_name":"mjpeg","codec_type":"video","disposition":{"attached_pic":1}},
{"index":1,"codec_name":"flac","codec_type":"audio","sample_rate":"44100","channels":2,"time_base":"1/44100",
"start_pts":0,"duration_ts":441000,"duration":"10.000000","bits_per_raw_sample":"24","tags":{"TITLE":"x","DATE":"2020-01-01"}}],
"chapters":[{"id":0,"start_time":"0.000000","tags":{"title":"a"}},{"id":1,"start_time":"5.5","tags":{"title":"b"}}],
"format":{"format_name":"flac","duration":"10.000000","size":"123456","bit_rate":"98765","tags":{"ARTIST":"y"}},
"packets":[{"stream_index":0,"size":"2048"}]}`

// checkInfo holds for every Info a successful probe returns.
func checkInfo(t *testing.T, info audio.Info) {
	t.Helper()
	if info.Channels <= 0 || info.SampleRate <= 0 || info.Format == "" {
		t.Fatalf("accepted Info without a usable stream: %+v", info)
	}
	for name, v := range map[string]float64{"length": info.Length, "bitrate": info.Bitrate} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s = %v", name, v)
		}
	}
	if info.Frames < -1 || info.Frames == 0 {
		t.Fatalf("Frames = %d, want -1 or a positive count", info.Frames)
	}
	if c := info.Tags.Cover; c != nil && c.Size < 0 {
		t.Fatalf("cover size %d", c.Size)
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(probeSeed))
	f.Add([]byte(`{"streams":[{"codec_type":"audio","codec_name":"pcm_s16le","sample_rate":"8000","channels":1,"duration_ts":-5,"time_base":"1/8000"}],"format":{"format_name":"wav"}}`))
	f.Add([]byte(`{"streams":[{"codec_type":"audio","codec_name":"opus","sample_rate":"48000","channels":2,"duration":"1e308","bit_rate":"NaN"}],"format":{"size":"-1"}}`))
	f.Add([]byte(`{"streams":[],"chapters":[{"id":-1,"start_time":"-3"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseProbe(data)
		if err != nil {
			if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnsupported) {
				t.Fatalf("error %v wraps no audio sentinel", err)
			}
			return
		}
		checkInfo(t, d.Info)
		for _, c := range d.Chapters {
			if c.Start < 0 {
				t.Fatalf("chapter at %v", c.Start)
			}
		}
	})
}

// FuzzProbe feeds arbitrary bytes to audio.Probe with ffmpeg as the only
// codec: ffprobe must never hang or crash the caller, and whatever it
// accepts must describe a usable stream.
func FuzzProbe(f *testing.F) {
	need.Programs(f, "ffmpeg", "ffprobe")
	for _, args := range [][]string{
		{"-c:a", "pcm_s16le", "-f", "wav"},
		{"-c:a", "libmp3lame", "-f", "mp3"},
		{"-c:a", "libvorbis", "-f", "ogg"},
		{"-c:a", "aac", "-f", "adts"},
		{"-c:a", "flac", "-f", "flac"},
	} {
		path := makeFile(f, "seed", append([]string{"-f", "lavfi", "-i", "sine=duration=0.1"}, args...)...)
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt "))
	f.Add([]byte("OggS\x00\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		info, err := audio.Probe(ctx, bytes.NewReader(data))
		if ctx.Err() != nil {
			t.Fatalf("probe of %d bytes did not finish in 20 s", len(data))
		}
		if err != nil {
			for _, s := range []error{audio.ErrMalformed, audio.ErrUnsupported, audio.ErrUnknownFormat} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no audio sentinel", err)
		}
		checkInfo(t, info)
	})
}
