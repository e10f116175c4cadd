package realaudio

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// FitVoice is one speaker of the fit-only pool.
type FitVoice struct {
	// Speaker names the voice: package family / who or which.
	Speaker string
	// Set groups voices chosen together (a fit's -fitextra names sets).
	Set  string
	Lang string
	// Kind is what the recordings are: read prompts, acted dialogue,
	// single words.
	Kind    string
	Package string
	License string
	// RateHz is the recordings' sample rate (they are decoded to Rate).
	RateHz int
	// Pitch is the median pitch of the voice's voiced frames in Hz
	// (autocorrelation over 40 ms frames of 40 of its recordings, measured
	// once by hand when the voice was chosen), 0 where not measured.
	Pitch int
	glob  string // patterns separated by ';'
	max   int    // at most this many files, spread over the sorted list (0: all)
}

// FitVoices are the pool's voices. Chosen from the speech Debian
// packages hold (2026-11-28): the four main voices of Fish Fillets'
// dialogue (acted, not shouted: the two fish of each language, some 37
// to 41 minutes each; the levels' other characters, under 10 minutes per
// language and some of them played by the same actors or processed, are
// left out); the Russian prompts at 16 kHz (G.722); Italian telephone
// prompts at 8 kHz (Menardi's, a woman's voice); ktuberling's words, one
// speaker a language, only in
// languages klettres-data (whose speakers are in the corpus, half of them
// held out) does not have, as the same volunteer may have recorded both.
// Looked at and not taken: asterisk-prompt-es-co and -fr-armelle (8 kHz
// GSM, one voice each: they conflict with asterisk-core-sounds-es and -fr,
// which the corpus needs; installing them removes those); gcompris-qt-data (its voices are a separate
// download; the package's resources hold music and effects only);
// asterisk-core-sounds-es (Allison, held out); hedgewars-data's voices
// (shouted game lines, Robot a vocoder; dsp/spectral's isoextra_test.go
// can still add them).
var FitVoices = func() []FitVoice {
	const fillets = "/usr/share/games/fillets-ng/sound/*/"
	v := []FitVoice{
		{Speaker: "fillets/cs-big", Set: "fillets", Lang: "cs", Kind: "acted dialogue", Package: "fillets-ng-data-cs", License: licFillets, RateHz: 22050, Pitch: 140, glob: fillets + "cs/*-v-*.ogg", max: fitVoiceFiles},
		{Speaker: "fillets/cs-small", Set: "fillets", Lang: "cs", Kind: "acted dialogue", Package: "fillets-ng-data-cs", License: licFillets, RateHz: 22050, Pitch: 276, glob: fillets + "cs/*-m-*.ogg", max: fitVoiceFiles},
		{Speaker: "fillets/nl-big", Set: "fillets", Lang: "nl", Kind: "acted dialogue", Package: "fillets-ng-data-nl", License: licFillets, RateHz: 22050, Pitch: 144, glob: fillets + "nl/*-v-*.ogg", max: fitVoiceFiles},
		{Speaker: "fillets/nl-small", Set: "fillets", Lang: "nl", Kind: "acted dialogue", Package: "fillets-ng-data-nl", License: licFillets, RateHz: 22050, Pitch: 216, glob: fillets + "nl/*-m-*.ogg", max: fitVoiceFiles},
		{Speaker: "asterisk/ivrvoice-ru", Set: "prompts16k", Lang: "ru", Kind: "read prompts", Package: "asterisk-core-sounds-ru-g722", License: "CC-BY-3.0", RateHz: 16000,
			glob: "/usr/share/asterisk/sounds/ru_RU_f_IvrvoiceRU/*.g722", max: fitVoiceFiles},
		{Speaker: "asterisk/menardi-it", Set: "prompts8k", Lang: "it", Kind: "read prompts", Package: "asterisk-prompt-it-menardi-wav", License: "CC-BY-SA-3.0", RateHz: 8000, Pitch: 178,
			glob: "/usr/share/asterisk/sounds/it_IT_f_Menardi/*.wav", max: fitVoiceFiles},
	}
	for _, lang := range []string{"ca", "el", "fi", "ga", "gl", "ro", "sl", "sr", "sv", "wa"} {
		d := "/usr/share/ktuberling/sounds/" + lang
		v = append(v, FitVoice{Speaker: "ktuberling/" + lang, Set: "ktuberling", Lang: lang, Kind: "words", Package: "ktuberling-data", License: "GPL-2+", RateHz: 22050,
			glob: d + "/*.ogg;" + d + "/*.wav"})
	}
	return v
}()

// fitVoiceFiles is how many recordings of a voice the pool takes, spread
// over the sorted list (Fish Fillets' levels, the prompts' topics): three
// to four minutes, enough for a voice's clips and its part of babble,
// not so much that one voice outweighs the others.
const fitVoiceFiles = 60

const licFillets = "GPL-2"

// FitPackages are the packages of the pool, each once.
func FitPackages() []string {
	var out []string
	for _, v := range FitVoices {
		if !slices.Contains(out, v.Package) {
			out = append(out, v.Package)
		}
	}
	return out
}

// FitSets are the sets of the pool, each once, in FitVoices' order.
func FitSets() []string {
	var out []string
	for _, v := range FitVoices {
		if !slices.Contains(out, v.Set) {
			out = append(out, v.Set)
		}
	}
	return out
}

// files returns the voice's recordings: its glob's matches, sorted, at
// most max of them spread evenly over the list.
func (v FitVoice) files() ([]string, error) {
	var files []string
	for _, g := range strings.Split(v.glob, ";") {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("realaudio: %s: nothing at %s: apt-get install %s (the fit-only pool)", v.Speaker, v.glob, v.Package)
	}
	if v.max > 0 && len(files) > v.max {
		picked := make([]string, v.max)
		for i := range picked {
			picked[i] = files[i*len(files)/v.max]
		}
		files = picked
	}
	return files, nil
}

// FitSpeech returns the utterances of the pool's voices whose Set is in
// sets (every voice if sets is empty), one slice per speaker in
// FitVoices' order, decoded to mono at Rate and cached as the corpus is.
// It reads no recording of either half, and an error names the package
// to install. For fitting only: nothing measured may read it. Unlike the
// corpus's, its signals are not kept in memory past the call (a fit
// reads them once; the pool is 0.7 GB as float64).
func FitSpeech(sets ...string) ([][]Utterance, error) {
	var out [][]Utterance
	for _, v := range FitVoices {
		if len(sets) > 0 && !slices.Contains(sets, v.Set) {
			continue
		}
		files, err := v.files()
		if err != nil {
			return nil, err
		}
		xs, err := decodeAll(files, 0)
		if err != nil {
			return nil, err
		}
		us := make([]Utterance, len(files))
		for i, p := range files {
			us[i] = Utterance{Speaker: v.Speaker, Lang: v.Lang, Samples: xs[i], Origin: Origin{Package: v.Package, Path: p, License: v.License, Note: "fit-only pool"}}
		}
		forget(files, 0)
		out = append(out, us)
	}
	return out, nil
}
