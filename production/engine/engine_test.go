package engine_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// speechMP3 makes a 10 s stereo 44.1 kHz MP3 of synthetic speech
// (espeak-ng) at a low level, with ID3 tags that the production does not
// set itself. 10 s: what TestEngineEndToEnd checks (levels within 0.3
// LU, lengths to a codec frame, tags, chapters, side files) does not
// grow with the length, and its two runs of every output format cost
// about 0.3 s of CPU a second of input (20 s took 13.7 s of CPU).
func speechMP3(t *testing.T, dir string) string {
	t.Helper()
	need.Programs(t, "espeak-ng", "sox", "ffmpeg", "ffprobe")
	raw := filepath.Join(dir, "voice.wav")
	run(t, "espeak-ng", "-s", "150", "-w", raw,
		"Welcome to the audio post production test. This episode checks loudness, tags, chapters and every output format. "+
			"We talk for a while, pause, and talk again, so that the leveler and the loudness meter have real speech to work on.")
	wav := filepath.Join(dir, "speech.wav")
	run(t, "sox", "-R", raw, "-r", "44100", "-c", "2", wav, "repeat", "3", "trim", "0", "10", "gain", "-12") // -R: the same dither every run
	mp3 := filepath.Join(dir, "episode.mp3")
	run(t, "ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", "libmp3lame", "-b:a", "128k",
		"-metadata", "album=Imported Album", "-metadata", "title=File Title", "-y", mp3)
	return mp3
}

func coverPNG(t *testing.T, dir string) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for y := 0; y < 300; y++ {
		for x := 0; x < 400; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / 400), uint8(y * 255 / 300), 128, 255})
		}
	}
	path := filepath.Join(dir, "cover.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

func newProduction(t testing.TB, request string) *production.Production {
	t.Helper()
	in, err := production.DecodeInput([]byte(request))
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.UUID = "test-production"
	return p
}

type ffprobeOut struct {
	Format struct {
		Duration string            `json:"duration"`
		Tags     map[string]string `json:"tags"`
	} `json:"format"`
	Chapters []struct {
		StartTime string            `json:"start_time"`
		Tags      map[string]string `json:"tags"`
	} `json:"chapters"`
	Streams []ffStream `json:"streams"`
}

type ffStream struct {
	CodecType string            `json:"codec_type"`
	CodecName string            `json:"codec_name"`
	Channels  int               `json:"channels"`
	Tags      map[string]string `json:"tags"`
}

func probe(t *testing.T, path string) ffprobeOut {
	t.Helper()
	out := run(t, "ffprobe", "-v", "error", "-show_format", "-show_chapters", "-show_streams", "-of", "json", path)
	var p ffprobeOut
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// tag finds a tag case-insensitively in the format or first stream tags
// (Ogg keeps them on the stream).
func (p ffprobeOut) tag(key string) string {
	maps := []map[string]string{p.Format.Tags}
	for _, s := range p.Streams {
		maps = append(maps, s.Tags)
	}
	for _, m := range maps {
		for k, v := range m {
			if strings.EqualFold(k, key) {
				return v
			}
		}
	}
	return ""
}

func fileMD5(t *testing.T, path string) (string, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:]), int64(len(data))
}

// listDir returns the names in dir, hidden ones included.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

const e2eRequest = `{
	"input_file": "https://example.org/uploads/episode.mp3",
	"output_basename": "ep1",
	"metadata": {"title": "Test Episode", "artist": "Audiopost", "track": 3, "year": 2026, "genre": "Podcast"},
	"chapters": [
		{"start": "00:00:00", "title": "Welcome"},
		{"start": "00:00:03.750", "title": "Main part", "url": "https://example.org/main"},
		{"start": "00:00:07", "title": "Goodbye", "image": "https://example.org/bye.png"}
	],
	"algorithms": {"loudnesstarget": -16},
	"output_files": [
		{"format": "mp3"}, {"format": "aac"}, {"format": "flac"}, {"format": "wav"}, {"format": "opus"},
		{"format": "descr", "ending": "json"}, {"format": "stats", "ending": "json", "suffix": "_stats"},
		{"format": "chaps"}, {"format": "psc"}, {"format": "waveform"}
	]
}`

// codecFrame is one codec frame of each lossy format, the tolerance on
// decoded lengths.
var codecFrame = map[string]time.Duration{
	"mp3":  1152 * time.Second / 44100,
	"aac":  1024 * time.Second / 44100,
	"opus": 20 * time.Millisecond,
}

func TestEngineEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end sweep of every output format; the plain run covers it")
	}
	t.Parallel()
	tmp := t.TempDir()
	engineTemp := t.TempDir()
	input := speechMP3(t, tmp)
	cover := coverPNG(t, tmp)
	outDir := t.TempDir()
	if d := os.Getenv("KEEP_OUT"); d != "" {
		outDir = d
	}
	p := newProduction(t, e2eRequest)

	var statuses []production.Status
	progress := func(s production.Status, frac float64) {
		if frac < 0 || frac > 1 {
			t.Errorf("progress fraction %v outside [0, 1]", frac)
		}
		if len(statuses) == 0 || statuses[len(statuses)-1] != s {
			statuses = append(statuses, s)
		}
	}
	eng := &engine.Engine{TempDir: engineTemp}
	inputs := engine.Inputs{Main: input, Cover: cover, ChapterImages: map[string]string{"https://example.org/bye.png": cover}}
	res, err := eng.Run(context.Background(), p, inputs, engine.DirWriter{Dir: outDir}, progress)
	if err != nil {
		t.Fatalf("Run: %v (status %v, message %q)", err, p.Status, p.ErrorMessage)
	}
	if want := []production.Status{4, 5, 3}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	if p.Status != production.StatusDone || p.ErrorStatus != nil {
		t.Fatalf("status %v error_status %v", p.Status, p.ErrorStatus)
	}
	// Input properties and imported tags.
	if p.Format != "mp3" || p.Channels != 2 || p.SampleRate != 44100 || p.HasVideo {
		t.Errorf("input properties format=%q channels=%d samplerate=%d has_video=%v", p.Format, p.Channels, p.SampleRate, p.HasVideo)
	}
	if math.Abs(p.Bitrate-128) > 2 {
		t.Errorf("bitrate %v, want about 128", p.Bitrate)
	}
	if p.Metadata.Album != "Imported Album" || p.Metadata.Title != "Test Episode" {
		t.Errorf("metadata after import: album %q title %q", p.Metadata.Album, p.Metadata.Title)
	}
	if math.Abs(p.Length-10) > 0.1 {
		t.Errorf("length %v, want 10 s", p.Length)
	}
	if want := math.Ceil(p.Length) / 3600; math.Abs(p.UsedCredits.Combined-want) > 1e-9 {
		t.Errorf("used_credits %+v, want combined %v", p.UsedCredits, want)
	}
	checkStatistics(t, p.Statistics, -16)
	if img, format, err := image.Decode(strings.NewReader(string(res.Thumbnail))); err != nil || format != "png" || img.Bounds().Dx() != 200 || img.Bounds().Dy() != 200 {
		t.Errorf("thumbnail (%d bytes) does not decode as a 200x200 PNG: %q, %v", len(res.Thumbnail), format, err)
	}

	t.Logf("warning: %q", p.WarningMessage)
	names := checkOutputs(t, p, outDir, -16)
	checkSideFiles(t, p, outDir)
	// ffprobe shows no chapter URLs or pictures: read the MP3's CHAP frames.
	f, err := os.Open(filepath.Join(outDir, "ep1.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	chaps, err := id3.ReadChapters(f)
	f.Close()
	coverData, _ := os.ReadFile(cover)
	if err != nil || len(chaps) != 3 {
		t.Fatalf("mp3 CHAP frames %+v, %v", chaps, err)
	}
	if chaps[1].URL != "https://example.org/main" || chaps[1].Image != nil || chaps[0].Image != nil {
		t.Errorf("mp3 chapters 0 and 1: %+v %+v", chaps[0], chaps[1])
	}
	if c := chaps[2]; c.Title != "Goodbye" || c.Image == nil || c.Image.MIMEType != "image/png" || !bytes.Equal(c.Image.Data, coverData) {
		t.Errorf("mp3 chapter 2 %q has no picture or another one", c.Title)
	}
	if got := listDir(t, outDir); !slices.Equal(got, names) {
		t.Errorf("output directory holds %q, want exactly %q", got, names)
	}
	if left := listDir(t, engineTemp); len(left) > 0 {
		t.Errorf("temporary files left behind: %q", left)
	}

	// Change the production and run again: every file is replaced by a new
	// one under the same name; a reader of an old file keeps its content.
	oldMP3 := filepath.Join(outDir, "ep1.mp3")
	held, err := os.Open(oldMP3)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	oldSum := p.OutputFiles[0].Checksum
	in, _ := production.DecodeInput([]byte(`{"algorithms": {"loudnesstarget": -23}}`))
	if err := p.Apply(in, production.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), p, inputs, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if p.OutputFiles[0].Checksum == oldSum {
		t.Error("mp3 checksum unchanged after changing the loudness target")
	}
	checkStatistics(t, p.Statistics, -23)
	names2 := checkOutputs(t, p, outDir, -23)
	if !slices.Equal(names, names2) || !slices.Equal(listDir(t, outDir), names) {
		t.Errorf("second run wrote %q, want %q", listDir(t, outDir), names)
	}
	h := md5.New()
	if _, err := held.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := readAllInto(h, held); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != oldSum {
		t.Errorf("the old mp3, opened before the re-run, changed under its reader: md5 %s, was %s", got, oldSum)
	}
}

func readAllInto(h interface{ Write([]byte) (int, error) }, f *os.File) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err != nil {
			if err.Error() == "EOF" {
				return n, nil
			}
			return n, err
		}
	}
}

func checkStatistics(t *testing.T, s production.Statistics, target float64) {
	t.Helper()
	if s.Levels == nil {
		t.Fatal("no levels in statistics")
	}
	out := s.Levels.Output
	if math.Abs(out.Loudness.Value-target) > 0.5 || out.Loudness.Unit != production.UnitLUFS {
		t.Errorf("statistics output loudness %v, want %v LUFS", out.Loudness, target)
	}
	if out.Peak.Value > 0.1 || out.Peak.Unit != production.UnitDBTP {
		t.Errorf("statistics output peak %v, want at most maxpeak 0 dBTP (0.1 dB margin)", out.Peak)
	}
	in := s.Levels.Input.Loudness
	if in.Value > -20 || in.Value < -40 {
		t.Errorf("statistics input loudness %v, want the quiet input's level", in)
	}
	if g := out.GainMean.Value; math.Abs(g-(target-in.Value)) > 6 {
		t.Errorf("gain mean %v dB for input %v and target %v", g, in.Value, target)
	}
}

// checkOutputs checks the five audio outputs and returns the sorted names
// of every output file.
func checkOutputs(t *testing.T, p *production.Production, dir string, target float64) []string {
	t.Helper()
	var names []string
	for i, o := range p.OutputFiles {
		name := p.OutputFilename(i)
		names = append(names, name)
		path := filepath.Join(dir, name)
		sum, size := fileMD5(t, path)
		if o.Size == nil || *o.Size != size || o.Checksum != sum || o.SizeString != production.FormatSize(size) {
			t.Errorf("%s: size %v (%q) checksum %q; file has %d bytes, md5 %s", name, o.Size, o.SizeString, o.Checksum, size, sum)
		}
		f, _ := production.LookupFormat(o.Format)
		if f.Type != production.TypeLossy && f.Type != production.TypeLossless {
			continue
		}
		b, rate := testaudio.ReadFile(t, path)
		length := time.Duration(float64(b.Frames()) / float64(rate) * float64(time.Second))
		want := time.Duration(p.Length * float64(time.Second))
		tol := codecFrame[o.Format]
		if tol == 0 {
			tol = time.Second / time.Duration(rate) // lossless: exact to the frame
		}
		if d := length - want; d < -tol || d > tol {
			t.Errorf("%s: decoded length %v, want %v within one codec frame (%v)", name, length, want, tol)
		}
		r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
		if err != nil {
			t.Fatal(err)
		}
		// The chain hits the target within 0.1 LU; a lossy file is
		// re-rendered when it decodes more than 0.2 LU from the PCM.
		if math.Abs(r.Integrated-target) > 0.3 {
			t.Errorf("%s: integrated loudness %.2f LUFS, want %v ± 0.3", name, r.Integrated, target)
		}
		t.Logf("%s: %.2f LUFS, true peak %.2f dBTP, length %v", name, r.Integrated, r.TruePeak, length)
		// maxpeak is 0 dBTP (the default); lossy codecs may overshoot it
		// by 0.2 dB after decoding, PCM by the meter's 0.1 dB.
		if r.TruePeak > 0.2 {
			t.Errorf("%s: true peak %.2f dBTP above maxpeak 0 dBTP by more than the codec's overshoot", name, r.TruePeak)
		}
		pr := probe(t, path)
		for key, want := range map[string]string{"title": "Test Episode", "artist": "Audiopost", "album": "Imported Album"} {
			if got := pr.tag(key); got != want {
				t.Errorf("%s: tag %s = %q, want %q", name, key, got, want)
			}
		}
		if o.Format != "wav" { // RIFF INFO has no genre in ffprobe's view
			if got := pr.tag("genre"); got != "Podcast" {
				t.Errorf("%s: genre %q", name, got)
			}
		}
		if o.Format == "mp3" || o.Format == "aac" || o.Format == "opus" {
			checkChapters(t, name, pr)
		}
		if o.Format == "mp3" || o.Format == "aac" || o.Format == "flac" {
			hasCover := slices.ContainsFunc(pr.Streams, func(s ffStream) bool {
				return s.CodecType == "video" && (s.CodecName == "png" || s.CodecName == "mjpeg")
			})
			if !hasCover {
				t.Errorf("%s: no embedded cover picture", name)
			}
		}
	}
	slices.Sort(names)
	return names
}

func checkChapters(t *testing.T, name string, pr ffprobeOut) {
	t.Helper()
	want := []struct {
		start float64
		title string
	}{{0, "Welcome"}, {3.75, "Main part"}, {7, "Goodbye"}}
	if len(pr.Chapters) != len(want) {
		t.Errorf("%s: %d chapters, want %d", name, len(pr.Chapters), len(want))
		return
	}
	for i, c := range pr.Chapters {
		start, _ := strconv.ParseFloat(c.StartTime, 64)
		if math.Abs(start-want[i].start) > 0.03 || c.Tags["title"] != want[i].title {
			t.Errorf("%s: chapter %d at %v %q, want %v %q", name, i, start, c.Tags["title"], want[i].start, want[i].title)
		}
	}
}

func checkSideFiles(t *testing.T, p *production.Production, dir string) {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var descr struct {
		UUID        string `json:"uuid"`
		Metadata    struct{ Title, Album string }
		OutputFiles []struct {
			Checksum string `json:"checksum"`
		} `json:"output_files"`
		Statistics json.RawMessage `json:"statistics"`
	}
	if err := json.Unmarshal(read("ep1.json"), &descr); err != nil {
		t.Fatalf("descr json: %v", err)
	}
	if descr.UUID != p.UUID || descr.Metadata.Title != "Test Episode" || descr.Metadata.Album != "Imported Album" {
		t.Errorf("descr: %+v", descr)
	}
	if len(descr.OutputFiles) != len(p.OutputFiles) || descr.OutputFiles[0].Checksum != p.OutputFiles[0].Checksum {
		t.Errorf("descr output files do not carry the audio checksums")
	}
	var stats production.Statistics
	if err := json.Unmarshal(read("ep1.json"), &struct {
		S *production.Statistics `json:"statistics"`
	}{&stats}); err != nil {
		t.Fatal(err)
	}
	var statsFile production.Statistics
	if err := json.Unmarshal(read(p.OutputFilename(6)), &statsFile); err != nil {
		t.Fatalf("stats json: %v", err)
	}
	if statsFile.Levels == nil || statsFile.Levels.Output.Loudness != p.Statistics.Levels.Output.Loudness {
		t.Errorf("stats file output loudness differs from the production's")
	}
	chs, err := production.ParseChapters(string(read("ep1.chapters.txt")))
	if err != nil || len(chs) != 3 || chs[1].Start != 3750*time.Millisecond || chs[1].URL != "https://example.org/main" {
		t.Errorf("chaps file: %v %+v", err, chs)
	}
	var psc struct {
		Chapters []struct {
			Start string `xml:"start,attr"`
			Title string `xml:"title,attr"`
			Href  string `xml:"href,attr"`
		} `xml:"chapter"`
	}
	if err := xml.Unmarshal(read("ep1.psc"), &psc); err != nil || len(psc.Chapters) != 3 || psc.Chapters[2].Start != "00:00:07.000" || psc.Chapters[2].Title != "Goodbye" {
		t.Errorf("psc file: %v %+v", err, psc)
	}
	img, err := png.Decode(strings.NewReader(string(read("ep1.png"))))
	if err != nil {
		t.Fatalf("waveform: %v", err)
	}
	if img.Bounds().Dx() != artwork.WaveformWidth || img.Bounds().Dy() != artwork.WaveformHeight {
		t.Errorf("waveform is %v", img.Bounds())
	}
	// Speech fills the whole timeline: most columns have ink.
	inked := 0
	for x := 0; x < img.Bounds().Dx(); x++ {
		for y := 0; y < img.Bounds().Dy(); y++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0 && y != img.Bounds().Dy()/2 {
				inked++
				break
			}
		}
	}
	if inked < img.Bounds().Dx()/2 {
		t.Errorf("waveform has ink in %d of %d columns", inked, img.Bounds().Dx())
	}
}

func TestEngineCancel(t *testing.T) {
	tmp := t.TempDir()
	t.Parallel()
	engineTemp := t.TempDir()
	outDir := t.TempDir()
	var input string
	request := e2eRequest
	if testing.Short() {
		// The race run: a short WAV and one lossy and one lossless
		// encoder are enough to cancel concurrent encoding.
		input = filepath.Join(tmp, "episode.wav")
		testaudio.WriteWAV(t, input, testaudio.SpeechLike(44100, 6, 0.05), 44100)
		request = `{"input_file": "https://example.org/uploads/episode.wav", "output_files": [{"format": "mp3"}, {"format": "wav"}]}`
	} else {
		input = speechMP3(t, tmp)
	}
	p := newProduction(t, request)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last production.Status
	progress := func(s production.Status, frac float64) {
		last = s
		if s == production.StatusAudioEncoding && frac > 0.3 {
			cancel()
		}
	}
	_, err := (&engine.Engine{TempDir: engineTemp}).Run(ctx, p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, progress)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v, want context.Canceled", err)
	}
	if p.Status != production.StatusNotStarted || last != production.StatusNotStarted || p.ErrorStatus != nil {
		t.Errorf("status %v (last reported %v, error_status %v), want 10 without error", p.Status, last, p.ErrorStatus)
	}
	if left := listDir(t, outDir); len(left) > 0 {
		t.Errorf("cancelled run left files: %q", left)
	}
	if left := listDir(t, engineTemp); len(left) > 0 {
		t.Errorf("cancelled run left temporary files: %q", left)
	}
}

func TestEngineCorruptInput(t *testing.T) {
	dir := t.TempDir()
	outDir := t.TempDir()
	// A WAV header that claims zero channels.
	bad := []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x00\x00\x44\xac\x00\x00\x88\x58\x01\x00\x04\x00\x10\x00data\x00\x00\x00\x00")
	path := filepath.Join(dir, "broken.wav")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProduction(t, `{"input_file": "https://example.org/broken.wav", "output_files": [{"format": "wav"}, {"format": "chaps"}]}`)
	var statuses []production.Status
	_, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: path}, engine.DirWriter{Dir: outDir},
		func(s production.Status, _ float64) { statuses = append(statuses, s) })
	if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("Run = %v, want a malformed or unsupported input error", err)
	}
	if p.Status != production.StatusError || p.ErrorStatus == nil || *p.ErrorStatus != production.StatusAudioProcessing {
		t.Fatalf("status %v error_status %v, want 2 at 4", p.Status, p.ErrorStatus)
	}
	if !strings.HasPrefix(p.ErrorMessage, "input file: ") || strings.Contains(p.ErrorMessage, dir) {
		t.Errorf("error_message %q should name the input file, without server paths", p.ErrorMessage)
	}
	if statuses[len(statuses)-1] != production.StatusError {
		t.Errorf("progress saw %v, want the Error status last", statuses)
	}
	if left := listDir(t, outDir); len(left) > 0 {
		t.Errorf("failed run left files: %q", left)
	}
	t.Logf("error_message: %s", p.ErrorMessage)
}
