package mixdown_test

import (
	"context"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Helpers of the mixdown tests: conversations whose truth is known, built
// from espeak-ng phrases placed on two or more microphones, each of which
// also picks up the others' voices through a synthetic room.

const fs = 48000

type span = audio.Span

// frames is the span [a, b) of slice indices.
func frames(a, b int) span { return span{Start: int64(a), End: int64(b)} }

// conversation places the phrases of each speaker in turn (speaker 0's
// first phrase, speaker 1's first phrase, ...) with gap seconds between
// turns, starting after lead seconds, and returns every speaker's clean
// track (as long as the whole conversation plus tail seconds) and the
// spans of its phrases.
func conversation(t testing.TB, texts [][]string, voices []testaudio.Voice, lead, gap, tail float64) ([][]float64, [][]span) {
	t.Helper()
	type turn struct {
		who int
		x   []float64
	}
	var turns []turn
	for k := 0; ; k++ {
		added := false
		for who := range texts {
			if k < len(texts[who]) {
				x := testaudio.TrimSilence(testaudio.Speech(t, fs, texts[who][k], voices[who]), 1e-4)
				turns = append(turns, turn{who, x})
				added = true
			}
		}
		if !added {
			break
		}
	}
	pos := int(lead * fs)
	spans := make([][]span, len(texts))
	starts := make([]int, len(turns))
	for i, tn := range turns {
		starts[i] = pos
		spans[tn.who] = append(spans[tn.who], frames(pos, pos+len(tn.x)))
		pos += len(tn.x) + int(gap*fs)
	}
	n := pos - int(gap*fs) + int(tail*fs)
	tracks := make([][]float64, len(texts))
	for i := range tracks {
		tracks[i] = make([]float64, n)
	}
	for i, tn := range turns {
		copy(tracks[tn.who][starts[i]:], tn.x)
	}
	return tracks, spans
}

// room returns x through a small room: the direct sound delayed by delay
// frames plus a Schroeder reverb (four feedback combs, two all-passes)
// with the given RT60, 10 dB under the direct sound.
func room(x []float64, delay int, rt60 float64) []float64 {
	n := len(x)
	y := make([]float64, n)
	combs := []float64{0.0297, 0.0371, 0.0411, 0.0437}
	wet := make([]float64, n)
	for _, d := range combs {
		m := int(d * fs)
		g := math.Pow(10, -3*d/rt60)
		buf := make([]float64, m)
		at := 0
		for i := range x {
			v := buf[at]
			buf[at] = x[i] + g*v
			at = (at + 1) % m
			wet[i] += v
		}
	}
	for _, d := range []float64{0.005, 0.0017} {
		m := int(d * fs)
		buf := make([]float64, m)
		at := 0
		for i := range wet {
			v := buf[at]
			u := wet[i] + 0.7*v
			buf[at] = u
			wet[i] = v - 0.7*u
			at = (at + 1) % m
		}
	}
	wg := math.Pow(10, -10.0/20) * testaudio.RMS(x) / math.Max(testaudio.RMS(wet), 1e-30)
	for i := range y {
		if i >= delay {
			y[i] = x[i-delay] + wg*wet[i-delay]
		}
	}
	return y
}

// microphones returns what each microphone records: its own speaker
// scaled by gainDB[k], every other speaker through the room at
// couplingDB below that speaker's level on its own microphone, and its
// own white noise at noiseDB dBFS.
func microphones(clean [][]float64, gainDB []float64, couplingDB, noiseDB float64) (mics [][]float64, bleed [][]float64) {
	n := len(clean[0])
	rooms := make([][]float64, len(clean))
	for h := range clean {
		rooms[h] = room(clean[h], 144, 0.4) // 3 ms, about a metre
	}
	for k := range clean {
		own := testaudio.Scale(append([]float64(nil), clean[k]...), math.Pow(10, gainDB[k]/20))
		bl := make([]float64, n)
		for h := range clean {
			if h == k {
				continue
			}
			r := rooms[h]
			g := math.Pow(10, (gainDB[h]+couplingDB)/20)
			for i := range bl {
				bl[i] += g * r[i]
			}
		}
		noise := testaudio.WhiteNoise(n, math.Pow(10, noiseDB/20), uint64(100+k))
		mic := make([]float64, n)
		for i := range mic {
			mic[i] = own[i] + bl[i] + noise[i]
		}
		mics = append(mics, mic)
		bleed = append(bleed, bl)
	}
	return mics, bleed
}

func monoSource(x []float64) audio.Source { return audio.NewBufferSource(audio.Buffer{x}, fs) }

func opener(b audio.Buffer) audio.Opener {
	return func(context.Context) (audio.Source, error) { return audio.NewBufferSource(b, fs), nil }
}

func analyse(t testing.TB, mics [][]float64, roles []mixdown.Role, offsets []int64) *mixdown.Analysis {
	t.Helper()
	var tracks []mixdown.Track
	for k, m := range mics {
		tr := mixdown.Track{Source: monoSource(m)}
		if roles != nil {
			tr.Role = roles[k]
		}
		if offsets != nil {
			tr.Offset = offsets[k]
		}
		tracks = append(tracks, tr)
	}
	an, err := mixdown.Analyze(context.Background(), tracks, mixdown.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return an
}

// spansDB is the RMS level in dB of x over spans (-Inf for silence).
func spansDB(x []float64, spans []span) float64 { return testaudio.SpanDB(x, spans) }

// applyGain returns x through the node that node makes, read in one go.
func applyGain(t testing.TB, x []float64, node func(audio.Source) audio.Source) []float64 {
	t.Helper()
	return testaudio.ReadAll(t, node(monoSource(x)))[0]
}

// loopSource plays a buffer over and over without allocating: the
// upstream of allocation tests and benchmarks.
type loopSource struct {
	buf audio.Buffer
	pos int
	end int64 // frames left; <0 endless
}

func (l *loopSource) Format() audio.Format { return audio.Format{SampleRate: fs, Channels: len(l.buf)} }

func (l *loopSource) Read(dst audio.Buffer) (int, error) {
	if l.end == 0 {
		return 0, io.EOF
	}
	n := min(dst.Frames(), l.buf.Frames()-l.pos)
	if l.end > 0 {
		n = int(min(int64(n), l.end))
		l.end -= int64(n)
	}
	for c := range dst {
		copy(dst[c][:n], l.buf[c][l.pos:l.pos+n])
	}
	l.pos = (l.pos + n) % l.buf.Frames()
	return n, nil
}

// phrase is a phrase of a speaker placed at a time.
type phrase struct {
	who  int
	text string
	at   float64 // seconds
}

// place builds clean tracks of seconds length from placed phrases and
// returns each speaker's spans.
func place(t testing.TB, voices []testaudio.Voice, seconds float64, ps []phrase) ([][]float64, [][]span) {
	t.Helper()
	n := int(seconds * fs)
	tracks := make([][]float64, len(voices))
	for i := range tracks {
		tracks[i] = make([]float64, n)
	}
	spans := make([][]span, len(voices))
	for _, p := range ps {
		x := testaudio.TrimSilence(testaudio.Speech(t, fs, p.text, voices[p.who]), 1e-4)
		at := int(p.at * fs)
		if at+len(x) > n {
			t.Fatalf("phrase %q at %.1f s ends after %.1f s", p.text, p.at, seconds)
		}
		copy(tracks[p.who][at:], x)
		spans[p.who] = append(spans[p.who], frames(at, at+len(x)))
	}
	return tracks, spans
}

// minus returns the parts of spans a that no span of b (widened by
// margin frames) covers.
func minus(a, b []span, margin int) []span {
	var out []span
	for _, s := range a {
		parts := []span{s}
		for _, c := range b {
			lo, hi := c.Start-int64(margin), c.End+int64(margin)
			var next []span
			for _, p := range parts {
				if hi <= p.Start || lo >= p.End {
					next = append(next, p)
					continue
				}
				if lo > p.Start {
					next = append(next, span{Start: p.Start, End: lo})
				}
				if hi < p.End {
					next = append(next, span{Start: hi, End: p.End})
				}
			}
			parts = next
		}
		out = append(out, parts...)
	}
	return out
}

func pow10(x float64) float64 { return math.Pow(10, x) }

// cached returns build()'s result, built once per test binary: scenes
// that several tests measure are synthesized once.
func cached[T any](key string, build func() T) T {
	if v, ok := cache[key]; ok {
		return v.(T)
	}
	v := build()
	cache[key] = v
	return v
}

var cache = map[string]any{} // tests of this package do not run in parallel
