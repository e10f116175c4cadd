package ffmpeg

import (
	"errors"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// dumpOf is ffmpeg's stderr at -v level+info for an M4A file with a
// two-line title, a cover and a chapter, up to its stream mapping, with
// an error and a warning among the lines.
const dumpOf = `[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0c0a1b2c0] [warning] stream 1, timescale not set
[info] Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'file:/srv/in.m4a':
[info]   Metadata:
[info]     major_brand     : M4A 
[info]     title           : Hello
                    : World
[info]     artist          : A: B
[info]     date            : 2024-03-05
[info]   Duration: 01:02:03.45, start: 0.000000, bitrate: 147 kb/s
[info]   Chapters:
[info]     Chapter #0:0: start 0.000000, end 1.000000
[info]       Metadata:
[info]         title           : Not the title
[info]   Stream #0:0[0x1](und): Audio: aac (LC) (mp4a / 0x6134706D), 48000 Hz, stereo, fltp, 95 kb/s (default)
[info]     Metadata:
[info]       handler_name    : SoundHandler
[info]       comment         : from the stream
[info]   Stream #0:1[0x0]: Video: mjpeg (Baseline), yuvj420p(pc, bt470bg/unknown/unknown), 64x48 [SAR 1:1 DAR 4:3], 90k tbr, 90k tbn (attached pic)
[aac @ 0x55d0c0a1b2c0] [error] Invalid data
                    one more line of it
[info] Stream mapping:
[info]   Stream #0:0 -> #0:0 (aac (native) -> pcm_f64le (native))
`

func TestParseDump(t *testing.T) {
	w := newLevelWriter()
	// In pieces that cut lines, as a pipe delivers them.
	for s := dumpOf; s != ""; {
		n := min(len(s), 37)
		w.Write([]byte(s[:n]))
		s = s[n:]
	}
	select {
	case <-w.dumped:
	default:
		t.Fatal("the description's end (Stream mapping) not seen")
	}
	if got, want := w.errs.String(), "[aac @ 0x55d0c0a1b2c0] Invalid data\n                    one more line of it"; got != want {
		t.Errorf("errors %q, want %q", got, want)
	}
	d, err := parseDump(w.dump())
	if err != nil {
		t.Fatal(err)
	}
	want := audio.Info{Format: "aac", Container: "mp4", SampleRate: 48000, Length: 3723.45, Bitrate: 95, Frames: -1,
		Tags: audio.Tags{Title: "Hello\nWorld", Artist: "A: B", Year: "2024", Comment: "from the stream",
			Cover: &audio.Picture{MIMEType: "image/jpeg"}}}
	got := d.Info
	if got.Tags.Cover == nil || got.Tags.Cover.MIMEType != "image/jpeg" || got.Tags.Cover.Size != 0 {
		t.Errorf("cover %+v, want %+v", got.Tags.Cover, want.Tags.Cover)
	}
	got.Tags.Cover, want.Tags.Cover = nil, nil
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if d.CoverStream != 1 || d.HasVideo {
		t.Errorf("cover stream %d, video %v: want 1, false", d.CoverStream, d.HasVideo)
	}
}

func TestParseDumpFailures(t *testing.T) {
	if _, err := parseDump(nil); err != errNoDump {
		t.Errorf("no description: %v, want errNoDump", err)
	}
	lines := []dumpLine{{text: "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'file:v.mp4':"},
		{text: "  Duration: 00:00:01.00, start: 0.000000, bitrate: 70 kb/s"},
		{text: "  Stream #0:0[0x1](und): Video: h264 (High), yuv444p(progressive), 320x240, 61 kb/s, 25 fps (default)"}}
	if _, err := parseDump(lines); !errors.Is(err, audio.ErrUnsupported) || !strings.Contains(err.Error(), "no audio stream") {
		t.Errorf("video only: %v, want ErrUnsupported, no audio stream", err)
	}
}

// FuzzParseDump: ffmpeg's description of an input holds the input's own
// tags, so any text reaches the parser.
func FuzzParseDump(f *testing.F) {
	f.Add([]byte(dumpOf))
	f.Add([]byte("[info] Input #0, wav, from 'pipe:0':\n[info]   Duration: N/A, bitrate: N/A\n[info]   Stream #0:0: Audio: pcm_s24le, 44100 Hz, 2 channels, s32 (24 bit), 2116 kb/s\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newLevelWriter()
		w.Write(data)
		d, err := parseDump(w.dump())
		if err == nil && (d.Length < 0 || d.Bitrate < 0) {
			t.Errorf("negative length or bitrate: %+v", d.Info)
		}
	})
}
