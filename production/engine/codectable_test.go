package engine

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/format"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

var (
	updateCodecTable = flag.Bool("update-codec-table", false, "measure every configuration of the lossy codec table and rewrite codectable.go")
	checkCodecTable  = flag.Bool("codec-table-all", false, "check every format of the lossy codec table at its default bitrate, mono and stereo")
)

// Tolerances of TestCodecTable: how far ffmpeg may drift from the stored
// table before the table is stale.
const (
	tableLevelTolerance = 0.1
	tablePeakTolerance  = 0.2
)

// TestCodecTable measures what the lossy encoders do to the level and the
// true peak of processed programme material (tableMaterials through the
// default chain, at 44.1 and 48 kHz) and checks that codecTable still
// says so. It runs on request, since TestLossyFirstTime checks the table's
// purpose on every run: AUDIOPOST_CODEC_TABLE=1 checks the most common
// configuration (MP3 stereo at its default bitrate: about 8 s);
// -codec-table-all checks every format
// at its default bitrate, mono and stereo (about a minute), and
// -update-codec-table measures every row and rewrites codectable.go.
func TestCodecTable(t *testing.T) {
	if !*updateCodecTable && !*checkCodecTable && (testing.Short() || os.Getenv("AUDIOPOST_CODEC_TABLE") == "") {
		// TestLossyFirstTime checks what the table is for on every run;
		// this measures the installed ffmpeg against it.
		t.Skip("measures ffmpeg's codecs against the table: -codec-table-all, or AUDIOPOST_CODEC_TABLE=1 for the MP3 row")
	}
	// Self-contained (no Setenv): runs beside the other heavy engine tests.
	t.Parallel()
	needProgrammeTools(t)
	var keys []codecKey
	for _, name := range tableFormats {
		of, _ := production.LookupFormat(name)
		for _, kbps := range of.Bitrates {
			if !*updateCodecTable && kbps != of.DefaultBitrate {
				continue
			}
			for _, ch := range []int{1, 2} {
				if !*updateCodecTable && !*checkCodecTable && (name != "mp3" || ch != 2) {
					continue
				}
				if name == "vorbis" && ch == 1 && kbps > 240 {
					// libvorbis has no mono mode above 240 kb/s: ffmpeg
					// fails to open the encoder. No row: the engine's
					// fallback headroom applies.
					continue
				}
				keys = append(keys, codecKey{name, kbps, ch})
			}
		}
	}
	got := measureCodecRows(t, keys)
	if *updateCodecTable {
		writeCodecTable(t, got)
		return
	}
	for _, row := range got {
		want, ok := lookupCodecRow(row.format, row.kbps, row.channels)
		if !ok {
			t.Errorf("%s %d kb/s %d ch: not in the table", row.format, row.kbps, row.channels)
			continue
		}
		t.Logf("%-7s %3d kb/s %d ch: level %+.2f dB (table %+.2f), peak %+.2f dB (table %+.2f)",
			row.format, row.kbps, row.channels, row.level, want.level, row.peak, want.peak)
		if math.Abs(row.level-want.level) > tableLevelTolerance || math.Abs(row.peak-want.peak) > tablePeakTolerance {
			t.Errorf("%s %d kb/s %d ch: ffmpeg now changes the level by %+.2f dB and the true peak by %+.2f dB, the table says %+.2f and %+.2f: regenerate it (see codectable.go)",
				row.format, row.kbps, row.channels, row.level, row.peak, want.level, want.peak)
		}
	}
}

// tableFormats are the lossy formats of the table.
var tableFormats = []string{"mp3", "mp3-vbr", "aac", "opus", "vorbis"}

// tableMaterials are 30 s programmes at rate, stereo, for the codec
// table: speech in two voices over a quiet room, speech over hiss,
// music, speech over music, and noise bursts. Mono rows use their
// mixdowns. They are not the files TestLossyFirstTime checks the table
// against.
func tableMaterials(t *testing.T, rate int) map[string]audio.Buffer {
	n := 30 * rate
	fit := func(x []float64) []float64 {
		for len(x) < n {
			x = append(x, x...)
		}
		return x[:n]
	}
	speech := func(first int, v testaudio.Voice) []float64 {
		var texts []string
		for i := range 6 {
			texts = append(texts, testaudio.Sentences[(first+i)%len(testaudio.Sentences)])
		}
		x, _ := testaudio.Phrases(t, rate, texts, 0.5, v)
		return fit(testaudio.Scale(x, 0.5))
	}
	m := map[string]audio.Buffer{}
	a := testaudio.Add(speech(0, testaudio.Voices[0]), testaudio.PinkNoise(n, 1e-3, 1))
	m["speech-a"] = audio.Buffer{a, testaudio.Add(testaudio.Scale(slices.Clone(a), 0.8), testaudio.PinkNoise(n, 1e-3, 2))}
	b := speech(5, testaudio.Voices[1])
	m["speech-b"] = audio.Buffer{b, slices.Clone(b)}
	h := speech(2, testaudio.Voices[3])
	m["speech-hiss"] = audio.Buffer{testaudio.Add(h, testaudio.WhiteNoise(n, 3e-3, 3)), testaudio.Add(h, testaudio.WhiteNoise(n, 3e-3, 4))}
	m["music"] = audio.Buffer{testaudio.Music(rate, 30, 3), testaudio.Music(rate, 30, 9)}
	sm := testaudio.Add(speech(7, testaudio.Voices[2]), testaudio.Scale(testaudio.Music(rate, 30, 5), 0.3))
	m["speech-music"] = audio.Buffer{sm, slices.Clone(sm)}
	m["bursts"] = noiseBursts(rate, n, 11)
	return m
}

// noiseBursts is stereo low-passed noise in bursts of random length and
// level with quiet pauses: programme-like transients.
func noiseBursts(rate, n int, seed uint64) audio.Buffer {
	r := audiotest.NewRand(seed)
	out := audio.NewBuffer(2, n)
	var lp [2]float64
	for i := 0; i < n; {
		k := int((0.2 + 2*r.Float()) * float64(rate))
		amp := math.Pow(10, (-30+24*r.Float())/20)
		if r.Float() < 0.2 {
			amp *= 0.01
		}
		for j := 0; j < k && i < n; j, i = j+1, i+1 {
			env := math.Sin(math.Pi * float64(j) / float64(k))
			for c := range lp {
				lp[c] = 0.7*lp[c] + 0.3*r.Gauss()
				out[c][i] = amp * env * lp[c]
			}
		}
	}
	return out
}

// monoMix is the mean of the channels, as monoSink makes it.
func monoMix(b audio.Buffer) audio.Buffer {
	m := make([]float64, b.Frames())
	for _, ch := range b {
		for i, v := range ch {
			m[i] += v / float64(len(b))
		}
	}
	return audio.Buffer{m}
}

// codecKey is one encoder configuration; channels are 1 or 2.
type codecKey struct {
	format         string
	kbps, channels int
}

// measureCodecRows renders every table material and measures each
// configuration of keys on it (through the encoder's monitor, as the
// engine does), two encoders at a time.
func measureCodecRows(t *testing.T, keys []codecKey) []codecRow {
	ctx := context.Background()
	type effect struct{ level, peak float64 }
	effects := map[codecKey][]effect{}
	var mu sync.Mutex
	for _, rate := range []int{44100, 48000} {
		mats := tableMaterials(t, rate)
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range mats {
				if !yield(k) {
					return
				}
			}
		}) {
			for _, ch := range []int{1, 2} {
				if !slices.ContainsFunc(keys, func(k codecKey) bool { return k.channels == ch }) {
					continue // no row to measure: skip the render
				}
				in := mats[name]
				if ch == 1 {
					in = monoMix(in)
				}
				render, ref := renderDefault(t, in, rate)
				sem := make(chan struct{}, runtime.GOMAXPROCS(0))
				var wg sync.WaitGroup
				for _, k := range keys {
					if k.channels != ch {
						continue
					}
					wg.Add(1)
					sem <- struct{}{}
					go func() {
						defer func() { <-sem; wg.Done() }()
						got, err := encodedLoudness(ctx, k.format, k.kbps, render, rate)
						if err != nil {
							t.Errorf("%s %d kb/s on %s: %v", k.format, k.kbps, name, err)
							return
						}
						mu.Lock()
						effects[k] = append(effects[k], effect{got.Integrated - ref.Integrated, got.TruePeak - ref.TruePeak})
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
		}
	}
	var rows []codecRow
	for _, k := range keys {
		es := effects[k]
		if len(es) == 0 {
			continue
		}
		levels := make([]float64, len(es))
		peak := math.Inf(-1)
		for i, e := range es {
			levels[i] = e.level
			peak = max(peak, e.peak)
		}
		slices.Sort(levels)
		level := levels[len(levels)/2]
		if len(levels)%2 == 0 {
			level = (levels[len(levels)/2-1] + levels[len(levels)/2]) / 2
		}
		// The engine compensates the level before encoding, which moves
		// the peaks by as much.
		rows = append(rows, codecRow{format: k.format, kbps: k.kbps, channels: k.channels, level: round2(level), peak: round2(peak - level)})
	}
	return rows
}

// renderDefault processes in with the default single-track algorithms
// and no lossy headroom, and returns the render and its loudness.
func renderDefault(t *testing.T, in audio.Buffer, rate int) (audio.Buffer, loudness.Result) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "in.wav")
	testaudio.WriteWAVBits(t, path, in, rate, 24)
	p := newTestProduction(t)
	settings, err := SettingsOf(p)
	if err != nil {
		t.Fatal(err)
	}
	job := ProcessJob{Settings: settings}
	open := func(ctx context.Context) (audio.Source, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		d, err := audio.Decode(ctx, f)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &closingDecoder{Decoder: d, f: f}, nil
	}
	pr, err := ChainProcessor{}.Process(ctx, open, job)
	if err != nil {
		t.Fatal(err)
	}
	render, err := audio.ReadAll(ctx, pr.Source)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := loudness.MeasureBuffer(render, rate, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	if err != nil {
		t.Fatal(err)
	}
	return render, ref
}

// encodedLoudness encodes b and measures the decoded audio through the
// encoder's monitor.
func encodedLoudness(ctx context.Context, format string, kbps int, b audio.Buffer, rate int) (loudness.Result, error) {
	f := audio.Format{SampleRate: rate, Channels: len(b)}
	meter, err := loudness.NewMeter(f, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	if err != nil {
		return loudness.Result{}, err
	}
	enc, err := audio.NewEncoder(ctx, format, io.Discard, f, audio.EncodeOptions{Bitrate: kbps, Monitor: meter})
	if err != nil {
		return loudness.Result{}, err
	}
	if err := enc.Write(b); err != nil {
		enc.Close()
		return loudness.Result{}, err
	}
	if err := enc.Close(); err != nil {
		return loudness.Result{}, err
	}
	return meter.Result(), nil
}

func newTestProduction(t *testing.T) *production.Production {
	t.Helper()
	in, err := production.DecodeInput([]byte(`{"output_files": [{"format": "wav"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeCodecTable rewrites codectable.go with rows.
func writeCodecTable(t *testing.T, rows []codecRow) {
	version := "ffmpeg"
	if out, err := exec.Command("ffmpeg", "-version").Output(); err == nil {
		version, _, _ = strings.Cut(string(out), "\n")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `// Code generated by TestCodecTable; DO NOT EDIT.

package engine

// codecTable is what each lossy encoder configuration does to processed
// programme material (see codecRow), measured with %s.
// Regenerate it, when TestCodecTable finds ffmpeg changed, with
//
//	go test ./production/engine -run 'TestCodecTable$' -update-codec-table -timeout 2h
var codecTable = []codecRow{
`, strings.TrimSpace(version))
	for _, r := range rows {
		fmt.Fprintf(&b, "\t{%q, %d, %d, %.2f, %.2f},\n", r.format, r.kbps, r.channels, r.level, r.peak)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("codectable.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d rows to codectable.go", len(rows))
}
