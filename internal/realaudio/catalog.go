package realaudio

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is a Debian package the corpus takes recordings from.
type Package struct {
	Name string
	// DownloadKB and InstalledKB are the sizes apt-cache reported for
	// Debian 12 (bookworm), for choosing what CI installs.
	DownloadKB, InstalledKB int
	// What the corpus takes from it.
	What  string
	probe string // a file that exists once the package is installed
}

// Packages are the Debian packages the corpus is built from; .ci/run
// installs them. Their licences are per file, in each Origin.
var Packages = []Package{
	{"asterisk-core-sounds-en-g722", 10318, 12267, "read English prompts, one speaker (Allison Smith), 16 kHz G.722", allisonDir + "/vm-intro.g722"},
	{"asterisk-core-sounds-en", 23, 60, "the prompts' transcripts (core-sounds-en.txt)", allisonTranscripts},
	{"asterisk-core-sounds-fr-g722", 10569, 12524, "read Canadian French prompts, one speaker (June), 16 kHz G.722", "/usr/share/asterisk/sounds/fr_CA_f_June/activated.g722"},
	{"asterisk-core-sounds-fr", 23, 59, "their transcripts", "/usr/share/doc/asterisk-core-sounds-fr/core-sounds-fr.txt.gz"},
	{"asterisk-core-sounds-it-g722", 9851, 11518, "read Italian prompts, one speaker (Carlo), 16 kHz G.722", "/usr/share/asterisk/sounds/it_IT_m_Carlo/activated.g722"},
	{"asterisk-core-sounds-it", 23, 60, "their transcripts", "/usr/share/doc/asterisk-core-sounds-it/core-sounds-it.txt.gz"},
	{"codec2-examples", 11097, 32634, "read and conversational English speech of several speakers, 8 and 16 kHz", codec2Dir + "/wav/ve9qrp.wav"},
	{"klettres-data", 38603, 49918, "letters and syllables spoken in 22 languages, 44.1 kHz", klettresDir + "/en/alpha/A.ogg"},
	{"asterisk-moh-opsound-g722", 7705, 8662, "five pieces of music (electronic, acoustic guitar), 16 kHz G.722", mohDir + "/manolo_camp-morning_coffee.g722"},
	{"lmms-common", 8070, 19226, "recorded instrument, drum and choir samples, applause and crowd recordings", lmmsDir + "/drums/kick01.ogg"},
	{"timgm6mb-soundfont", 5300, 6073, "a General MIDI sound font of recorded instruments", soundFont},
	{"fluidsynth", 50, 107, "renders the General MIDI pieces composed here through the sound font", "/usr/bin/fluidsynth"},
	{"openttd-opensfx", 9663, 13032, "field recordings: wind, machines, vehicles, applause, birds, a sheep field", opensfxCat},
}

const (
	allisonDir         = "/usr/share/asterisk/sounds/en_US_f_Allison"
	allisonTranscripts = "/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz"
	codec2Dir          = "/usr/share/codec2"
	klettresDir        = "/usr/share/klettres"
	mohDir             = "/usr/share/asterisk/moh"
	lmmsDir            = "/usr/share/lmms/samples"
	soundFont          = "/usr/share/sounds/sf2/TimGM6mb.sf2"
	opensfxCat         = "/usr/share/games/openttd/baseset/opensfx/opensfx.cat"
)

// Licences, as the packages' copyright files give them for these files.
const (
	licAsterisk = "CC-BY-SA-3.0"
	licCodec2   = "LGPL-2.1"
	licKlettres = "GPL-2+"
	licMOH      = "Creative Commons Attribution-ShareAlike 3.0"
	licNever    = "GPL-2+"
	licLMMS     = "GPL-2+"
	licTimGM    = "GPL-2"
	licOpenSFX  = "CC-BY-SA-3.0" // the package's grant for src/wav/*; each sound names its own CC licence too
)

// Utterance is one recording of one speaker.
type Utterance struct {
	// Speaker is the unit of the split: a named speaker, or the recording
	// where the package does not say who speaks.
	Speaker string
	// Lang is the language (BCP 47).
	Lang string
	// Transcript is what is said, or empty where the package gives none.
	Transcript string
	Samples    []float64
	Origin     Origin
}

// speakerHalf assigns each speaker to a half. The split is by speaker
// (never one in both halves), written out so that it cannot move: the
// only English speaker with transcripts (Allison) is held out, because
// the report's word error rates need transcripts; of codec2's speakers
// and klettres's languages, alternate ones in sorted order go to each
// half.
var speakerHalf = map[string]Half{
	"asterisk/allison": HeldOut,
	"asterisk/june":    Tuning,
	"asterisk/carlo":   Tuning,
	// codec2-examples: the file names name the speaker or the recording.
	"codec2/ve9qrp":   HeldOut,
	"codec2/vk5qi":    HeldOut,
	"codec2/hts2":     HeldOut,
	"codec2/forig":    HeldOut,
	"codec2/mmt1":     HeldOut,
	"codec2/big_dog":  HeldOut,
	"codec2/kristoff": HeldOut,
	"codec2/hts1":     Tuning,
	"codec2/morig":    Tuning,
	"codec2/cross":    Tuning,
	"codec2/16k":      Tuning,
	"codec2/wia":      Tuning,
	"codec2/cq_ref":   Tuning,
	"codec2/g3plx":    Tuning,
}

// codec2Files are the speech recordings of codec2-examples. Left out:
// david4.wav and vk2tpm_004.wav (modem signals, no speech: voicing 0.2),
// hts.raw (hts1 and hts2 joined), all.wav (several joined), the codec's
// outputs (f2400, m2400) and the test signals.
var codec2Files = map[string]string{
	"codec2/ve9qrp":   "wav/ve9qrp.wav",
	"codec2/vk5qi":    "wav/vk5qi.wav",
	"codec2/hts2":     "raw/hts2.raw",
	"codec2/forig":    "wav/forig.wav",
	"codec2/mmt1":     "wav/mmt1.wav",
	"codec2/big_dog":  "wav/big_dog.wav",
	"codec2/kristoff": "raw/kristoff.raw",
	"codec2/hts1":     "raw/hts1.raw",
	"codec2/morig":    "wav/morig.wav",
	"codec2/cross":    "wav/cross.wav",
	"codec2/16k":      "raw/speech_orig_16k.wav",
	"codec2/wia":      "wav/wia_16kHz.wav",
	"codec2/cq_ref":   "raw/cq_ref.raw",
	"codec2/g3plx":    "raw/g3plx.raw",
}

// klettresLangs lists klettres's voices (one speaker per language
// folder); alternate ones in this sorted order go to each half.
func klettresLangs() []string {
	ents, _ := os.ReadDir(klettresDir)
	var langs []string
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "icons" || e.Name() == "pics" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(klettresDir, e.Name(), "*", "*.ogg")); len(m) > 0 {
			langs = append(langs, e.Name())
		}
	}
	sort.Strings(langs)
	return langs
}

// klettresPerFolder is how many recordings of each of a voice's folders
// (letters, syllables) the corpus takes, the first in sorted order: enough
// for a clip and a talker of babble.
const klettresPerFolder = 12

func klettresFiles(lang string) []string {
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(klettresDir, lang, "*"))
	sort.Strings(dirs)
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.ogg"))
		sort.Strings(files)
		out = append(out, files[:min(len(files), klettresPerFolder)]...)
	}
	return out
}

func klettresHalf(lang string) Half {
	for i, l := range klettresLangs() {
		if l == lang {
			if i%2 == 0 {
				return Tuning
			}
			return HeldOut
		}
	}
	return 0
}

// asteriskVoice is a voice of Asterisk's core prompts.
type asteriskVoice struct {
	speaker, lang, dir, transcripts, pkg, license string
}

// asteriskVoices are the voices of the prompts: English and French under
// CC-BY-SA-3.0, Italian (it-* files) under CC-BY-3.0. The Mexican Spanish
// prompts are Allison's voice too, so they are not taken.
var asteriskVoices = []asteriskVoice{
	{"asterisk/allison", "en-US", allisonDir, allisonTranscripts, "asterisk-core-sounds-en-g722", licAsterisk},
	{"asterisk/june", "fr-CA", "/usr/share/asterisk/sounds/fr_CA_f_June", "/usr/share/doc/asterisk-core-sounds-fr/core-sounds-fr.txt.gz", "asterisk-core-sounds-fr-g722", licAsterisk},
	{"asterisk/carlo", "it-IT", "/usr/share/asterisk/sounds/it_IT_m_Carlo", "/usr/share/doc/asterisk-core-sounds-it/core-sounds-it.txt.gz", "asterisk-core-sounds-it-g722", "CC-BY-3.0"},
}

// promptMinWords is the fewest words of a prompt the corpus takes: the
// one- and two-word prompts ("Activated.") are too short to carry a pause,
// a breath or a word error rate.
const promptMinWords = 5

// promptsPerVoice is how many prompts of each voice the corpus takes, the
// first in sorted order: about ten minutes each.
const promptsPerVoice = 120

// prompts returns the voice's prompts that are speech (not tones), with
// their transcripts.
func (v asteriskVoice) prompts() (map[string]string, error) {
	f, err := os.Open(v.transcripts)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(z)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "\ufeff")
		if strings.HasPrefix(line, ";") {
			continue
		}
		name, text, ok := strings.Cut(line, ":")
		text = strings.TrimSpace(text)
		if !ok || len(strings.Fields(text)) < promptMinWords || strings.ContainsAny(text, "[]") || strings.Contains(name, " ") {
			continue
		}
		if _, err := os.Stat(filepath.Join(v.dir, name+".g722")); err != nil {
			continue
		}
		out[name] = text
	}
	return out, sc.Err()
}

// Speech returns the utterances of the half, grouped by speaker, speakers
// sorted.
func speechOf(h Half) ([][]Utterance, error) {
	var out [][]Utterance
	for _, v := range asteriskVoices {
		if speakerHalf[v.speaker] != h {
			continue
		}
		prompts, err := v.prompts()
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(prompts))
		for n := range prompts {
			names = append(names, n)
		}
		sort.Strings(names)
		names = names[:min(len(names), promptsPerVoice)]
		paths := make([]string, len(names))
		for i, n := range names {
			paths[i] = filepath.Join(v.dir, n+".g722")
		}
		xs, err := decodeAll(paths, 0)
		if err != nil {
			return nil, err
		}
		var us []Utterance
		for i, n := range names {
			us = append(us, Utterance{Speaker: v.speaker, Lang: v.lang, Transcript: prompts[n], Samples: xs[i],
				Origin: Origin{Package: v.pkg, Path: paths[i], License: v.license,
					Note: "transcript from " + filepath.Base(v.transcripts)}})
		}
		out = append(out, us)
	}
	ids := make([]string, 0, len(codec2Files))
	for id := range codec2Files {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if speakerHalf[id] != h {
			continue
		}
		p := filepath.Join(codec2Dir, codec2Files[id])
		x, err := decode(p)
		if err != nil {
			return nil, err
		}
		out = append(out, []Utterance{{Speaker: id, Lang: "en", Samples: x, Origin: Origin{Package: "codec2-examples", Path: p, License: licCodec2}}})
	}
	for _, lang := range klettresLangs() {
		if klettresHalf(lang) != h {
			continue
		}
		files := klettresFiles(lang)
		xs, err := decodeAll(files, 0)
		if err != nil {
			return nil, err
		}
		var us []Utterance
		for i, p := range files {
			us = append(us, Utterance{Speaker: "klettres/" + lang, Lang: strings.ReplaceAll(lang, "_", "-"),
				Transcript: strings.TrimSuffix(filepath.Base(p), ".ogg"), Samples: xs[i],
				Origin: Origin{Package: "klettres-data", Path: p, License: licKlettres}})
		}
		out = append(out, us)
	}
	return out, nil
}

// opensfxSound returns sound i of OpenSFX's catalogue file: a table of
// (offset, size) pairs, each entry a length-prefixed name followed by a
// RIFF WAV file.
func opensfxSound(i int) (data []byte, name string, err error) {
	b, err := os.ReadFile(opensfxCat)
	if err != nil {
		return nil, "", err
	}
	if len(b) < 8 {
		return nil, "", fmt.Errorf("%s: too short", opensfxCat)
	}
	n := int(binary.LittleEndian.Uint32(b)&0x7fffffff) / 8
	if i < 0 || i >= n || 8*i+8 > len(b) {
		return nil, "", fmt.Errorf("%s: no sound %d of %d", opensfxCat, i, n)
	}
	off := int(binary.LittleEndian.Uint32(b[8*i:]) & 0x7fffffff)
	size := int(binary.LittleEndian.Uint32(b[8*i+4:]))
	if off >= len(b) || off+size > len(b) {
		return nil, "", fmt.Errorf("%s: sound %d out of the file", opensfxCat, i)
	}
	nl := int(b[off])
	if off+1+nl > len(b) {
		return nil, "", fmt.Errorf("%s: sound %d: bad name", opensfxCat, i)
	}
	name = strings.TrimRight(string(b[off+1:off+1+nl]), "\x00")
	wav := b[off+1+nl : off+size]
	if len(wav) < 12 || string(wav[:4]) != "RIFF" {
		return nil, "", fmt.Errorf("%s: sound %d is not RIFF", opensfxCat, i)
	}
	return wav, name, nil
}

// decodeOpenSFX decodes sound i of the catalogue to mono at Rate.
func decodeOpenSFX(i int) ([]float64, string, error) {
	wav, name, err := opensfxSound(i)
	if err != nil {
		return nil, "", err
	}
	x, err := cached(fmt.Sprintf("opensfx|%d|%d", i, len(wav)), func() ([]float64, error) {
		return runF32("ffmpeg", []string{"-nostdin", "-v", "error", "-f", "wav", "-i", "-", "-ac", "1",
			"-af", "aresample=resampler=soxr", "-ar", fmt.Sprint(Rate), "-f", "f32le", "-"}, wav)
	})
	return x, name, err
}
