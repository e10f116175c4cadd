package spectral

import (
	"errors"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// stereoTest returns seconds of stereo material at rate: speech-like
// bursts of harmonics, pink noise and 50 Hz hum, different per channel.
func stereoTest(rate int, seconds float64) audio.Buffer {
	n := int(seconds * float64(rate))
	b := audio.NewBuffer(2, n)
	hum := testaudio.Hum(n, rate, 50, 300, 0.005)
	for c := range b {
		nz := testaudio.PinkNoise(n, 0.01, uint64(3+c))
		for i := range b[c] {
			t := float64(i) / float64(rate)
			v := 0.0
			if math.Mod(t, 1.3) < 0.8 { // a "phrase"
				f0 := 120 + 20*math.Sin(2*math.Pi*0.7*t)
				for h := 1.0; h <= 12 && h*f0 < 0.45*float64(rate); h++ {
					v += 0.05 / h * math.Sin(2*math.Pi*h*f0*t)
				}
				v *= math.Sin(math.Pi * math.Mod(t, 1.3) / 0.8)
			}
			b[c][i] = v*(1-0.3*float64(c)) + nz[i] + hum[i]
		}
	}
	return b
}

type nodeCase struct {
	name string
	open func(src audio.Source, p *Profile) (audio.Source, error)
}

func nodeCases() []nodeCase {
	den := func(s Settings, dehum *DehumOptions) func(audio.Source, *Profile) (audio.Source, error) {
		return func(src audio.Source, p *Profile) (audio.Source, error) {
			return NewDenoiser(src, DenoiserOptions{Settings: s, Profile: p, Dehum: dehum})
		}
	}
	return []nodeCase{
		{"classic", den(Settings{Method: Classic}, nil)},
		{"static+dehum", den(Settings{Method: Static}, &DehumOptions{})},
		{"dynamic+deverb+debreath", den(Settings{Method: Dynamic, DebreathDB: 12}, nil)},
		{"speech_isolation", den(Settings{Method: SpeechIsolation, DeverbDB: 12}, nil)},
		{"dynamic+wpe", func(src audio.Source, p *Profile) (audio.Source, error) {
			// A room given, so the WPE stage runs whatever the profile says.
			return NewDenoiser(src, DenoiserOptions{Settings: Settings{Method: Dynamic}, Profile: p, RT60: 0.7})
		}},
		{"music", den(Settings{Method: Music}, nil)},
		{"segments", func(src audio.Source, p *Profile) (audio.Source, error) {
			r := int64(src.Format().SampleRate)
			return NewDenoiser(src, DenoiserOptions{Settings: Settings{Method: Static}, Profile: p, Segments: []Segment{
				{Start: r, Settings: Settings{Method: Off}}, {Start: 2 * r, Settings: Settings{Method: Dynamic, DebreathDB: 6}}}})
		}},
		{"dehum-profile", func(src audio.Source, p *Profile) (audio.Source, error) {
			return NewDehum(src, DehumOptions{Profile: p})
		}},
		{"dehum-detect", func(src audio.Source, p *Profile) (audio.Source, error) { return NewDehum(src, DehumOptions{}) }},
		{"dehum-60", func(src audio.Source, p *Profile) (audio.Source, error) {
			return NewDehum(src, DehumOptions{Base: 60, ReductionDB: 12})
		}},
		{"debreath", func(src audio.Source, p *Profile) (audio.Source, error) {
			return NewDebreath(src, DebreathOptions{AmountDB: 12})
		}},
	}
}

// Every node honours the streaming contract, gives the same samples at
// every block size and exactly as many frames as it reads.
func TestNodesContract(t *testing.T) {
	in := stereoTest(fs, 3.3)
	p := analyse(t, in, ProfilerOptions{})
	for i, nc := range nodeCases() {
		if testing.Short() && i%2 == 1 {
			continue // half the cases; each node still runs in one of them
		}
		t.Run(nc.name, func(t *testing.T) {
			out := audiotest.CheckSource(t, func() audio.Source {
				s, err := nc.open(audio.NewBufferSource(in, fs), p)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
			if out.Frames() != in.Frames() {
				t.Errorf("%d frames out of %d in", out.Frames(), in.Frames())
			}
			// A short stream (shorter than any look-ahead) and an empty one.
			for _, n := range []int{0, 1, 100} {
				s, err := nc.open(audio.NewBufferSource(in.Slice(0, n), fs), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := testaudio.ReadAll(t, s); got.Frames() != n {
					t.Errorf("%d-frame stream gave %d frames", n, got.Frames())
				}
			}
		})
	}
}

// No node allocates per Read once running.
func TestNodesAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are meaningless under the race detector's -short runs")
	}
	in := stereoTest(fs, 8)
	p := analyse(t, in, ProfilerOptions{})
	for _, nc := range nodeCases() {
		s, err := nc.open(audio.NewBufferSource(in, fs), p)
		if err != nil {
			t.Fatal(err)
		}
		buf := audio.NewBuffer(2, 1000)
		for i := 0; i < 150; i++ { // past every look-ahead and detection
			if _, err := s.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := s.Read(buf); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per Read", nc.name, allocs)
		}
	}
}

// Every rate from 8 to 192 kHz works: the FFT size follows the rate, the
// output is finite and as long as the input, and the noise goes down.
func TestRates(t *testing.T) {
	rates := []int{8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000}
	if testing.Short() {
		rates = []int{8000, 44100, 192000}
	}
	for _, rate := range rates {
		in := stereoTest(rate, 1.5)
		p, err := NewProfiler(audio.Format{SampleRate: rate, Channels: 2}, ProfilerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Write(in)
		prof := p.Finish()
		for _, m := range []Method{Static, SpeechIsolation} {
			d, err := NewDenoiser(audio.NewBufferSource(in, rate), DenoiserOptions{Settings: Settings{Method: m, DebreathDB: 6}, Profile: prof, Dehum: &DehumOptions{}})
			if err != nil {
				t.Fatal(err)
			}
			out := testaudio.ReadAll(t, d)
			if out.Frames() != in.Frames() {
				t.Fatalf("%d Hz %s: %d frames out of %d", rate, m, out.Frames(), in.Frames())
			}
			for c := range out {
				for i, v := range out[c] {
					if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 4 {
						t.Fatalf("%d Hz %s: sample %d of channel %d is %v", rate, m, i, c, v)
					}
				}
			}
			if rate == 8000 || rate == 48000 || rate == 192000 {
				t.Logf("%6d Hz %-16s FFT %5d, hum %d Hz, in %.1f dBFS, out %.1f dBFS", rate, m, FFTSize(rate), prof.Hum.Base, testaudio.DB(in[0]), testaudio.DB(out[0]))
			}
		}
	}
}
