package classify

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Test signals beyond those of internal/testaudio: music made by sox and
// by a small synthesizer, fillers and coughs. All at testFS, mono.

const testFS = 48000

// span is a labelled range of frames, the truth tests measure against.
type span struct {
	start, end int
	label      string
}

var soxCache sync.Map

// soxMusic renders a piece with sox's synth: bars of plucked chords (or
// another waveform) with an arpeggio on top, bars barLen seconds long,
// looping a four-chord progression for the given seconds. kind selects
// the instrument: "pluck", "square" (a buzzy lead over a pad) or "piano"
// (pluck with sparse notes that decay into near silence).
func soxMusic(t testing.TB, kind string, seconds float64, seed int) []float64 {
	t.Helper()
	key := fmt.Sprintf("%s|%g|%d", kind, seconds, seed)
	if x, ok := soxCache.Load(key); ok {
		return append([]float64(nil), x.([]float64)...)
	}
	sox := need.Program(t, "sox")
	// Rendering spawns a sox per note: keep the result on disk, as
	// testaudio.Speech does, so only the first run of the tests pays.
	sum := sha256.Sum256([]byte("classify-soxmusic-v1|" + key))
	dir := testaudio.CacheDir()
	cache := filepath.Join(dir, hex.EncodeToString(sum[:8])+".f64")
	if data, err := os.ReadFile(cache); err == nil && len(data) > 0 && len(data)%8 == 0 {
		x := decodeF64(data)
		soxCache.Store(key, x)
		return append([]float64(nil), x...)
	}
	prog := [][3]int{{-9, -5, -2}, {-4, 0, 3}, {-7, -3, 0}, {-2, 2, 5}} // semitones from A440
	step := 0.25
	if kind == "piano" {
		step = 0.5
	}
	n := int(seconds / step)
	var args []string
	for i := 0; i < n; i++ {
		ch := prog[(i/8+seed)%len(prog)]
		mel := ch[(i*5+seed)%3] + 12*((i/3)%2)
		var spec []string
		switch kind {
		case "pluck", "piano":
			spec = []string{"-c", "4", "-p", "synth", ftoa(step),
				"pluck", "%" + strconv.Itoa(ch[0]-12), "pluck", "%" + strconv.Itoa(ch[1]), "pluck", "%" + strconv.Itoa(ch[2]),
				"pluck", "%" + strconv.Itoa(mel)}
			if kind == "piano" && i%4 == 3 && i < n-1 {
				spec = []string{"-c", "4", "-p", "synth", ftoa(step), "sine", "0", "sine", "0", "sine", "0", "sine", "0", "vol", "0"}
			}
		case "organ": // held out: never looked at while tuning
			spec = []string{"-c", "4", "-p", "synth", ftoa(step),
				"triangle", "%" + strconv.Itoa(ch[0]-12), "triangle", "%" + strconv.Itoa(ch[1]), "triangle", "%" + strconv.Itoa(ch[2]),
				"sine", "%" + strconv.Itoa(mel+12), "fade", "q", "0.02", ftoa(step), "0.02"}
		case "square":
			spec = []string{"-c", "4", "-p", "synth", ftoa(step),
				"sawtooth", "%" + strconv.Itoa(ch[0]-12), "sine", "%" + strconv.Itoa(ch[1]), "sine", "%" + strconv.Itoa(ch[2]),
				"square", "%" + strconv.Itoa(mel), "fade", "q", "0.01", ftoa(step), "0.03"}
		default:
			t.Fatalf("soxMusic: unknown kind %q", kind)
		}
		args = append(args, "|sox -n -r "+strconv.Itoa(testFS)+" "+joinArgs(spec))
	}
	args = append(args, "-t", "f64", "-c", "1", "-")
	if kind == "organ" {
		args = append(args, "reverb", "50", "tremolo", "5", "30")
	}
	cmd := exec.Command(sox, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sox: %v: %s", err, stderr.Bytes())
	}
	x := testaudio.Scale(decodeF64(stdout.Bytes()), 0.1/testaudio.RMS(decodeF64(stdout.Bytes())))
	if os.MkdirAll(dir, 0o755) == nil {
		b := make([]byte, 8*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		tmp := fmt.Sprintf("%s.%d.tmp", cache, os.Getpid())
		if os.WriteFile(tmp, b, 0o644) == nil {
			os.Rename(tmp, cache)
		}
	}
	soxCache.Store(key, x)
	return append([]float64(nil), x...)
}

func decodeF64(b []byte) []float64 {
	x := make([]float64, len(b)/8)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func joinArgs(s []string) string {
	var b bytes.Buffer
	for i, v := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v)
	}
	return b.String()
}

// beatMusic synthesizes a pop-like loop at 120 bpm: kick on every beat,
// snare on two and four, closed hi-hat on eighths, a bass line and a
// sustained pad, at about -20 dBFS.
func beatMusic(seconds float64, seed uint64) []float64 {
	fs := float64(testFS)
	n := int(seconds * fs)
	x := make([]float64, n)
	r := audiotest.NewRand(seed)
	chords := [][3]float64{{220, 261.6, 329.6}, {174.6, 220, 261.6}, {196, 246.9, 293.7}, {164.8, 196, 246.9}}
	var hp float64
	for i := range x {
		t := float64(i) / fs
		beat := t / 0.5
		bt := (beat - math.Floor(beat)) * 0.5 // seconds into the beat
		et := math.Mod(t, 0.25)
		bar := int(t / 2)
		ch := chords[(bar+int(seed))%len(chords)]
		v := 0.0
		for _, f := range ch {
			v += 0.02 * (math.Sin(2*math.Pi*f*t) + 0.5*math.Sin(4*math.Pi*f*t+0.3) + 0.25*math.Sin(6*math.Pi*f*t))
		}
		// Bass: root an octave down, plucked on every beat.
		v += 0.08 * math.Exp(-bt*4) * math.Sin(2*math.Pi*ch[0]/2*t)
		// Kick: falling sine.
		v += 0.3 * math.Exp(-bt*25) * math.Sin(2*math.Pi*(50+100*math.Exp(-bt*30))*bt)
		nz := r.Gauss()
		if int(beat)%2 == 1 { // snare
			v += 0.12 * math.Exp(-bt*18) * nz
		}
		hp = 0.6*hp + 0.4*nz
		v += 0.03 * math.Exp(-et*80) * (nz - hp) // hi-hat: high-passed noise
		x[i] = v
	}
	return testaudio.Scale(x, 0.1/testaudio.RMS(x))
}

// musicKinds are the music generators tests cycle through.
var musicKinds = []string{"testaudio", "pluck", "beat", "square", "piano"}

// makeMusic returns seconds of music of a kind (musicKinds, "organ"); the
// same music is made once per test binary and copied: TestSpeechMusic's
// programmes and TestMusicCutter's start with the same 25 s.
func makeMusic(t testing.TB, kind string, seconds float64, seed int) []float64 {
	key := fmt.Sprint(kind, seconds, seed)
	musicMade.Lock()
	x, ok := musicMade.m[key]
	musicMade.Unlock()
	if !ok {
		switch kind {
		case "testaudio":
			x = testaudio.Music(testFS, seconds, uint64(seed))
		case "beat":
			x = beatMusic(seconds, uint64(seed))
		default:
			x = soxMusic(t, kind, seconds, seed)
		}
		musicMade.Lock()
		musicMade.m[key] = x
		musicMade.Unlock()
	}
	return append([]float64(nil), x...)
}

var musicMade = struct {
	sync.Mutex
	m map[string][]float64
}{m: map[string][]float64{}}

// speechSegment returns about seconds of speech: sentences in turn with
// pauses of 0.4 to 1.2 s (the voice and sentence order depend on seed), and
// the spans of the sentences.
func speechSegment(t testing.TB, seconds float64, seed int) ([]float64, []audio.Span) {
	t.Helper()
	var out []float64
	var spans []audio.Span
	r := audiotest.NewRand(uint64(seed) + 99)
	v := testaudio.Voices[seed%len(testaudio.Voices)]
	lead := int((0.2 + 0.2*math.Abs(r.Float())) * testFS)
	out = make([]float64, lead)
	for i := 0; float64(len(out)) < seconds*testFS; i++ {
		s := testaudio.TrimSilence(testaudio.Speech(t, testFS, testaudio.Sentences[(i+seed*3)%len(testaudio.Sentences)], v), 1e-4)
		if rem := int(seconds*testFS) - len(out); len(s) > rem+testFS {
			break
		}
		spans = append(spans, audio.Span{Start: int64(len(out)), End: int64(len(out) + len(s))})
		out = append(out, s...)
		pause := 0.4 + 0.8*math.Abs(r.Float())
		out = append(out, make([]float64, int(pause*testFS))...)
	}
	return out, spans
}
