package realaudio

import (
	"fmt"
	"math"
	"sort"
)

// Mix is clean speech plus a real interferer at a known SNR.
type Mix struct {
	ID string
	// Clean is the speech alone: the reference.
	Clean []float64
	// Noise is the interferer as added: Input = Clean + Noise.
	Noise []float64
	Input []float64
	// SNR is the ratio of Clean's active level (ActiveLevel) to Noise's
	// mean power, in dB.
	SNR float64
	// Interferer is "stationary", "nonstationary", "babble" or "music";
	// Class is the noise's class or the music's kind.
	Interferer, Class string
	Origins           []Origin
}

// SNRs are the signal-to-noise ratios of the noisy-speech scenarios.
var SNRs = []float64{5, 10, 15}

// Interferers are the kinds of interferer of the noisy-speech scenarios.
var Interferers = []string{"stationary", "nonstationary", "babble", "music"}

// mixAt returns clean plus noise scaled to the SNR, all three scaled
// together when the mix would peak above -1 dBFS.
func mixAt(id string, clean, noise []float64, snr float64) Mix {
	g := math.Sqrt(ActiveLevel(clean) / (math.Pow(10, snr/10) * meanPow(noise)))
	m := Mix{ID: id, SNR: snr, Clean: append([]float64(nil), clean...), Noise: make([]float64, len(clean)), Input: make([]float64, len(clean))}
	var pk float64
	for i := range m.Input {
		m.Noise[i] = g * noise[i]
		m.Input[i] = m.Clean[i] + m.Noise[i]
		pk = max(pk, math.Abs(m.Input[i]))
	}
	if pk > 0.89 {
		s := 0.89 / pk
		for i := range m.Input {
			m.Clean[i] *= s
			m.Noise[i] *= s
			m.Input[i] = m.Clean[i] + m.Noise[i]
		}
	}
	return m
}

func meanPow(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s / float64(max(len(x), 1))
}

// Babble is the babble of NoisySpeech's mixes, for fits that make mixes
// of their own alike (dsp/spectral's TestFitIsoRec -recbabble corpus).
func (c *Corpus) Babble(n int, exclude string, seed uint64) []float64 {
	x, _ := c.babble(n, exclude, seed)
	return x
}

// babble returns n samples of real babble: six talkers of the half (none
// of them exclude), each their utterances joined end to end (their
// silences at either end cut) and looped, at equal levels, summed.
func (c *Corpus) babble(n int, exclude string, seed uint64) ([]float64, []Origin) {
	out := make([]float64, n)
	var origins []Origin
	talkers := 0
	r := newRand(seed)
	order := make([]int, len(c.Speakers))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for _, k := range order {
		us := c.Speakers[k]
		if talkers == 6 || us[0].Speaker == exclude {
			continue
		}
		var x []float64
		for _, u := range us {
			x = append(x, trimSilence(u.Samples, 3e-3)...)
		}
		if len(x) < 2*Rate {
			continue
		}
		x = setActive(Loop(x, n, r.intn(len(x))), -30)
		for i := range out {
			out[i] += x[i]
		}
		origins = append(origins, Origin{Package: us[0].Origin.Package, Path: us[0].Speaker, License: us[0].Origin.License, Note: "a talker of the babble"})
		talkers++
	}
	return out, origins
}

// NoisySpeech returns the half's noisy speech: for each SNR of SNRs and
// each interferer of Interferers, two clips, each under a different noise
// (looped from a random point when shorter than the clip) or piece of
// music, chosen in turn.
func (c *Corpus) NoisySpeech() []Mix {
	clips := c.Clips()
	var stat, nonstat []Noise
	for _, n := range c.Noises {
		if n.Stationary {
			stat = append(stat, n)
		} else {
			nonstat = append(nonstat, n)
		}
	}
	r := newRand(uint64(c.Half) * 1000)
	var out []Mix
	k := 0
	for _, snr := range SNRs {
		for _, kind := range Interferers {
			for range 2 {
				cl := clips[(k*7)%len(clips)]
				n := len(cl.Samples)
				var noise []float64
				var class string
				var origins []Origin
				switch kind {
				case "stationary", "nonstationary":
					set := stat
					if kind == "nonstationary" {
						set = nonstat
					}
					nz := set[k%len(set)]
					noise, class, origins = Loop(nz.Samples, n, r.intn(len(nz.Samples))), nz.Class, nz.Origins
				case "babble":
					noise, origins = c.babble(n, cl.Speaker, r.next())
					class = "babble"
				case "music":
					m := c.Music[k%len(c.Music)]
					noise, class, origins = Loop(m.Samples, n, r.intn(len(m.Samples))), m.Kind, m.Origins
				}
				m := mixAt(fmt.Sprintf("%s/%s/%s/%gdB", cl.ID, kind, class, snr), cl.Samples, noise, snr)
				m.Interferer, m.Class = kind, class
				m.Origins = append(append([]Origin(nil), cl.Origins...), origins...)
				out = append(out, m)
				k++
			}
		}
	}
	return out
}

// Reverb is speech in a room.
type Reverb struct {
	ID string
	// Dry is the speech as recorded, delayed to line up with the direct
	// path of Input: the reference.
	Dry   []float64
	Input []float64
	// Method is "image-source" or "sox".
	Method string
	// RT60 is the reverberation time asked for; MeasuredRT60 the
	// Schroeder estimate from the impulse response.
	RT60, MeasuredRT60 float64
	// Room is the simulated room (image-source only).
	Room    Room
	Impulse []float64
	Origins []Origin
}

// RoomRT60s are the reverberation times of the image-source rooms.
var RoomRT60s = []float64{0.3, 0.5, 0.7, 1.0, 1.2}

// rooms of each half: sizes and the talker's place; the microphone is 1.5
// to 2.5 m away.
var roomSizes = map[Half][][3]float64{
	Tuning:  {{5.2, 4.1, 2.7}, {7.4, 5.3, 3.1}, {9.5, 6.8, 3.4}, {4.3, 3.6, 2.5}, {11.2, 8.1, 4.2}},
	HeldOut: {{6.1, 4.6, 2.8}, {8.3, 5.9, 3.0}, {10.4, 7.2, 3.6}, {4.8, 3.9, 2.6}, {12.5, 9.0, 4.5}},
}

// Rooms returns the half's image-source rooms, one per RT60 of RoomRT60s,
// with their impulse responses (cached).
func (c *Corpus) Rooms() ([]Room, [][]float64, error) {
	var rooms []Room
	var irs [][]float64
	r := newRand(uint64(c.Half)*77 + 5)
	for i, rt := range RoomRT60s {
		size := roomSizes[c.Half][i]
		src := [3]float64{size[0] * (0.25 + 0.1*r.float()), size[1] * (0.3 + 0.2*r.float()), 1.6}
		az := 0.6 * (r.float() - 0.5)
		d := 1.5 + r.float()
		var room Room
		key := fmt.Sprintf("room|%v|%v|%.4f|%.4f|%g", size, src, az, d, rt)
		h, err := cached(key, func() ([]float64, error) {
			var h []float64
			var err error
			room, h, err = newRoom(size, src, az, d, rt)
			return h, err
		})
		if err != nil {
			return nil, nil, err
		}
		if room.RT60 == 0 { // read from the cache: the geometry is the same
			room = Room{Size: size, Source: src, Mic: [3]float64{src[0] + d*math.Cos(az), src[1] + d*math.Sin(az), src[2] - 0.2}, RT60: rt}
		}
		rooms = append(rooms, room)
		irs = append(irs, h)
	}
	return rooms, irs, nil
}

// Reverberant returns the half's speech in its image-source rooms: each
// room with two clips.
func (c *Corpus) Reverberant() ([]Reverb, error) {
	rooms, irs, err := c.Rooms()
	if err != nil {
		return nil, err
	}
	clips := c.Clips()
	var out []Reverb
	k := 0
	for i, room := range rooms {
		for range 2 {
			cl := clips[(k*5+3)%len(clips)]
			k++
			dry := make([]float64, len(cl.Samples)+irLead)
			copy(dry[irLead:], cl.Samples)
			wet := convolve(append(append([]float64(nil), cl.Samples...), make([]float64, irLead)...), irs[i])
			g := 0.89 / max(peak(wet), 0.89)
			for j := range wet {
				wet[j] *= g
				dry[j] *= g
			}
			out = append(out, Reverb{ID: fmt.Sprintf("%s/room%.1fs", cl.ID, room.RT60), Dry: dry, Input: wet, Method: "image-source",
				RT60: room.RT60, MeasuredRT60: SchroederRT60(irs[i], Rate), Room: room, Impulse: irs[i], Origins: cl.Origins})
		}
	}
	return out, nil
}

func peak(x []float64) float64 {
	var p float64
	for _, v := range x {
		p = max(p, math.Abs(v))
	}
	return p
}

// HumMix is speech with drifting mains hum.
type HumMix struct {
	ID    string
	Clean []float64
	Hum   Hum // scaled as added
	Input []float64
	// HumDB is the hum's level under the speech's active level, in dB.
	HumDB   float64
	Origins []Origin
}

// HumDrift is how far the hum's frequency wanders, peak to peak.
const HumDrift = 0.5

// HumBelowDB is how far under the speech's active level the hum lies.
const HumBelowDB = 10.0

// Hummed returns the half's speech with hum at 50 and at 60 Hz, wandering
// by HumDrift over each file, with harmonics to 1 kHz, HumBelowDB under
// the speech: four clips per mains frequency.
func (c *Corpus) Hummed() []HumMix {
	clips := c.Clips()
	var out []HumMix
	k := 0
	for _, base := range []float64{50, 60} {
		for range 4 {
			cl := clips[(k*3+1)%len(clips)]
			k++
			h := makeHum(len(cl.Samples), base, HumDrift, uint64(c.Half)*100+uint64(k))
			g := math.Sqrt(ActiveLevel(cl.Samples) * math.Pow(10, -HumBelowDB/10))
			in := make([]float64, len(cl.Samples))
			for i := range in {
				h.Samples[i] *= g
				in[i] = cl.Samples[i] + h.Samples[i]
			}
			out = append(out, HumMix{ID: fmt.Sprintf("%s/hum%g", cl.ID, base), Clean: cl.Samples, Hum: h, Input: in, HumDB: HumBelowDB, Origins: cl.Origins})
		}
	}
	return out
}

// Segment is a labelled stretch of a programme, in samples.
type Segment struct {
	Start, End int
	// Label is "speech" or "music".
	Label string
	// What is the music's kind, "speech", or "speech+bed" for speech over
	// music 15 dB below it (labelled speech).
	What string
	ID   string
}

// Programme alternates real speech and real music.
type Programme struct {
	ID       string
	Input    []float64
	Segments []Segment
	// Labels is the label of each whole second: that of the segment
	// covering most of it.
	Labels  []string
	Origins []Origin
}

// BedBelowDB is how far a music bed lies under the speech over it.
const BedBelowDB = 15.0

// Programmes returns the half's programmes for the speech/music
// classifier: two of them, each alternating speech (8 to 12 s clips,
// some over a music bed BedBelowDB under them) with 10 to 15 s of music of
// every kind of MusicKinds, cut in and out with 20 ms fades.
func (c *Corpus) Programmes() []Programme {
	clips := c.Clips()
	byKind := map[string][]Music{}
	for _, m := range c.Music {
		byKind[m.Kind] = append(byKind[m.Kind], m)
	}
	r := newRand(uint64(c.Half)*31 + 7)
	var out []Programme
	k := 0
	for p := range 2 {
		var pr Programme
		pr.ID = fmt.Sprintf("%s/programme%d", c.Half, p+1)
		add := func(x []float64, label, what, id string, origins []Origin) {
			fade(x, Rate/50)
			pr.Segments = append(pr.Segments, Segment{Start: len(pr.Input), End: len(pr.Input) + len(x), Label: label, What: what, ID: id})
			pr.Input = append(pr.Input, x...)
			pr.Origins = append(pr.Origins, origins...)
		}
		for i, kind := range MusicKinds {
			cl := clips[(k*11+p)%len(clips)]
			k++
			sp := append([]float64(nil), cl.Samples...)
			if (i+p)%2 == 1 { // speech over a bed of the previous kind
				ms := byKind[MusicKinds[(i+4)%5]]
				m := ms[(p+i)%len(ms)]
				bed := Loop(m.Samples, len(sp), r.intn(len(m.Samples)))
				g := math.Sqrt(ActiveLevel(sp) * math.Pow(10, -BedBelowDB/10) / meanPow(bed))
				for j := range sp {
					sp[j] += g * bed[j]
				}
				add(sp, "speech", "speech+bed", cl.ID+"+"+m.ID, append(append([]Origin(nil), cl.Origins...), m.Origins...))
			} else {
				add(sp, "speech", "speech", cl.ID, cl.Origins)
			}
			ms := byKind[kind]
			m := ms[(p+i/2)%len(ms)]
			n := int((10 + 5*r.float()) * Rate)
			x := Loop(m.Samples, n, r.intn(len(m.Samples)))
			setActive(x, SpeechDB+2*(r.float()-0.5)*3)
			add(x, "music", kind, m.ID, m.Origins)
		}
		pr.Labels = secondLabels(pr.Segments, len(pr.Input))
		out = append(out, pr)
	}
	return out
}

// secondLabels labels each whole second with the label covering most of
// it.
func secondLabels(segs []Segment, n int) []string {
	var out []string
	for s := 0; (s+1)*Rate <= n; s++ {
		cover := map[string]int{}
		for _, g := range segs {
			a, b := max(g.Start, s*Rate), min(g.End, (s+1)*Rate)
			if b > a {
				cover[g.Label] += b - a
			}
		}
		best, bl := -1, ""
		labels := make([]string, 0, len(cover))
		for l := range cover {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		for _, l := range labels {
			if cover[l] > best {
				best, bl = cover[l], l
			}
		}
		out = append(out, bl)
	}
	return out
}

// fade ramps the first and last n samples of x in and out (raised cosine).
func fade(x []float64, n int) {
	n = min(n, len(x)/2)
	for i := range n {
		g := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(n))
		x[i] *= g
		x[len(x)-1-i] *= g
	}
}
