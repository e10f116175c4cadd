package realaudio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// A note of a piece composed here: start and length in seconds, MIDI key,
// velocity 0..1.
type note struct {
	t, dur float64
	key    int
	vel    float64
}

// piece is a deterministic tonal piece: a chord progression, a bass line,
// a melody that walks the scale, and a drum pattern, at a tempo.
type piece struct {
	beat   float64 // seconds
	chords []note  // every chord tone (three per bar)
	bass   []note
	melody []note
	drums  []note // keys of the General MIDI drum map
}

// compose writes a piece of about seconds in a major or minor key from
// seed: four-bar progressions of I vi IV V (or i VI III VII), a bass on
// each beat, eighth-note melodies.
func compose(seed uint64, seconds float64) piece {
	r := newRand(seed)
	bpm := 84 + float64(r.intn(50))
	beat := 60 / bpm
	root := 48 + r.intn(10) // C3..A3
	minor := r.intn(2) == 1
	scale := []int{0, 2, 4, 5, 7, 9, 11}
	prog := [][]int{{0, 4, 7}, {9, 12, 16}, {5, 9, 12}, {7, 11, 14}}
	if minor {
		scale = []int{0, 2, 3, 5, 7, 8, 10}
		prog = [][]int{{0, 3, 7}, {8, 12, 15}, {3, 7, 10}, {10, 14, 17}}
	}
	var p piece
	p.beat = beat
	bar := 4 * beat
	deg := 0
	for b := 0; float64(b)*bar < seconds; b++ {
		t := float64(b) * bar
		ch := prog[b%4]
		for _, k := range ch {
			p.chords = append(p.chords, note{t, bar * 0.98, root + 12 + k, 0.55})
		}
		for i := 0; i < 4; i++ {
			k := root - 12 + ch[0]
			if i == 2 {
				k += 7
			}
			p.bass = append(p.bass, note{t + float64(i)*beat, beat * 0.9, k, 0.7})
		}
		for i := 0; i < 8; i++ {
			if r.intn(5) == 0 {
				continue // a rest
			}
			deg += r.intn(5) - 2
			deg = max(-3, min(deg, 10))
			oct := 24 + 12*int(math.Floor(float64(deg)/7))
			k := root + oct + scale[((deg%7)+7)%7]
			p.melody = append(p.melody, note{t + float64(i)*beat/2, beat / 2 * 0.95, k, 0.6 + 0.3*r.float()})
		}
		for i := 0; i < 8; i++ {
			tt := t + float64(i)*beat/2
			p.drums = append(p.drums, note{tt, 0.1, 42, 0.5}) // closed hat
			if i%4 == 0 {
				p.drums = append(p.drums, note{tt, 0.1, 36, 0.9}) // kick
			}
			if i%4 == 2 {
				p.drums = append(p.drums, note{tt, 0.1, 38, 0.85}) // snare
			}
			if i == 7 && b%4 == 3 {
				p.drums = append(p.drums, note{tt, 0.1, 46, 0.6}) // open hat
			}
			if i == 6 && b%2 == 1 && r.intn(2) == 0 {
				p.drums = append(p.drums, note{tt, 0.1, 45 + 2*r.intn(3), 0.7}) // a tom
			}
		}
		if b%8 == 0 {
			p.drums = append(p.drums, note{t, 0.1, 49, 0.7}) // crash
		}
	}
	return p
}

// rand is a small deterministic generator (splitmix64).
type rand struct{ s uint64 }

func newRand(seed uint64) *rand { return &rand{seed*0x9e3779b97f4a7c15 + 1} }

func (r *rand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
func (r *rand) intn(n int) int { return int(r.next() % uint64(n)) }
func (r *rand) float() float64 { return float64(r.next()>>11) / (1 << 53) }
func (r *rand) gauss() float64 { // Box-Muller
	u := max(r.float(), 1e-300)
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*r.float())
}

// sampler plays one recorded sample at any MIDI key: the sample's own
// pitch is measured, and it is resampled (linear interpolation) to the
// key's, faded out at the note's end.
type sampler struct {
	x   []float64
	key float64 // the sample's pitch as a MIDI key; 0 for unpitched
}

func newSampler(path string, pitched bool) (*sampler, Origin, error) {
	x, err := decode(path)
	if err != nil {
		return nil, Origin{}, err
	}
	x = trimSilence(x, 1e-3)
	s := &sampler{x: x}
	if pitched {
		f0 := pitchOf(x)
		if f0 <= 0 {
			return nil, Origin{}, fmt.Errorf("%s: no pitch found", path)
		}
		s.key = 69 + 12*math.Log2(f0/440)
	}
	return s, Origin{Package: "lmms-common", Path: path, License: licLMMS, Note: "sequenced here"}, nil
}

// play adds the note to out. An unpitched sample plays as it is, cut at
// the note's end when it rings longer; a pitched one too, transposed.
func (s *sampler) play(out []float64, n note, gain float64, sustain bool) {
	ratio := 1.0
	if s.key != 0 {
		ratio = math.Pow(2, (float64(n.key)-s.key)/12)
	}
	start := int(n.t * Rate)
	length := int(float64(len(s.x)) / ratio)
	if sustain {
		length = min(length, int((n.dur+0.08)*Rate))
	}
	fade := int(0.06 * Rate)
	end := int((n.dur + 0.08) * Rate)
	for i := 0; i < length && start+i < len(out); i++ {
		p := float64(i) * ratio
		j := int(p)
		if j+1 >= len(s.x) {
			break
		}
		v := s.x[j] + (p-float64(j))*(s.x[j+1]-s.x[j])
		g := gain * n.vel
		if sustain && i > end-fade {
			g *= max(0, float64(end-i)/float64(fade))
		}
		out[start+i] += g * v
	}
}

// pitchOf measures the fundamental of a recorded note: the lag of the
// autocorrelation's highest peak between 40 and 1000 Hz over 100 ms of
// the loudest part, refined by parabolic interpolation.
func pitchOf(x []float64) float64 {
	w := Rate / 10
	if len(x) < 2*w {
		w = len(x) / 2
	}
	best, at := -1.0, 0
	for i := 0; i+w <= len(x); i += w / 4 {
		var e float64
		for _, v := range x[i : i+w] {
			e += v * v
		}
		if e > best {
			best, at = e, i
		}
	}
	seg := x[at : at+w]
	lo, hi := Rate/1000, min(Rate/40, w-1)
	ac := make([]float64, hi+2)
	for lag := lo - 1; lag <= hi+1 && lag < w; lag++ {
		var s float64
		for i := 0; i+lag < w; i++ {
			s += seg[i] * seg[i+lag]
		}
		ac[lag] = s / float64(w-lag)
	}
	// The first peak above 80% of the highest, against octave errors.
	top := 0.0
	for lag := lo; lag <= hi; lag++ {
		top = max(top, ac[lag])
	}
	for lag := lo; lag <= hi; lag++ {
		if ac[lag] > 0.8*top && ac[lag] >= ac[lag-1] && ac[lag] >= ac[lag+1] {
			a, b, c := ac[lag-1], ac[lag], ac[lag+1]
			d := 0.0
			if den := a - 2*b + c; den != 0 {
				d = 0.5 * (a - c) / den
			}
			return Rate / (float64(lag) + d)
		}
	}
	return 0
}

func trimSilence(x []float64, thresh float64) []float64 {
	a, b := 0, len(x)
	for a < b && math.Abs(x[a]) < thresh {
		a++
	}
	for b > a && math.Abs(x[b-1]) < thresh {
		b--
	}
	return x[a:b]
}

// normalize scales x to an RMS of -20 dBFS, or lower when its peak would
// pass -1 dBFS.
func normalize(x []float64) []float64 {
	r := rms(x)
	if r == 0 {
		return x
	}
	g := 0.1 / r
	var pk float64
	for _, v := range x {
		pk = max(pk, math.Abs(v))
	}
	g = min(g, 0.89/pk)
	for i := range x {
		x[i] *= g
	}
	return x
}

func rms(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// pieceSeconds is the length of every piece sequenced or rendered here.
const pieceSeconds = 40

// lmmsPiece is a piece played by lmms-common's recorded samples: parts
// name a sample for the chords, the bass, the melody, and drum keys.
type lmmsPiece struct {
	id, kind     string
	half         Half
	seed         uint64
	chords, bass string
	melody       string
	drums        map[int]string // General MIDI drum key -> sample
	loops        []string       // recorded loops tiled under the piece
	chordSustain bool
}

var lmmsPieces = []lmmsPiece{
	{id: "lmms/drums-a", kind: Percussive, half: Tuning, seed: 11, drums: map[int]string{
		36: "drums/kick01", 38: "drums/snare01", 42: "drums/hihat_closed01", 46: "drums/hihat_opened01",
		49: "drums/crash01", 45: "drums/tom01", 47: "drums/tom02", 50: "drums/tom03"}},
	{id: "lmms/drums-b", kind: Percussive, half: HeldOut, seed: 12, drums: map[int]string{
		36: "drums/kick02", 38: "drums/snare02", 42: "drums/hihat_closed02", 46: "drums/hihat_opened02",
		49: "drums/crash02", 45: "drums/tom04", 47: "drums/tom05", 50: "drums/tom_hi01"}},
	{id: "lmms/techno-a", kind: Electronic, half: Tuning, seed: 13, loops: []string{"bassloops/techno_bass01", "beats/909beat01"}},
	{id: "lmms/techno-b", kind: Electronic, half: HeldOut, seed: 14, loops: []string{"bassloops/tb303_01", "beats/electro_beat01"}},
	{id: "lmms/piano", kind: GuitarPiano, half: Tuning, seed: 15, chords: "instruments/piano01", melody: "instruments/piano02", bass: "instruments/piano01"},
	{id: "lmms/steel-guitar", kind: GuitarPiano, half: HeldOut, seed: 16, chords: "instruments/steel_guitar01", melody: "latin/latin_guitar01", bass: "instruments/bassslap01"},
	{id: "lmms/strings", kind: Orchestral, half: HeldOut, seed: 17, chords: "stringsnpads/strings01", bass: "instruments/cello01", melody: "instruments/violin_fingered01", chordSustain: true},
	{id: "lmms/choir", kind: Vocals, half: HeldOut, seed: 18, chords: "stringsnpads/chorus02", melody: "stringsnpads/chorus01", chordSustain: true},
}

// render plays the piece.
func (lp lmmsPiece) render() ([]float64, []Origin, error) {
	p := compose(lp.seed, pieceSeconds)
	out := make([]float64, pieceSeconds*Rate)
	var origins []Origin
	load := func(name string, pitched bool) (*sampler, error) {
		s, o, err := newSampler(filepath.Join(lmmsDir, name+".ogg"), pitched)
		if err == nil {
			origins = append(origins, o)
		}
		return s, err
	}
	part := func(name string, notes []note, gain float64, sustain bool) error {
		if name == "" {
			return nil
		}
		s, err := load(name, true)
		if err != nil {
			return err
		}
		for _, n := range notes {
			s.play(out, n, gain, sustain)
		}
		return nil
	}
	if err := part(lp.chords, p.chords, 0.5, lp.chordSustain); err != nil {
		return nil, nil, err
	}
	if err := part(lp.bass, p.bass, 0.7, true); err != nil {
		return nil, nil, err
	}
	if err := part(lp.melody, p.melody, 0.8, true); err != nil {
		return nil, nil, err
	}
	keys := make([]int, 0, len(lp.drums))
	for k, name := range lp.drums {
		if name != "" {
			keys = append(keys, k)
		}
	}
	sort.Ints(keys)
	for _, k := range keys {
		s, err := load(lp.drums[k], false)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range p.drums {
			if n.key == k {
				s.play(out, n, 1, false)
			}
		}
	}
	for _, name := range lp.loops {
		s, err := load(name, false)
		if err != nil {
			return nil, nil, err
		}
		for at := 0; at < len(out); at += len(s.x) {
			for i, v := range s.x {
				if at+i < len(out) {
					out[at+i] += v
				}
			}
		}
	}
	return normalize(out), origins, nil
}

// gmPiece is a piece rendered from General MIDI by fluidsynth through
// TimGM6mb, whose instruments are recorded samples: programs for the
// chords, bass and melody (-1 for none), and the drum kit or not.
type gmPiece struct {
	id, kind             string
	half                 Half
	seed                 uint64
	chords, bass, melody int
	counter              int // a second melody an octave down, or -1
	drums, timpani       bool
}

var gmPieces = []gmPiece{
	{"gm/orchestra-a", Orchestral, Tuning, 21, 48, 43, 60, 73, false, true},   // strings, contrabass, horn, flute, timpani
	{"gm/choir-a", Vocals, Tuning, 22, 52, -1, 53, -1, false, false},          // choir aahs, voice oohs
	{"gm/piano-a", GuitarPiano, Tuning, 23, 0, 0, 0, -1, false, false},        // acoustic grand piano
	{"gm/orchestra-b", Orchestral, HeldOut, 24, 49, 42, 56, 71, false, false}, // slow strings, cello, trumpet, clarinet
	{"gm/guitar-b", GuitarPiano, HeldOut, 25, 24, 32, 25, -1, false, false},   // nylon and steel guitars, acoustic bass
	{"gm/drums-b", Percussive, HeldOut, 26, -1, -1, -1, -1, true, false},      // the standard kit
}

func (g gmPiece) render() ([]float64, []Origin, error) {
	p := compose(g.seed, pieceSeconds)
	var evs []midiEvent
	add := func(ch, prog int, notes []note, transpose int) {
		if prog < 0 {
			return
		}
		evs = append(evs, midiEvent{t: -1, data: []byte{0xc0 | byte(ch), byte(prog)}})
		for _, n := range notes {
			v := byte(max(1, min(127, int(n.vel*127))))
			k := byte(n.key + transpose)
			evs = append(evs, midiEvent{t: n.t, data: []byte{0x90 | byte(ch), k, v}})
			evs = append(evs, midiEvent{t: n.t + n.dur, data: []byte{0x80 | byte(ch), k, 0}})
		}
	}
	add(0, g.chords, p.chords, 0)
	add(1, g.bass, p.bass, 0)
	add(2, g.melody, p.melody, 0)
	add(3, g.counter, p.melody, -12)
	if g.timpani {
		var t []note
		for _, n := range p.bass {
			if math.Mod(n.t, 4*p.beat) < 1e-9 {
				t = append(t, note{n.t, p.beat, n.key + 12, 0.8})
			}
		}
		add(4, 47, t, 0)
	}
	if g.drums {
		for _, n := range p.drums {
			v := byte(n.vel * 127)
			evs = append(evs, midiEvent{t: n.t, data: []byte{0x99, byte(n.key), v}})
			evs = append(evs, midiEvent{t: n.t + n.dur, data: []byte{0x89, byte(n.key), 0}})
		}
	}
	mid := smf(evs, p.beat)
	dir, err := os.MkdirTemp("", "realaudio-gm")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	midPath := filepath.Join(dir, "piece.mid")
	wavPath := filepath.Join(dir, "piece.wav")
	if err := os.WriteFile(midPath, mid, 0o644); err != nil {
		return nil, nil, err
	}
	if _, err := runOut("fluidsynth", "-n", "-i", "-q", "-r", fmt.Sprint(Rate), "-g", "0.5", "-F", wavPath, soundFont, midPath); err != nil {
		return nil, nil, err
	}
	x, err := runF32("ffmpeg", []string{"-nostdin", "-v", "error", "-i", wavPath, "-ac", "1", "-ar", fmt.Sprint(Rate), "-f", "f32le", "-"}, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(x) > pieceSeconds*Rate {
		x = x[:pieceSeconds*Rate]
	}
	return normalize(x), []Origin{
		{Package: "timgm6mb-soundfont", Path: soundFont, License: licTimGM, Note: fmt.Sprintf("programs %d %d %d %d rendered by fluidsynth from MIDI composed here", g.chords, g.bass, g.melody, g.counter)},
	}, nil
}

type midiEvent struct {
	t    float64 // seconds; negative: at the start, before the notes
	data []byte
}

// smf writes a type-0 Standard MIDI File of the events, 480 ticks per
// beat of the given length.
func smf(evs []midiEvent, beat float64) []byte {
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].data[0]&0xf0 == 0x80 && evs[j].data[0]&0xf0 != 0x80 // note-offs first
	})
	const div = 480
	var trk bytes.Buffer
	vlq := func(v int) {
		var b []byte
		b = append(b, byte(v&0x7f))
		for v >>= 7; v > 0; v >>= 7 {
			b = append([]byte{byte(v&0x7f) | 0x80}, b...)
		}
		trk.Write(b)
	}
	us := int(beat * 1e6)
	vlq(0)
	trk.Write([]byte{0xff, 0x51, 3, byte(us >> 16), byte(us >> 8), byte(us)})
	last := 0
	for _, e := range evs {
		tick := 0
		if e.t > 0 {
			tick = int(math.Round(e.t / beat * div))
		}
		vlq(tick - last)
		last = tick
		trk.Write(e.data)
	}
	vlq(div)
	trk.Write([]byte{0xff, 0x2f, 0})
	var out bytes.Buffer
	out.WriteString("MThd")
	binary.Write(&out, binary.BigEndian, []uint16{0, 0, 6, 0, 1, div}[1:])
	out.WriteString("MTrk")
	binary.Write(&out, binary.BigEndian, uint32(trk.Len()))
	out.Write(trk.Bytes())
	return out.Bytes()
}

// sequencedOf renders the half's sequenced and General MIDI pieces
// (cached).
func sequencedOf(h Half) ([]Music, error) {
	var out []Music
	for _, lp := range lmmsPieces {
		if lp.half != h {
			continue
		}
		var origins []Origin
		x, err := cached("lmms|"+lp.id, func() ([]float64, error) {
			x, o, err := lp.render()
			origins = o
			return x, err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lp.id, err)
		}
		if origins == nil {
			origins = lp.origins()
		}
		out = append(out, Music{ID: lp.id, Kind: lp.kind, Samples: x, Origins: origins})
	}
	for _, g := range gmPieces {
		if g.half != h {
			continue
		}
		var origins []Origin
		x, err := cached("gm|"+g.id, func() ([]float64, error) {
			x, o, err := g.render()
			origins = o
			return x, err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.id, err)
		}
		if origins == nil {
			origins = []Origin{{Package: "timgm6mb-soundfont", Path: soundFont, License: licTimGM, Note: "rendered by fluidsynth from MIDI composed here"}}
		}
		out = append(out, Music{ID: g.id, Kind: g.kind, Samples: x, Origins: origins})
	}
	return out, nil
}

// origins lists the samples a piece plays, for a piece read from the
// cache.
func (lp lmmsPiece) origins() []Origin {
	var names []string
	names = append(names, lp.chords, lp.bass, lp.melody)
	for _, d := range lp.drums {
		names = append(names, d)
	}
	names = append(names, lp.loops...)
	sort.Strings(names)
	var out []Origin
	for i, n := range names {
		if n == "" || (i > 0 && names[i-1] == n) {
			continue
		}
		out = append(out, Origin{Package: "lmms-common", Path: filepath.Join(lmmsDir, n+".ogg"), License: licLMMS, Note: "sequenced here"})
	}
	return out
}

// samplesOf lists every sample file the half's sequenced pieces play, to
// check that the halves share none.
func samplesOf(h Half) []string {
	var out []string
	for _, lp := range lmmsPieces {
		if lp.half == h {
			for _, o := range lp.origins() {
				out = append(out, o.Path)
			}
		}
	}
	for _, g := range gmPieces {
		if g.half == h {
			for _, p := range []int{g.chords, g.bass, g.melody, g.counter} {
				if p >= 0 {
					out = append(out, fmt.Sprintf("gm-program-%d", p))
				}
			}
			if g.drums {
				out = append(out, "gm-drumkit")
			}
			if g.timpani {
				out = append(out, "gm-program-47")
			}
		}
	}
	return out
}
