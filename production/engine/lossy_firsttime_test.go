package engine

import (
	"context"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

// firstTimeFile is one programme of TestLossyFirstTime.
type firstTimeFile struct {
	name string
	rate int
	make func(t *testing.T, rate, n int) audio.Buffer
}

// firstTimeSeconds is the length of each programme.
const firstTimeSeconds = 10

// firstTimePlainSeconds is how much of each programme, from its start,
// TestLossyFirstTime encodes in the plain run (all firstTimeSeconds with
// AUDIOPOST_LONG=1): the programmes hold their character throughout
// (sox-synth repeats a half-second phrase, speech-loud-clipped clips in
// every sentence, speech-noisy is noisy everywhere), and the first
// encode's peaks and level are measured on each file whole.
const firstTimePlainSeconds = 5

// firstTimeFiles are ten programmes of firstTimeSeconds unlike the codec table's
// materials: speech in other voices and sentences, at normal, quiet and
// clipping levels, mono and stereo, over noise and hum, music alone and
// loud, speech over music, transients, and a sox synth arrangement.
var firstTimeFiles = []firstTimeFile{
	{"speech-stereo", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		x := speechFor(t, rate, n, 3, testaudio.Voices[4], 0.4)
		return audio.Buffer{x, testaudio.Scale(slices.Clone(x), 0.9)}
	}},
	{"speech-mono-quiet", 44100, func(t *testing.T, rate, n int) audio.Buffer {
		return audio.Buffer{testaudio.Add(speechFor(t, rate, n, 1, testaudio.Voices[5], 0.03), testaudio.PinkNoise(n, 1e-4, 21))}
	}},
	{"speech-loud-clipped", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		x := speechFor(t, rate, n, 4, testaudio.Voices[0], 3)
		for i, v := range x {
			x[i] = max(-0.99, min(0.99, v))
		}
		return audio.Buffer{x, slices.Clone(x)}
	}},
	{"music-stereo", 44100, func(t *testing.T, rate, n int) audio.Buffer {
		return audio.Buffer{testaudio.Scale(testaudio.Music(rate, firstTimeSeconds, 31), 0.5), testaudio.Scale(testaudio.Music(rate, firstTimeSeconds, 32), 0.5)}
	}},
	{"music-mono-loud", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		return audio.Buffer{testaudio.Scale(testaudio.Music(rate, firstTimeSeconds, 33), 1.6)}
	}},
	{"speech-noisy", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		x := speechFor(t, rate, n, 6, testaudio.Voices[2], 0.4)
		return audio.Buffer{testaudio.Add(x, testaudio.WhiteNoise(n, 0.02, 22)), testaudio.Add(x, testaudio.WhiteNoise(n, 0.02, 23))}
	}},
	{"speech-over-music", 44100, func(t *testing.T, rate, n int) audio.Buffer {
		x := speechFor(t, rate, n, 8, testaudio.Voices[1], 0.4)
		return audio.Buffer{
			testaudio.Add(x, testaudio.Scale(testaudio.Music(rate, firstTimeSeconds, 34), 0.25)),
			testaudio.Add(x, testaudio.Scale(testaudio.Music(rate, firstTimeSeconds, 35), 0.25)),
		}
	}},
	{"bursts", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		return noiseBursts(rate, n, 36)
	}},
	{"speech-mono-hum", 48000, func(t *testing.T, rate, n int) audio.Buffer {
		return audio.Buffer{testaudio.Add(speechFor(t, rate, n, 2, testaudio.Voices[3], 0.3), testaudio.Hum(n, rate, 50, 400, 0.01))}
	}},
	{"sox-synth", 44100, func(t *testing.T, rate, n int) audio.Buffer {
		return soxSynth(t, rate)
	}},
}

// firstTimeSweep is the programmes the plain run encodes: five of the
// ten, those nearest to the limits when the codec table was last
// measured (sox-synth decodes at +0.1 dBTP and its AAC rises the most,
// speech-loud-clipped is clipped, speech-noisy misses its level and is
// rendered again) beside a quiet mono and a loud mono one, both rates
// and channel counts; with AUDIOPOST_LONG=1 all ten. Each programme costs
// about 4.5 s of CPU in TestLossyFirstTime, most of it in ffmpeg (3.1 s on
// the plain run's firstTimePlainSeconds: the five 21.8 -> 15.6 s).
func firstTimeSweep() []firstTimeFile {
	if testsize.Long() {
		return firstTimeFiles
	}
	plain := []string{"speech-mono-quiet", "speech-loud-clipped", "music-mono-loud", "speech-noisy", "sox-synth"}
	var files []firstTimeFile
	for _, f := range firstTimeFiles {
		if slices.Contains(plain, f.name) {
			files = append(files, f)
		}
	}
	return files
}

// speechFor is n samples of espeak-ng sentences from first on in voice
// v, at gain g, repeated to the length.
func speechFor(t *testing.T, rate, n, first int, v testaudio.Voice, g float64) []float64 {
	var texts []string
	for i := range 4 {
		texts = append(texts, testaudio.Sentences[(first+i)%len(testaudio.Sentences)])
	}
	x, _ := testaudio.Phrases(t, rate, texts, 0.4, v)
	for len(x) < n {
		x = append(x, x...)
	}
	return testaudio.Scale(x[:n], g)
}

// soxSynth is 10 s of plucked chords and a kick-like thump from sox,
// stereo: sharp attacks and wide spectra unlike Music's.
func soxSynth(t *testing.T, rate int) audio.Buffer {
	sox := need.Program(t, "sox")
	path := filepath.Join(t.TempDir(), "synth.wav")
	// -R: pluck seeds its strings with noise, and 16-bit output is
	// dithered; both are random unless sox runs in repeatable mode.
	cmd := exec.Command(sox, "-R", "-n", "-r", "44100", "-c", "2", "-b", "16", path,
		"synth", "0.5", "pluck", "C3", "pluck", "E4", "pluck", "G4", "sine", "55", "fade", "0", "0.5", "0.45",
		"repeat", "19", "gain", "-n", "-2", "rate", "-v", "44100")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sox: %v\n%s", err, out)
	}
	b, _ := testaudio.ReadFile(t, path)
	return b
}

// TestLossyFirstTime runs ten varied programmes through the engine into
// MP3 (CBR and VBR), AAC, Opus and Vorbis at their default bitrates and
// counts those whose lossy outputs all met maxpeak on the first encode,
// with the headroom of the codec table: issue 19 asks for at least 9 of
// 10 (with AUDIOPOST_LONG=1; the plain run encodes five, firstTimeSweep, on
// their first firstTimePlainSeconds,
// and wants all five). Every finished file, decoded again, must be within
// lossyLevelTolerance (and 0.1 LU for the meter's gating) of the
// loudness target. How many also met their level (within lossyLevelTolerance of the
// PCM's loudness, with the table's compensation) is logged. Every finished file, decoded
// again, must meet maxpeak whatever it took.
func TestLossyFirstTime(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric sweep over ten productions")
	}
	// Self-contained (no Setenv): runs beside the other heavy engine tests.
	t.Parallel()
	needProgrammeTools(t)
	ctx := context.Background()
	formats := []string{"mp3", "mp3-vbr", "aac", "opus", "vorbis"}
	peakFirst, allFirst, rerendered := 0, 0, 0
	files := firstTimeSweep()
	for _, file := range files {
		in := file.make(t, file.rate, firstTimeSeconds*file.rate)
		if !testsize.Long() {
			for c := range in {
				in[c] = in[c][:firstTimePlainSeconds*file.rate]
			}
		}
		dir := t.TempDir()
		input := filepath.Join(dir, "in.wav")
		testaudio.WriteWAVBits(t, input, in, file.rate, 24)
		req := `{"input_file": "https://example.org/in.wav", "output_basename": "out", "output_files": [`
		for i, f := range formats {
			if i > 0 {
				req += ", "
			}
			req += `{"format": "` + f + `", "suffix": "-` + f + `"}`
		}
		p := newProductionFrom(t, req+`]}`)
		out := t.TempDir()
		proc := &countingProcessor{}
		eng := &Engine{Logger: slog.New(slog.DiscardHandler), Processor: proc}
		res, err := eng.Run(ctx, p, Inputs{Main: input}, DirWriter{Dir: out}, nil)
		if err != nil {
			t.Fatalf("%s: %v", file.name, err)
		}
		// Renders for the lossy verification come from Processed.Again,
		// which does not analyse the input again.
		if proc.calls != 1 {
			t.Errorf("%s: the processor ran %d times, want once (re-renders through Again)", file.name, proc.calls)
		}
		rerendered += res.LossyPasses
		alg := p.Algorithms.In(production.ScopeSingletrack)
		maxpeak, target := alg.Float("maxpeak"), float64(alg.Int("loudnesstarget"))
		worst := math.Inf(-1)
		for _, wf := range res.Files {
			got := measureFile(t, filepath.Join(out, wf.Name))
			worst = max(worst, got.TruePeak)
			if got.TruePeak > maxpeak+lossyTolerance {
				t.Errorf("%s: %s decodes at %.2f dBTP, maxpeak %.1f", file.name, wf.Name, got.TruePeak, maxpeak)
			}
			// The level a player hears: the encoder monitor's measurement,
			// which the level fixes follow, must agree with the file's.
			if d := got.Integrated - target; math.Abs(d) > lossyLevelTolerance+0.1 {
				t.Errorf("%s: %s decodes at %.2f LUFS, %+.2f LU from the target", file.name, wf.Name, got.Integrated, d)
			}
		}
		if res.LossyPeakMisses == 0 {
			peakFirst++
		}
		if res.LossyPasses == 0 {
			allFirst++
		}
		t.Logf("%-20s %d ch %d Hz: first encode missed maxpeak in %d outputs, the level in %d; worst decoded true peak %+.2f dBTP (maxpeak %.1f), outputs encoded again %d, warning %q",
			file.name, len(in), file.rate, res.LossyPeakMisses, res.LossyLevelMisses, worst, maxpeak, res.LossyReencoded, p.WarningMessage)
	}
	t.Logf("lossy outputs met maxpeak on the first encode for %d of %d programmes; met maxpeak and their level for %d",
		peakFirst, len(files), allFirst)
	if rerendered == 0 {
		t.Log("no programme was rendered again: Processed.Again was not exercised")
	}
	// One miss in ten: none among the plain run's five.
	if want := len(files) - len(files)/10; peakFirst < want {
		t.Errorf("lossy outputs met maxpeak on the first encode for %d of %d programmes, want at least %d", peakFirst, len(files), want)
	}
}

// needProgrammeTools skips t unless the tools that make the test
// programmes (espeak-ng, sox) and encode them (ffmpeg) are installed.
func needProgrammeTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ffmpeg", "espeak-ng", "sox"} {
		need.Program(t, tool)
	}
}

// newProductionFrom decodes and applies a production request.
func newProductionFrom(t *testing.T, req string) *production.Production {
	t.Helper()
	in, err := production.DecodeInput([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// measureFile decodes a file and measures its true peak and loudness.
func measureFile(t *testing.T, path string) loudness.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := audio.Decode(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := loudness.Measure(context.Background(), d, loudness.Options{Mode: loudness.ModeTruePeak | loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// countingProcessor is the ChainProcessor, counting its Process calls.
type countingProcessor struct{ calls int }

func (c *countingProcessor) Process(ctx context.Context, open audio.Opener, job ProcessJob) (*Processed, error) {
	c.calls++
	return ChainProcessor{}.Process(ctx, open, job)
}
