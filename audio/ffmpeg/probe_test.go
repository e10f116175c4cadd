package ffmpeg

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
)

var tagArgs = []string{"-metadata", "title=Episode 1", "-metadata", "artist=The Host",
	"-metadata", "album=The Show", "-metadata", "genre=Podcast", "-metadata", "date=2024-03-05",
	"-metadata", "track=7/12", "-metadata", "comment=made in a test"}

func TestProbeFormats(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	// What ffprobe reports of each format: the probe runs no
	// goroutine of ours (TestProbeStreams and TestProbeUnknownContent
	// take it through the race detector).
	testsize.SkipRace(t, "numbers only, checked by the plain run")
	t.Parallel()
	sine := func(d, ch string) []string {
		return []string{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=" + d, "-ac", ch}
	}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cover := filepath.Join(t.TempDir(), "cover.jpg")
	if err := os.WriteFile(cover, testJPEG(t, 64, 48), 0o644); err != nil {
		t.Fatal(err)
	}
	coverSize := int(mustStat(t, cover).Size())

	cases := []struct {
		name, file string
		args       []string
		want       audio.Info
		kbps       float64 // expected bitrate, 0 to skip
		exact      bool    // Frames must be set
		tags       bool
	}{
		{name: "mp3", file: "a.mp3", args: join(sine("2", "2"), tagArgs, []string{"-c:a", "libmp3lame", "-b:a", "128k"}),
			want: audio.Info{Format: "mp3", Container: "mp3", Channels: 2, SampleRate: 44100, Length: 2}, kbps: 128, tags: true},
		{name: "aac", file: "a.m4a", args: join(sine("2", "1"), tagArgs, []string{"-c:a", "aac", "-b:a", "64k"}),
			want: audio.Info{Format: "aac", Container: "mp4", Channels: 1, SampleRate: 44100, Length: 2}, kbps: 64, tags: true},
		{name: "opus", file: "a.opus", args: join(sine("2", "2"), tagArgs, []string{"-c:a", "libopus", "-b:a", "48k"}),
			want: audio.Info{Format: "opus", Container: "ogg", Channels: 2, SampleRate: 48000, Length: 2}, kbps: 48, tags: true},
		{name: "vorbis", file: "a.ogg", args: join(sine("2", "2"), tagArgs, []string{"-c:a", "libvorbis", "-b:a", "80k"}),
			want: audio.Info{Format: "vorbis", Container: "ogg", Channels: 2, SampleRate: 44100, Length: 2}, tags: true},
		{name: "alac", file: "a.m4a", args: join(sine("2.5", "2"), tagArgs, []string{"-c:a", "alac"}),
			want: audio.Info{Format: "alac", Container: "mp4", Channels: 2, SampleRate: 44100, Length: 2.5, BitDepth: 16}, exact: true, tags: true},
		{name: "flac", file: "a.flac", args: join(sine("1.5", "1"), tagArgs, []string{"-c:a", "flac", "-sample_fmt", "s32"}),
			want: audio.Info{Format: "flac", Container: "flac", Channels: 1, SampleRate: 44100, Length: 1.5, BitDepth: 24}, exact: true, tags: true},
		{name: "wav24", file: "a.wav", args: join(sine("1", "2"), []string{"-c:a", "pcm_s24le"}),
			want: audio.Info{Format: "wav", Container: "wav", Channels: 2, SampleRate: 44100, Length: 1, BitDepth: 24}, exact: true, kbps: 44100 * 48 / 1000.0},
		{name: "video", file: "v.mp4", args: join([]string{"-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=2"}, sine("2", "2"),
			[]string{"-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k"}),
			want: audio.Info{Format: "aac", Container: "mp4", Channels: 2, SampleRate: 44100, Length: 2, HasVideo: true}, kbps: 96},
		{name: "mp3-cover", file: "c.mp3", args: join(sine("2", "1"), []string{"-i", cover, "-map", "0:a", "-map", "1:v", "-c:v", "copy",
			"-disposition:v", "attached_pic", "-c:a", "libmp3lame", "-b:a", "64k", "-id3v2_version", "3"}),
			want: audio.Info{Format: "mp3", Container: "mp3", Channels: 1, SampleRate: 44100, Length: 2}, kbps: 64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := makeFile(t, tc.file, tc.args...)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// The probe, and the cover's extraction after it, share one
			// ffprobe run.
			probes := WithProbes(context.Background(), new(Probes))
			d, err := ProbeDetails(probes, f)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Info
			if got.Format != tc.want.Format || got.Container != tc.want.Container || got.Channels != tc.want.Channels ||
				got.SampleRate != tc.want.SampleRate || got.HasVideo != tc.want.HasVideo || got.BitDepth != tc.want.BitDepth {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			// Lossy codecs pad to whole frames: allow 60 ms.
			if math.Abs(got.Length-tc.want.Length) > 0.06 {
				t.Errorf("length %.4f s, want %.4f", got.Length, tc.want.Length)
			}
			if tc.exact {
				if want := int64(math.Round(tc.want.Length * float64(tc.want.SampleRate))); got.Frames != want {
					t.Errorf("Frames = %d, want exactly %d", got.Frames, want)
				}
			} else if got.Frames != -1 {
				t.Errorf("Frames = %d, want -1 (estimate only)", got.Frames)
			}
			if tc.kbps > 0 && math.Abs(got.Bitrate-tc.kbps) > 0.25*tc.kbps {
				t.Errorf("bitrate %.1f kbps, want about %.0f", got.Bitrate, tc.kbps)
			}
			if tc.tags {
				want := audio.Tags{Title: "Episode 1", Artist: "The Host", Album: "The Show", Genre: "Podcast",
					Year: "2024", Track: "7", Comment: "made in a test"}
				if got.Tags != want {
					t.Errorf("tags %+v\nwant %+v", got.Tags, want)
				}
			}
			if tc.name == "mp3-cover" {
				c := got.Tags.Cover
				if c == nil || c.MIMEType != "image/jpeg" || c.Size != coverSize || d.CoverStream < 0 {
					t.Fatalf("cover = %+v (stream %d), want image/jpeg of %d bytes", c, d.CoverStream, coverSize)
				}
				pic, err := ExtractCoverFile(probes, path)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := os.ReadFile(cover)
				if !bytes.Equal(pic.Data, want) || pic.MIMEType != "image/jpeg" {
					t.Errorf("extracted cover: %d bytes %s, want the %d embedded bytes", len(pic.Data), pic.MIMEType, len(want))
				}
			} else {
				if got.Tags.Cover != nil {
					t.Errorf("cover %+v in a file without one", got.Tags.Cover)
				}
				if _, err := ExtractCoverFile(probes, path); !errors.Is(err, ErrNoCover) {
					t.Errorf("ExtractCoverFile = %v, want ErrNoCover", err)
				}
			}
			if tc.name == "video" && d.VideoCodec != "h264" {
				t.Errorf("VideoCodec = %q, want h264", d.VideoCodec)
			}
			decoderInfoAgrees(t, path, d.Info)
		})
	}
}

// decoderInfoAgrees checks that the Info of Decode, read from ffmpeg's
// description of the input where ffprobe did not run (see parseDump),
// is the probe's within that description's roundings: the length to
// 10 ms, the bitrate to whole kbps (Ogg's, which ffmpeg gives for the
// whole file, within 5%), no cover size, Frames -1 unless exact.
func decoderInfoAgrees(t *testing.T, path string, want audio.Info) {
	t.Helper()
	dec, err := Decode(context.Background(), openFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	got := dec.Info()
	if got.Format != want.Format || got.Container != want.Container || got.Channels != want.Channels ||
		got.SampleRate != want.SampleRate || got.HasVideo != want.HasVideo || got.BitDepth != want.BitDepth ||
		got.Tags.Title != want.Tags.Title || got.Frames != want.Frames {
		t.Errorf("decoder's Info %+v\nprobe's %+v", got, want)
	}
	if math.Abs(got.Length-want.Length) > 0.0051 {
		t.Errorf("decoder's length %.4f s, probe's %.4f", got.Length, want.Length)
	}
	if tol := max(1, 0.05*want.Bitrate); math.Abs(got.Bitrate-want.Bitrate) > tol {
		t.Errorf("decoder's bitrate %.3f kbps, probe's %.3f", got.Bitrate, want.Bitrate)
	}
	gt, wt := got.Tags, want.Tags
	if (gt.Cover == nil) != (wt.Cover == nil) || (gt.Cover != nil && gt.Cover.MIMEType != wt.Cover.MIMEType) {
		t.Errorf("decoder's cover %+v, probe's %+v", gt.Cover, wt.Cover)
	}
	gt.Cover, wt.Cover = nil, nil
	if gt != wt {
		t.Errorf("decoder's tags %+v\nprobe's %+v", gt, wt)
	}
}

func mustStat(t testing.TB, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestProbeStreams checks that probing works on readers that are not files:
// a ReadSeeker is rewound, a plain reader is consumed.
func TestProbeStreams(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	path := makeFile(t, "a.ogg", append([]string{"-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libvorbis"}, tagArgs...)...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rs := bytes.NewReader(data)
	info, err := Probe(context.Background(), rs)
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != "vorbis" || info.Tags.Title != "Episode 1" {
		t.Errorf("ReadSeeker probe: %+v", info)
	}
	if rs.Len() != len(data) {
		t.Errorf("ReadSeeker left at %d of %d, want rewound", len(data)-rs.Len(), len(data))
	}
	info, err = Probe(context.Background(), struct{ *bytes.Reader }{bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != "vorbis" || info.SampleRate != 44100 {
		t.Errorf("stream probe: %+v", info)
	}
}

func TestProbeUnknownContent(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	_, err := Probe(context.Background(), bytes.NewReader(bytes.Repeat([]byte("not audio at all "), 100)))
	if !errors.Is(err, audio.ErrUnknownFormat) {
		t.Fatalf("Probe(text) = %v, want ErrUnknownFormat", err)
	}
	// Through the registry, ffmpeg is the fallback for content no codec
	// matched; the error must say the same.
	_, err = audio.Probe(context.Background(), bytes.NewReader([]byte("#!/bin/sh\necho hi\n")))
	if !errors.Is(err, audio.ErrUnknownFormat) {
		t.Fatalf("audio.Probe(script) = %v, want ErrUnknownFormat", err)
	}
}

func TestParseProbe(t *testing.T) {
	const js = `{
	 "streams": [
	  {"index": 0, "codec_name": "png", "codec_type": "video", "disposition": {"attached_pic": 1}},
	  {"index": 1, "codec_name": "opus", "codec_type": "audio", "sample_rate": "48000", "channels": 2,
	   "time_base": "1/48000", "start_pts": 0, "duration_ts": 96312, "duration": "2.006500",
	   "tags": {"TITLE": "T", "ARTIST": "A", "DATE": "2021", "DESCRIPTION": "S", "TRACKNUMBER": "3", "COPYRIGHT": "CC-BY"}}
	 ],
	 "chapters": [
	  {"id": 1, "start_time": "0.000000", "tags": {"title": "One"}},
	  {"id": 2, "start_time": "61.500000", "tags": {"title": "Two"}}
	 ],
	 "format": {"format_name": "ogg", "duration": "2.006500", "size": "22000", "bit_rate": "87716"},
	 "packets": [{"stream_index": 0, "size": "10000"}]
	}`
	d, err := ParseProbe([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != "opus" || d.Container != "ogg" || d.Channels != 2 || d.SampleRate != 48000 || d.HasVideo || d.Frames != -1 {
		t.Errorf("info %+v", d.Info)
	}
	// The cover is a base64 comment in Ogg: (22000 - 4*ceil((10000+32+9)/3)) * 8 / 2.0065 s.
	if math.Abs(d.Bitrate-34.336) > 0.001 {
		t.Errorf("bitrate %.3f, want 34.336 (audio bytes only)", d.Bitrate)
	}
	wantTags := audio.Tags{Title: "T", Artist: "A", Year: "2021", Summary: "S", Track: "3", License: "CC-BY",
		Cover: d.Tags.Cover}
	if d.Tags != wantTags || d.Tags.Cover == nil || d.Tags.Cover.MIMEType != "image/png" || d.Tags.Cover.Size != 10000 {
		t.Errorf("tags %+v cover %+v", d.Tags, d.Tags.Cover)
	}
	if len(d.Chapters) != 2 || d.Chapters[1].Title != "Two" || d.Chapters[1].Start.Seconds() != 61.5 {
		t.Errorf("chapters %+v", d.Chapters)
	}
	for _, bad := range []string{``, `[]`, `{"streams": [{"codec_type": "video"}]}`,
		`{"streams": [{"codec_type": "audio", "channels": 0, "sample_rate": "44100"}]}`} {
		if _, err := ParseProbe([]byte(bad)); err == nil {
			t.Errorf("ParseProbe(%q) succeeded", bad)
		}
	}
}

func TestMissingFFmpeg(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx := context.Background()
	if _, err := Probe(ctx, bytes.NewReader([]byte("data"))); !errors.Is(err, audio.ErrCodecUnavailable) {
		t.Errorf("Probe: %v, want ErrCodecUnavailable", err)
	}
	if _, err := Decode(ctx, bytes.NewReader([]byte("data"))); !errors.Is(err, audio.ErrCodecUnavailable) {
		t.Errorf("Decode: %v, want ErrCodecUnavailable", err)
	}
	var out bytes.Buffer
	for _, name := range []string{"mp3", "aac", "opus"} {
		_, err := audio.NewEncoder(ctx, name, &out, audio.Format{SampleRate: 44100, Channels: 2}, audio.EncodeOptions{})
		if !errors.Is(err, audio.ErrCodecUnavailable) || !bytes.Contains([]byte(err.Error()), []byte(name)) {
			t.Errorf("NewEncoder(%s): %v, want ErrCodecUnavailable naming the format", name, err)
		}
	}
	if _, err := audio.Decode(ctx, bytes.NewReader([]byte("ID3 but nothing else"))); !errors.Is(err, audio.ErrCodecUnavailable) {
		t.Errorf("audio.Decode: %v, want ErrCodecUnavailable", err)
	}
}
