package realaudio

import (
	"fmt"
	"math"
	"path/filepath"
)

// Noise is a recording of a real noise, mono at Rate.
type Noise struct {
	ID string
	// Class is what it is: wind, machine, crowd, ambience, water,
	// babble.
	Class string
	// Stationary says whether its level holds: the standard deviation of
	// its 100 ms levels (dB) is under StationaryDB.
	Stationary bool
	// LevelSD is that standard deviation, in dB.
	LevelSD float64
	Samples []float64
	Origins []Origin
}

// StationaryDB is the spread of 100 ms levels under which a noise counts
// as stationary.
const StationaryDB = 3.0

type noiseSrc struct {
	id, class string
	half      Half
	opensfx   int    // sound number in OpenSFX's catalogue, or -1
	path      string // else a file
	pkg, lic  string
}

// noiseSources are the noises. OpenSFX's sounds are cut from field
// recordings (the catalogue names each original); sounds 52 and 57 are the
// same wind recording, so only one is used; 66 and 72 are different
// recordings.
var noiseSources = []noiseSrc{
	{"opensfx/wind", "wind", Tuning, 52, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/helicopter", "machine", Tuning, 24, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/chainsaw", "machine", Tuning, 56, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/propeller-plane", "machine", Tuning, 8, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/bus", "machine", Tuning, 27, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/applause", "crowd", Tuning, 29, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/birds-1", "ambience", Tuning, 66, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/bubbles", "water", Tuning, 51, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/jet", "machine", HeldOut, 61, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/jackhammer", "machine", HeldOut, 33, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/sawmill", "machine", HeldOut, 40, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/mining-machinery", "machine", HeldOut, 11, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/sheep-field", "ambience", HeldOut, 36, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/birds-12", "ambience", HeldOut, 72, "", "openttd-opensfx", licOpenSFX},
	{"opensfx/sparking", "machine", HeldOut, 12, "", "openttd-opensfx", licOpenSFX},
	{"lmms/raving-crowd", "crowd", HeldOut, -1, lmmsDir + "/misc/raving_crowd01.ogg", "lmms-common", licLMMS},
	{"lmms/applause", "crowd", HeldOut, -1, lmmsDir + "/misc/applause01.ogg", "lmms-common", licLMMS},
}

// noisesOf returns the half's noise recordings, each trimmed of the fades
// a sound effect starts and ends with and measured for stationarity.
func noisesOf(h Half) ([]Noise, error) {
	var out []Noise
	for _, s := range noiseSources {
		if s.half != h {
			continue
		}
		var x []float64
		var o Origin
		if s.opensfx >= 0 {
			var name string
			var err error
			x, name, err = decodeOpenSFX(s.opensfx)
			if err != nil {
				return nil, err
			}
			o = Origin{Package: s.pkg, Path: opensfxCat, License: s.lic, Note: fmt.Sprintf("sound %d: %s", s.opensfx, name)}
		} else {
			var err error
			x, err = decode(s.path)
			if err != nil {
				return nil, err
			}
			o = Origin{Package: s.pkg, Path: s.path, License: s.lic}
		}
		x = trimFades(x)
		sd := levelSD(x)
		out = append(out, Noise{ID: s.id, Class: s.class, Stationary: sd < StationaryDB, LevelSD: sd, Samples: x, Origins: []Origin{o}})
	}
	return out, nil
}

// trimFades cuts the start and end of a recording where its 50 ms level is
// more than 20 dB under its median (a sound effect's fades, a piece's
// silent lead-in), so that a loop or a cut of it has no holes.
func trimFades(x []float64) []float64 {
	w := Rate / 20
	lv := frameDB(x, w)
	if len(lv) < 3 {
		return x
	}
	med := median(lv)
	a, b := 0, len(lv)
	for a < b && lv[a] < med-20 {
		a++
	}
	for b > a && lv[b-1] < med-20 {
		b--
	}
	return x[a*w : min(b*w, len(x))]
}

// frameDB returns the RMS level in dB of each whole frame of w samples.
func frameDB(x []float64, w int) []float64 {
	out := framePowers(x, w)
	for i, p := range out {
		out[i] = 10 * math.Log10(p+1e-20)
	}
	return out
}

// levelSD is the standard deviation in dB of the 100 ms levels of x.
func levelSD(x []float64) float64 {
	lv := frameDB(x, Rate/10)
	if len(lv) == 0 {
		return 0
	}
	var m, s float64
	for _, v := range lv {
		m += v
	}
	m /= float64(len(lv))
	for _, v := range lv {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(lv)))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sortFloats(s)
	return s[len(s)/2]
}

// Music kinds.
const (
	Orchestral  = "orchestral"
	Percussive  = "percussive"
	Electronic  = "electronic"
	GuitarPiano = "guitar-piano"
	Vocals      = "vocals"
)

// MusicKinds are the kinds of music every half holds.
var MusicKinds = []string{Orchestral, Percussive, Electronic, GuitarPiano, Vocals}

// Music is a piece of music, mono at Rate.
type Music struct {
	ID   string
	Kind string
	// Recorded is true for a recording as the package ships it, false for
	// a piece sequenced here from the package's recorded samples.
	Recorded bool
	Samples  []float64
	Origins  []Origin
}

// musicSeconds is how much of a recorded piece the corpus takes.
const musicSeconds = 120

type mohSrc struct {
	file, kind string
	half       Half
}

// mohPieces are asterisk-moh-opsound's pieces (opsound.org): Reno
// Project's and Macroform's electronic pieces, Manolo Camp's acoustic
// guitar.
var mohPieces = []mohSrc{
	{"reno_project-system", Electronic, Tuning},
	{"macroform-cold_day", Electronic, Tuning},
	{"macroform-robot_dity", Electronic, HeldOut},
	{"macroform-the_simplicity", Electronic, HeldOut},
	{"manolo_camp-morning_coffee", GuitarPiano, HeldOut},
}

// musicOf returns the half's music: the recorded pieces, and pieces
// sequenced here from recorded samples (lmms-common) or rendered from
// General MIDI through a sound font of recorded instruments (fluidsynth,
// timgm6mb-soundfont), each kind from samples the other half never uses.
func musicOf(h Half) ([]Music, error) {
	var out []Music
	for _, m := range mohPieces {
		if m.half != h {
			continue
		}
		p := filepath.Join(mohDir, m.file+".g722")
		xs, err := decodeAll([]string{p}, musicSeconds)
		if err != nil {
			return nil, err
		}
		out = append(out, Music{ID: "moh/" + m.file, Kind: m.kind, Recorded: true, Samples: trimFades(xs[0]),
			Origins: []Origin{{Package: "asterisk-moh-opsound-g722", Path: p, License: licMOH}}})
	}
	seq, err := sequencedOf(h)
	if err != nil {
		return nil, err
	}
	out = append(out, seq...)
	return out, nil
}
