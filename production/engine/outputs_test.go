package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func loudnessOf(b audio.Buffer, rate int) (float64, error) {
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		return 0, err
	}
	return r.Integrated, r.Err
}

func TestEngineSplitMonoIntro(t *testing.T) {
	if testing.Short() {
		t.Skip("output format sweep; the plain run covers it")
	}
	const rate = 48000
	dir := t.TempDir()
	outDir := t.TempDir()
	main := filepath.Join(dir, "main.wav")
	testaudio.WriteWAV(t, main, testaudio.SpeechLike(rate, 12, 0.1), rate)
	intro := filepath.Join(dir, "intro.wav")
	tone := audio.NewBuffer(1, 2*rate)
	for i := range tone[0] {
		tone[0][i] = 0.05 * math.Sin(2*math.Pi*440*float64(i)/rate)
	}
	testaudio.WriteWAV(t, intro, tone, rate)
	cover := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range cover.Pix {
		cover.Pix[i] = uint8(i)
	}
	cover.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, cover, nil); err != nil {
		t.Fatal(err)
	}
	coverPath := filepath.Join(dir, "cover.jpg")
	if err := os.WriteFile(coverPath, jb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	p := newProduction(t, `{
		"input_file": "https://example.org/show/main.wav", "output_basename": "ep",
		"metadata": {"title": "Split Show", "artist": "Tester"},
		"chapters": [{"start": "0", "title": "One"}, {"start": "4", "title": "Two"}, {"start": "8", "title": "Three"}],
		"multi_input_files": [{"type": "intro", "id": "jingle", "input_file": "https://example.org/jingle.wav", "offset": 0.5}],
		"output_files": [
			{"format": "wav", "split_on_chapters": true, "mono_mixdown": true},
			{"format": "flac", "mono_mixdown": true},
			{"format": "wav", "suffix": "-stereo"},
			{"format": "input", "suffix": "-orig"},
			{"format": "stats", "ending": "txt"},
			{"format": "descr", "ending": "yaml"},
			{"format": "descr", "ending": "xml", "suffix": "-d"},
			{"format": "image"}
		]}`)
	var statuses []production.Status
	res, err := (&engine.Engine{}).Run(context.Background(), p,
		engine.Inputs{Main: main, Multi: map[string]string{"jingle": intro}, Cover: coverPath},
		engine.DirWriter{Dir: outDir}, func(s production.Status, _ float64) {
			if len(statuses) == 0 || statuses[len(statuses)-1] != s {
				statuses = append(statuses, s)
			}
		})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []production.Status{4, 5, 7, 8, 3}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	if m := p.MultiInputFiles[0]; m.InputChannels != 1 || m.InputSampleRate != rate || math.Abs(m.InputLength-2) > 1e-9 || m.InputFiletype != "wav" {
		t.Errorf("intro properties %+v", m)
	}
	if math.Abs(p.Length-13.5) > 1e-9 {
		t.Errorf("length %v, want 13.5 (2 s intro overlapping 0.5 s + 12 s)", p.Length)
	}
	wantFiles := []string{"ep-01.wav", "ep-02.wav", "ep-03.wav", "ep-d.xml", "ep-orig.wav", "ep-stereo.wav", "ep.flac", "ep.jpg", "ep.txt", "ep.yaml"}
	if got := listDir(t, outDir); !slices.Equal(got, wantFiles) {
		t.Fatalf("files %q, want %q", got, wantFiles)
	}
	var listed []string
	for _, f := range res.Files {
		listed = append(listed, f.Name)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, wantFiles) {
		t.Errorf("Result lists %q", listed)
	}

	// The mono outputs are the mean of the channels.
	stereo, _ := testaudio.ReadFile(t, filepath.Join(outDir, "ep-stereo.wav"))
	full, _ := testaudio.ReadFile(t, filepath.Join(outDir, "ep.flac"))
	if len(stereo) != 2 || len(full) != 1 || full.Frames() != int(13.5*rate) || stereo.Frames() != full.Frames() {
		t.Fatalf("stereo wav has %d channels, %d frames; mono flac %d channels, %d frames; want 2 and 1 channels, %d frames",
			len(stereo), stereo.Frames(), len(full), full.Frames(), int(13.5*rate))
	}
	var diff float64
	for i, v := range full[0] {
		diff = math.Max(diff, math.Abs(v-(stereo[0][i]+stereo[1][i])/2))
	}
	if diff > 2.0/32768 {
		t.Errorf("mono mixdown differs from the channel mean by %v", diff)
	}

	// The parts split the output exactly at the chapters' output
	// positions (1.5 s of intro first) and join to the unsplit audio.
	bounds := []int{0, int(5.5 * rate), int(9.5 * rate), full.Frames()}
	o := p.OutputFiles[0]
	if o.Size != nil || o.Checksum != "" || len(o.Parts) != 3 {
		t.Fatalf("split output: size %v checksum %q parts %+v, want no file of its own and 3 parts", o.Size, o.Checksum, o.Parts)
	}
	for k, title := range []string{"One", "Two", "Three"} {
		name := filepath.Join(outDir, []string{"ep-01.wav", "ep-02.wav", "ep-03.wav"}[k])
		part, _ := testaudio.ReadFile(t, name)
		if part.Frames() != bounds[k+1]-bounds[k] {
			t.Errorf("part %d has %d frames, want %d", k+1, part.Frames(), bounds[k+1]-bounds[k])
			continue
		}
		for c := range part {
			for i, v := range part[c] {
				if math.Abs(v-full[c][bounds[k]+i]) > 1.5/32768 {
					t.Fatalf("part %d channel %d frame %d: %v, unsplit has %v", k+1, c, i, v, full[c][bounds[k]+i])
				}
			}
		}
		d, err := audio.Open(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		tags := d.Info().Tags
		d.Close()
		if tags.Title != title || tags.Track != []string{"1", "2", "3"}[k] || tags.Artist != "Tester" {
			t.Errorf("part %d tags %+v", k+1, tags)
		}
		sum, size := fileMD5(t, name)
		if pt := o.Parts[k]; pt.Filename != filepath.Base(name) || pt.Size != size || pt.Checksum != sum {
			t.Errorf("part %d listed as %+v; file %s has %d bytes, md5 %s", k+1, pt, filepath.Base(name), size, sum)
		}
	}
	// Every file written is listed as an output file of its own, with
	// its size and checksum.
	listedNames := map[string]bool{}
	for _, lo := range p.ListedOutputFiles() {
		listedNames[lo.Filename] = true
		if lo.Size == nil {
			t.Errorf("listed %s has no size", lo.Filename)
			continue
		}
		if sum, size := fileMD5(t, filepath.Join(outDir, lo.Filename)); *lo.Size != size || lo.Checksum != sum {
			t.Errorf("listed %s: size %d checksum %s; file %d bytes, md5 %s", lo.Filename, *lo.Size, lo.Checksum, size, sum)
		}
	}
	for _, f := range wantFiles {
		if !listedNames[f] {
			t.Errorf("%s written but not listed", f)
		}
	}
	if sum, _ := fileMD5(t, filepath.Join(outDir, "ep-orig.wav")); sum != mustMD5(t, main) {
		t.Error("input copy differs from the input")
	}
	if data, _ := os.ReadFile(filepath.Join(outDir, "ep.jpg")); !bytes.Equal(data, jb.Bytes()) {
		t.Error("image output is not the JPEG cover unchanged")
	}
	if _, format, err := image.DecodeConfig(bytes.NewReader(res.Thumbnail)); err != nil || format != "png" {
		t.Errorf("thumbnail of a JPEG cover: %q, %v (want a PNG: its name ends in .png)", format, err)
	}
	txt, _ := os.ReadFile(filepath.Join(outDir, "ep.txt"))
	if !strings.Contains(string(txt), "Output levels") || !strings.Contains(string(txt), "LUFS") {
		t.Errorf("stats text:\n%s", txt)
	}
	yml, _ := os.ReadFile(filepath.Join(outDir, "ep.yaml"))
	for _, want := range []string{"uuid: test-production\n", "  title: Split Show\n", "  - type: intro\n", "status: 3\n"} {
		if want == "  - type: intro\n" {
			want = "    type: intro\n"
		}
		if !strings.Contains(string(yml), want) {
			t.Errorf("descr yaml lacks %q", want)
		}
	}
	var descr struct {
		XMLName xml.Name
		Title   string   `xml:"metadata>title"`
		Formats []string `xml:"output_files>output_file>format"`
	}
	xd, _ := os.ReadFile(filepath.Join(outDir, "ep-d.xml"))
	if err := xml.Unmarshal(xd, &descr); err != nil || descr.XMLName.Local != "production" || descr.Title != "Split Show" || len(descr.Formats) != 10 {
		t.Errorf("descr xml: %v %+v", err, descr)
	}
}

func mustMD5(t *testing.T, path string) string {
	sum, _ := fileMD5(t, path)
	return sum
}

func TestEngineVideoAndAudiogram(t *testing.T) {
	if testing.Short() {
		t.Skip("output format sweep; the plain run covers it")
	}
	need.Programs(t, "ffmpeg", "ffprobe")
	const rate = 48000
	dir := t.TempDir()
	outDir := t.TempDir()
	if d := os.Getenv("KEEP_OUT"); d != "" {
		outDir = d
	}
	t.Parallel()
	engineTemp := t.TempDir()
	wav := filepath.Join(dir, "voice.wav")
	// 3 s: what is checked (streams, sizes, tags, length, loudness) does
	// not grow with the length, and the audiogram's frames cost (6 s took
	// 12.4 s of CPU).
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(rate, 3, 0.05), rate)
	video := filepath.Join(dir, "clip.mp4")
	run(t, "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3", "-i", wav,
		"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-b:a", "128k", "-shortest", "-y", video)
	p := newProduction(t, `{
		"input_file": "https://example.org/clip.mp4", "output_basename": "clip",
		"metadata": {"title": "Video Test"},
		"output_files": [{"format": "video"}, {"format": "audiogram", "suffix": "-gram"}]}`)
	cover := coverPNG(t, dir)
	if _, err := (&engine.Engine{TempDir: engineTemp}).Run(context.Background(), p, engine.Inputs{Main: video, Cover: cover}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !p.HasVideo || p.Format != "aac" {
		t.Errorf("input: has_video %v format %q", p.HasVideo, p.Format)
	}
	for _, tc := range []struct {
		name         string
		width, heigh int
	}{{"clip.mp4", 320, 240}, {"clip-gram.mp4", 640, 640}} {
		path := filepath.Join(outDir, tc.name)
		var pr struct {
			Streams []struct {
				CodecType string `json:"codec_type"`
				CodecName string `json:"codec_name"`
				Width     int    `json:"width"`
				Height    int    `json:"height"`
				Duration  string `json:"duration"`
			} `json:"streams"`
			Format struct {
				Tags map[string]string `json:"tags"`
			} `json:"format"`
		}
		if err := jsonUnmarshal(run(t, "ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path), &pr); err != nil {
			t.Fatal(err)
		}
		var v, a int
		for _, s := range pr.Streams {
			switch s.CodecType {
			case "video":
				v++
				if s.CodecName != "h264" || s.Width != tc.width || s.Height != tc.heigh {
					t.Errorf("%s: video stream %s %dx%d, want h264 %dx%d", tc.name, s.CodecName, s.Width, s.Height, tc.width, tc.heigh)
				}
			case "audio":
				a++
				if s.CodecName != "aac" {
					t.Errorf("%s: audio codec %s", tc.name, s.CodecName)
				}
			}
		}
		if v != 1 || a != 1 {
			t.Errorf("%s: %d video and %d audio streams, want 1 and 1", tc.name, v, a)
		}
		if pr.Format.Tags["title"] != "Video Test" {
			t.Errorf("%s: title tag %q", tc.name, pr.Format.Tags["title"])
		}
		b, r := testaudio.ReadFile(t, path)
		if d := float64(b.Frames()) / float64(r); math.Abs(d-p.Length) > 0.1 {
			t.Errorf("%s: audio %.3f s, production %.3f s", tc.name, d, p.Length)
		}
		res, err := loudnessOf(b, r)
		if err != nil || math.Abs(res+16) > 0.5 {
			t.Errorf("%s: loudness %.2f LUFS (%v), want -16", tc.name, res, err)
		}
	}
	if left := listDir(t, engineTemp); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// Lossy chapter parts go through ffmpeg one after the other.
func TestEngineSplitLossy(t *testing.T) {
	if testing.Short() {
		t.Skip("output format sweep; the plain run covers it")
	}
	need.Programs(t, "ffmpeg", "ffprobe")
	const rate = 44100
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 8, 0.05), rate)
	p := newProduction(t, `{"input_file": "https://example.org/talk.wav",
		"chapters": [{"start": "0", "title": "First"}, {"start": "5.25", "title": "Second", "image": "https://example.org/second.png"}],
		"output_files": [{"format": "mp3", "split_on_chapters": true, "mono_mixdown": true}]}`)
	chapterImage := coverPNG(t, dir)
	in := engine.Inputs{Main: input, ChapterImages: map[string]string{"https://example.org/second.png": chapterImage}}
	if _, err := (&engine.Engine{}).Run(context.Background(), p, in, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"talk-01.mp3", "talk-02.mp3"}
	if got := listDir(t, outDir); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	frame := 1152.0 / rate
	for i, name := range want {
		b, r := testaudio.ReadFile(t, filepath.Join(outDir, name))
		wantLen := []float64{5.25, 2.75}[i%2]
		if d := float64(b.Frames()) / float64(r); math.Abs(d-wantLen) > frame {
			t.Errorf("%s: %.4f s, want %.2f s within one MP3 frame", name, d, wantLen)
		}
		if len(b) != 1 {
			t.Errorf("%s: %d channels, want the mono mixdown", name, len(b))
		}
		pr := probe(t, filepath.Join(outDir, name))
		if got := pr.tag("title"); got != []string{"First", "Second"}[i%2] {
			t.Errorf("%s: title %q", name, got)
		}
		// The second chapter's picture is the cover of its parts; the
		// first chapter has none, and there is no production cover.
		pic, err := ffmpeg.ExtractCoverFile(context.Background(), filepath.Join(outDir, name))
		if i%2 == 1 {
			if want, _ := os.ReadFile(chapterImage); err != nil || !bytes.Equal(pic.Data, want) {
				t.Errorf("%s: cover is not the chapter's picture (%v)", name, err)
			}
		} else if !errors.Is(err, ffmpeg.ErrNoCover) {
			t.Errorf("%s: a cover (%v), want none", name, err)
		}
	}
}

// A video output of an audio-only input is rendered from the audio: the
// cover in a 1280x720 frame with the waveform, in the container of the
// output's ending, and it splits on chapters like audio does.
func TestEngineVideoFromAudio(t *testing.T) {
	if testing.Short() {
		t.Skip("renders videos")
	}
	need.Programs(t, "ffmpeg", "ffprobe")
	const rate = 48000
	dir, outDir := t.TempDir(), t.TempDir()
	t.Parallel()
	engineTemp := t.TempDir()
	wav := filepath.Join(dir, "voice.wav")
	// 2 s: the frames are the cost (3 s took 8.5 s of CPU, the VP8
	// encoder most), and what is checked (streams, frame size, each
	// part's length) does not grow with the length.
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(rate, 2, 0.05), rate)
	p := newProduction(t, `{"input_file": "https://example.org/voice.wav", "output_basename": "talk",
		"metadata": {"title": "Rendered"},
		"chapters": [{"start": "0", "title": "One"}, {"start": "0.8", "title": "Two"}],
		"output_files": [{"format": "video"}, {"format": "video", "ending": "webm", "split_on_chapters": true}]}`)
	if _, err := (&engine.Engine{TempDir: engineTemp}).Run(context.Background(), p, engine.Inputs{Main: wav, Cover: coverPNG(t, dir)}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if p.HasVideo {
		t.Error("a WAV input has no video")
	}
	if want := []string{"talk-01.webm", "talk-02.webm", "talk.mp4"}; !slices.Equal(listDir(t, outDir), want) {
		t.Fatalf("files %q, want %q", listDir(t, outDir), want)
	}
	for _, tc := range []struct {
		name, vcodec, acodec string
		seconds              float64
	}{{"talk.mp4", "h264", "aac", 2}, {"talk-01.webm", "vp8", "opus", 0.8}, {"talk-02.webm", "vp8", "opus", 1.2}} {
		pr := probe(t, filepath.Join(outDir, tc.name))
		var v, a int
		for _, s := range pr.Streams {
			switch {
			case s.CodecType == "video" && s.CodecName == tc.vcodec:
				v++
			case s.CodecType == "audio" && s.CodecName == tc.acodec:
				a++
			}
		}
		if v != 1 || a != 1 {
			t.Errorf("%s: %d %s video and %d %s audio streams, want one each", tc.name, v, tc.vcodec, a, tc.acodec)
		}
		b, r := testaudio.ReadFile(t, filepath.Join(outDir, tc.name))
		if d := float64(b.Frames()) / float64(r); math.Abs(d-tc.seconds) > 0.1 {
			t.Errorf("%s: %.3f s of audio, want %.1f", tc.name, d, tc.seconds)
		}
	}
	var dims struct {
		Streams []struct{ Width, Height int } `json:"streams"`
	}
	if err := jsonUnmarshal(run(t, "ffprobe", "-v", "error", "-select_streams", "v", "-show_streams", "-of", "json", filepath.Join(outDir, "talk.mp4")), &dims); err != nil {
		t.Fatal(err)
	}
	if len(dims.Streams) != 1 || dims.Streams[0].Width != 1280 || dims.Streams[0].Height != 720 {
		t.Errorf("video frame %+v, want 1280x720", dims.Streams)
	}
	if left := listDir(t, engineTemp); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestVorbisMonoBitrate: libvorbis has no mono mode above 240 kbps, so a
// mono programme asking for Vorbis at 320 is encoded at 240 with a warning
// naming the file, instead of failing.
func TestVorbisMonoBitrate(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	testsize.SkipRace(t, "an encoder's bitrate and a warning, checked by the plain run")
	const rate = 48000
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.1)[:1], rate) // mono
	p := newProduction(t, `{"input_file": "https://example.org/talk.wav", "output_basename": "ep",
		"output_files": [{"format": "vorbis", "bitrate": 320}, {"format": "vorbis", "bitrate": 160, "suffix": "-low"}]}`)
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(p.WarningMessage, "ep.ogg: bitrate 320 kbps lowered to 240 kbps") || strings.Contains(p.WarningMessage, "ep-low.ogg") {
		t.Errorf("warning %q, want one naming ep.ogg's lowered bitrate", p.WarningMessage)
	}
	if pr := probe(t, filepath.Join(outDir, "ep.ogg")); len(pr.Streams) == 0 || pr.Streams[0].Channels != 1 {
		t.Errorf("ep.ogg streams %+v, want one mono stream", pr.Streams)
	}
}
