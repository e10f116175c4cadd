package classify

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestClassifierBlockSizes: what the Classifier finds does not depend on how
// the stream is cut into Writes, and channels are mixed, not picked.
func TestClassifierBlockSizes(t *testing.T) {
	p := makeProgramme(t, "speech:8", "music-testaudio:6")
	x := p.x
	y := testaudio.Scale(append([]float64(nil), x...), -1) // a polarity flip must not cancel
	y = testaudio.Add(testaudio.Scale(y, -1), testaudio.WhiteNoise(len(x), 1e-4, 3))
	f := audio.Format{SampleRate: testFS, Channels: 2}
	var ref *Result
	for i, bs := range []int{1, 17, 4096, len(x), 17, 4096, len(x)} {
		a, err := NewClassifier(f, Auto)
		if err != nil {
			t.Fatal(err)
		}
		if i >= 4 {
			a.Concurrent() // the spectral analysis in a goroutine: the same result
		}
		v := make(audio.Buffer, 2)
		for i := 0; i < len(x); i += bs {
			if err := a.Write(audio.Buffer{x, y}.SliceInto(v, i, min(len(x), i+bs))); err != nil {
				t.Fatal(err)
			}
		}
		r := a.Finish()
		if ref == nil {
			ref = r
			continue
		}
		if diff := cmp.Diff(ref.feats, r.feats, cmp.AllowUnexported(packed{}, featStore{})); diff != "" {
			t.Fatalf("block size %d: features differ:\n%.2000s", bs, diff)
		}
		if diff := cmp.Diff(ref.Segments, r.Segments); diff != "" {
			t.Errorf("block size %d: segments differ: %s", bs, diff)
		}
	}
	if err := ref.Cuts(CutOptions{}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestClassifierGrid: labels follow the dsp analysis grid at every sample
// rate (complete blocks, and a trailing partial block of at least a
// quarter block), sub-blocks cover every frame, and speech is found at
// every rate.
func TestClassifierGrid(t *testing.T) {
	rates := []int{8000, 11025, 22050, 44100, 48000, 96000}
	if testing.Short() {
		rates = []int{11025, 48000}
	}
	for _, fs := range rates {
		bl := BlockLen(fs)
		for _, extra := range []int{0, bl/4 - 1, bl / 4, bl - 1} {
			n := 3*fs + extra
			x := testaudio.WhiteNoise(n, 0.01, 1)
			a, err := NewClassifier(audio.Format{SampleRate: fs, Channels: 1}, Auto)
			if err != nil {
				t.Fatal(err)
			}
			a.Write(audio.Buffer{x})
			r := a.Finish()
			want := n / bl
			if rem := n % bl; rem >= bl/4 && rem > 0 {
				want++
			}
			if len(r.Labels) != want || len(r.Voiced) != want || len(r.NoiseFloor) != want {
				t.Errorf("%d Hz, %d frames: %d labels, want %d", fs, n, len(r.Labels), want)
			}
			if got := r.SubBlockStart(len(r.Activity)); got != int64(n) {
				t.Errorf("%d Hz, %d frames: sub-blocks end at %d", fs, n, got)
			}
			if r.SubBlockStart(len(r.Activity)-1) >= int64(n) {
				t.Errorf("%d Hz: an empty last sub-block", fs)
			}
		}
		// Speech at this rate: resample the 48 kHz phrases crudely by
		// linear interpolation (enough for a smoke test of the rates).
		x48, spans := testaudio.Phrases(t, testFS, testaudio.Sentences[:3], 1, testaudio.Voices[0])
		x := make([]float64, int(float64(len(x48))*float64(fs)/testFS))
		for i := range x {
			p := float64(i) * testFS / float64(fs)
			k := int(p)
			if k+1 < len(x48) {
				x[i] = x48[k] + (p-float64(k))*(x48[k+1]-x48[k])
			}
		}
		for i := range spans {
			spans[i].Start = int64(float64(spans[i].Start) * float64(fs) / testFS)
			spans[i].End = int64(float64(spans[i].End) * float64(fs) / testFS)
		}
		a, _ := NewClassifier(audio.Format{SampleRate: fs, Channels: 1}, Auto)
		a.Write(audio.Buffer{x})
		r := a.Finish()
		acc, _, _ := vadAccuracy(r, spans)
		music := 0
		for _, l := range r.Labels {
			if l == Music {
				music++
			}
		}
		t.Logf("%d Hz: VAD accuracy %.1f%%, %d music blocks", fs, 100*acc, music)
		if acc < 0.9 || music > 0 {
			t.Errorf("%d Hz: VAD accuracy %.1f%%, %d blocks of music", fs, 100*acc, music)
		}
	}
}

// TestClassifierRates: every rate audio accepts works, down to the least.
func TestClassifierRates(t *testing.T) {
	for _, fs := range []int{audio.MinSampleRate, 2000, 4000, 12000, 16000, 24000, 32000, 192000, audio.MaxSampleRate} {
		a, err := NewClassifier(audio.Format{SampleRate: fs, Channels: 1}, Auto)
		if err != nil {
			t.Fatalf("%d Hz: %v", fs, err)
		}
		x := testaudio.Add(testaudio.WhiteNoise(2*fs, 0.001, 1), make([]float64, 2*fs))
		for i := fs / 2; i < fs; i++ {
			x[i] += 0.3 * math.Sin(2*math.Pi*200*float64(i)/float64(fs)) * math.Sin(math.Pi*float64(i-fs/2)/float64(fs/2))
		}
		a.Write(audio.Buffer{x})
		r := a.Finish()
		if len(r.Labels) != 20 || r.Frames != int64(2*fs) {
			t.Errorf("%d Hz: %d labels over %d frames", fs, len(r.Labels), r.Frames)
		}
		if err := r.Cuts(CutOptions{Silence: true, Filler: true, Cough: true, Music: true}).Validate(); err != nil {
			t.Errorf("%d Hz: %v", fs, err)
		}
	}
}

func TestClassifierRejects(t *testing.T) {
	if _, err := NewClassifier(audio.Format{SampleRate: 10, Channels: 1}, Auto); err == nil {
		t.Error("10 Hz accepted")
	}
	if _, err := NewClassifier(audio.Format{SampleRate: testFS, Channels: 1}, Mode(9)); err == nil {
		t.Error("mode 9 accepted")
	}
	a, _ := NewClassifier(audio.Format{SampleRate: testFS, Channels: 2}, Auto)
	if err := a.Write(audio.NewBuffer(1, 10)); err == nil {
		t.Error("mono buffer written to a stereo analyzer")
	}
	r := a.Finish()
	if len(r.Labels) != 0 || len(r.Segments) != 0 || len(r.Cuts(CutOptions{Silence: true, TrimStart: 1})) != 0 {
		t.Errorf("empty stream: %d labels, %d segments", len(r.Labels), len(r.Segments))
	}
	if err := a.Write(audio.NewBuffer(2, 10)); err == nil {
		t.Error("Write after Finish accepted")
	}
}

// TestHumIsBackground: speech over steady hum keeps its pauses.
func TestHumIsBackground(t *testing.T) {
	x, spans := testaudio.Phrases(t, testFS, testaudio.Sentences[:4], 1, testaudio.Voices[1])
	for _, base := range []float64{50, 60} {
		y := testaudio.Add(x, testaudio.Hum(len(x), testFS, base, 1000, 0.01)) // -40 dBFS RMS
		r := analyse(t, y, Auto)
		acc, miss, fa := vadAccuracy(r, spans)
		t.Logf("%g Hz hum at -40 dBFS: accuracy %.1f%%, speech missed %.1f%%, pauses voiced %.1f%%", base, 100*acc, 100*miss, 100*fa)
		if acc < 0.9 {
			t.Errorf("%g Hz hum: VAD accuracy %.1f%%", base, 100*acc)
		}
	}
}

// Close stops a Concurrent analyzer's goroutine without Finish, and
// Write reports that it was closed.
func TestClassifierClose(t *testing.T) {
	f := audio.Format{SampleRate: testFS, Channels: 1}
	a, err := NewClassifier(f, Auto)
	if err != nil {
		t.Fatal(err)
	}
	a.Concurrent()
	x := testaudio.WhiteNoise(testFS, 0.1, 1)
	if err := a.Write(audio.Buffer{x}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close()
	if err := a.Write(audio.Buffer{x}); err == nil {
		t.Error("Write after Close succeeded")
	}
}
