package spectral

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// Speech isolation's network learned the eleven speakers of the corpus's
// tuning half by heart (isonet.go's doc): more voices and more music than
// the corpus holds are what it lacks. TestFitIsolation adds, to the part
// it fits on only, recordings of Debian packages the corpus does not take
// from, so that the held-out half stays unheard and the validation part
// (the tuning half's own speakers kept back) still measures what the
// network does on voices it was not fitted on: the voices of
// internal/realaudio's fit-only pool (FitSpeech; -fitextra names its
// sets), hedgewars's and game music here. -fitfold holds some of the
// pool's voices back as a second validation (isoFolds). CI does not
// install these: only refitting needs them; isomodel.go is what runs.
//
// What each set did to the per-band network's validation loss (tuning
// half, 2026-11-28; corpus alone 0.0651 best, 0.065-0.080 over the
// epochs): ktuberling's words at 0.3 of the mixes 0.0609 best, 0.061-0.078,
// lower from the fourth epoch on (kept); the Russian prompts (8 kHz then;
// the pool has them at 16 kHz) and
// hedgewars's shouted voices as two thirds of the speech, with the game
// music, 0.080-0.099: worse. The game music alone made the validation
// music worse too, also with whole pieces of the corpus's music held back
// for validation (-fitvalpieces; 0.077-0.088 against 0.065-0.080 for the
// corpus alone): the held-out half's music is made the way the tuning
// half's is (internal/realaudio's hold music, instrument samples and
// General MIDI pieces), which game soundtracks are not.
var (
	fitExtra      = flag.String("fitextra", isoFitExtraSets, "TestFitIsolation: the extra material's sets (internal/realaudio's fit-only pool: ktuberling, fillets, prompts16k, prompts8k; and music, hedgewars; empty: none)")
	fitFold       = flag.Int("fitfold", 0, "TestFitIsolation: hold back the pool's voices of fold 1 or 2 (isoFolds) from the fit and validate on them too (0: none)")
	fitValPieces  = flag.Bool("fitvalpieces", false, "TestFitIsolation: validate on whole pieces of music held back (false: on the last quarter of every piece)")
	fitExtraShare = flag.Float64("fitextrashare", isoFitExtraShare, "TestFitIsolation: the share of mixes whose speech is an extra speaker's")
)

// isoExtraVoice is one speaker of an extra package: the files matched by
// glob (patterns separated by ';'), sorted, the first max of them (0: all).
type isoExtraVoice struct {
	set, speaker, pkg, glob string
	max                     int
}

// isoExtraSpeech are the extra speakers outside internal/realaudio's
// fit-only pool (FitVoices, whose sets -fitextra names too):
// hedgewars's shouted game voices, left out of the pool (so are its Robot,
// a vocoder, and Singer, sung).
var isoExtraSpeech = func() []isoExtraVoice {
	var v []isoExtraVoice
	for _, name := range []string{"British", "Classic", "Default", "Default_es", "Default_pl", "Default_ru", "Default_uk",
		"HillBilly", "Mobster", "Pirate", "Russian", "Russian_pl", "Surfer"} {
		v = append(v, isoExtraVoice{"hedgewars", "hedgewars/" + name, "hedgewars-data", "/usr/share/games/hedgewars/Data/Sounds/voices/" + name + "/*.ogg", 0})
	}
	return v
}()

// isoExtraMusic are the extra pieces of music: game soundtracks of
// several kinds (orchestral, rock, electronic, folk), none in the corpus.
var isoExtraMusic = []isoExtraVoice{
	{"music", "hedgewars", "hedgewars-data", "/usr/share/games/hedgewars/Data/Music/*.ogg", 0},
	{"music", "frozen-bubble", "frozen-bubble-data", "/usr/share/games/frozen-bubble/snd/*zik*.ogg", 0},
	{"music", "neverball", "neverball-data", "/usr/share/games/neverball/bgm/*.ogg", 0},
}

// isoExtraMusicSec is how much of each extra piece is taken: enough for
// its kind, not so much that the corpus's own music is drowned out.
const isoExtraMusicSec = 60

func (v isoExtraVoice) files(tb testing.TB) []string {
	var files []string
	for _, g := range strings.Split(v.glob, ";") {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		tb.Fatalf("%s: nothing at %s: apt-get install %s (refitting only)", v.speaker, v.glob, v.pkg)
	}
	if v.max > 0 && len(files) > v.max {
		files = files[:v.max]
	}
	return files
}

// isoDecode returns the files one after another, mono at fs, each cut
// after seconds (0: whole), through ffmpeg.
func isoDecode(tb testing.TB, files []string, seconds float64) []float64 {
	var out []float64
	for at := 0; at < len(files); at += 64 {
		batch := files[at:min(len(files), at+64)]
		args := []string{"-nostdin", "-v", "error"}
		for _, f := range batch {
			if seconds > 0 {
				args = append(args, "-t", fmt.Sprint(seconds))
			}
			args = append(args, "-i", f)
		}
		var fl strings.Builder
		for i := range batch {
			fmt.Fprintf(&fl, "[%d:a]aformat=channel_layouts=mono,aresample=%d:resampler=soxr[a%d];", i, fs, i)
		}
		for i := range batch {
			fmt.Fprintf(&fl, "[a%d]", i)
		}
		fmt.Fprintf(&fl, "concat=n=%d:v=0:a=1[out]", len(batch))
		args = append(args, "-filter_complex", fl.String(), "-map", "[out]", "-f", "f32le", "-")
		cmd := exec.Command("ffmpeg", args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			tb.Fatalf("ffmpeg on %s...: %v: %s", batch[0], err, e.Bytes())
		}
		b := o.Bytes()
		for i := 0; i+4 <= len(b); i += 4 {
			u := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
			out = append(out, float64(math.Float32frombits(u)))
		}
	}
	return out
}

// isoCutClips cuts a speaker's speech into clips of 6 to 10 s, each cut at
// the quietest 100 ms there so that no word is split, and sets each to the
// corpus's active speech level.
func isoCutClips(speaker string, x []float64) []realaudio.Clip {
	var out []realaudio.Clip
	w := fs / 10
	for len(x) >= 3*fs {
		at := len(x)
		if len(x) > 10*fs {
			best := math.Inf(1)
			for i := 6 * fs; i+w <= 10*fs; i += w / 2 {
				if e := meanPower(x[i : i+w]); e < best {
					best, at = e, i+w/2
				}
			}
		}
		c := append([]float64(nil), x[:at]...)
		if a := realaudio.ActiveLevel(c); a > 0 {
			g := math.Pow(10, realaudio.SpeechDB/20) / math.Sqrt(a)
			for i := range c {
				c[i] *= g
			}
			out = append(out, realaudio.Clip{ID: fmt.Sprintf("%s#%d", speaker, len(out)), Speaker: speaker, Samples: c})
		}
		x = x[at:]
	}
	return out
}

// isoFolds are the fit-only pool's voices held back together by
// -fitfold: each fold a low and a high voice of Fish Fillets (of two
// languages) and read prompts. None is ktuberling's, so that the
// committed network (fitted with ktuberling's voices, none of these) is
// measured on the folds as one fitted without them.
var isoFolds = [][]string{
	nil,
	{"fillets/cs-big", "fillets/nl-small", "asterisk/menardi-it"},
	{"fillets/nl-big", "fillets/cs-small", "asterisk/ivrvoice-ru"},
}

// isoAddExtra adds the extra speakers (their clips, and their voices to
// the babble) and music to m, and logs what came from which package.
func isoAddExtra(t *testing.T, m *isoMaterial) { isoAddExtraFold(t, m, nil) }

// isoAddExtraFold is isoAddExtra where the voices of fold -fitfold go to
// fold's clips instead of m's (their voices are in the babble of both, as
// the corpus's validation speakers' are), if fold is not nil.
func isoAddExtraFold(t *testing.T, m *isoMaterial, fold *isoMaterial) {
	talker := make(map[string][]float64, len(m.talker))
	for k, v := range m.talker {
		talker[k] = v
	}
	m.talker = talker
	m.names = append([]string(nil), m.names...)
	sets := strings.Split(*fitExtra, ",")
	add := func(speaker, what string, x []float64) {
		clips := isoCutClips(speaker, x)
		if fold != nil && slices.Contains(isoFolds[*fitFold], speaker) {
			fold.clips = append(fold.clips, clips...)
			what += ", held back for validation"
		} else {
			m.extra = append(m.extra, clips...)
		}
		m.talker[speaker] = x
		m.names = append(m.names, speaker)
		t.Logf("extra speech: %s, %s, %.0f s, %d clips", speaker, what, float64(len(x))/fs, len(clips))
	}
	var pool []string
	for _, s := range realaudio.FitSets() {
		if slices.Contains(sets, s) {
			pool = append(pool, s)
		}
	}
	if len(pool) > 0 {
		speech, err := realaudio.FitSpeech(pool...)
		if err != nil {
			t.Fatal(err)
		}
		for i, us := range speech {
			n := 0
			for _, u := range us {
				n += len(u.Samples)
			}
			x := make([]float64, 0, n)
			for _, u := range us {
				x = append(x, u.Samples...)
			}
			speech[i] = nil
			add(us[0].Speaker, fmt.Sprintf("%d files of %s (%s)", len(us), us[0].Origin.Package, filepath.Dir(us[0].Origin.Path)), x)
		}
	}
	for _, v := range isoExtraSpeech {
		if !slices.Contains(sets, v.set) {
			continue
		}
		files := v.files(t)
		add(v.speaker, fmt.Sprintf("%d files of %s (%s)", len(files), v.pkg, filepath.Dir(files[0])), isoDecode(t, files, 0))
	}
	if len(m.extra) > 0 {
		m.extraShare = *fitExtraShare
	}
	for _, v := range isoExtraMusic {
		if !slices.Contains(sets, v.set) {
			continue
		}
		files := v.files(t)
		for _, f := range files {
			x := isoDecode(t, []string{f}, isoExtraMusicSec)
			m.music = append(m.music, x)
		}
		t.Logf("extra music: %s, %d pieces of %s (%s), up to %d s each", v.speaker, len(files), v.pkg, filepath.Dir(v.glob), isoExtraMusicSec)
	}
	if fold != nil {
		fold.talker, fold.names = m.talker, m.names
	}
}

// isoFitExtraSets are the extra sets the committed network (isomodel.go)
// was fitted with: ktuberling's words. Fitted with the whole fit-only
// pool instead (-fitextra ktuberling,fillets,prompts16k,prompts8k: Fish
// Fillets' four voices, Russian 16 kHz and Italian 8 kHz prompts; seed
// 30, kept epoch 9, validation loss 0.0607 against 0.0579), the network
// gained through the product on the validation speakers' mixes
// (TestIsolationCeiling -isoceilval; band gains only +2.49/+4.11 ->
// +2.68/+4.30 dB babble/music, with the per-bin stage as committed
// +2.48/+4.38 -> +2.72/+4.55, with it refitted on top +2.48/+4.67), but
// on the held-out half (TestRealSpeechIsolation -realfull, 2026-11-28)
// babble +3.78 -> +3.90 and music +3.97 -> +3.52: not kept. A fit holding
// fold 1's voices back (-fitfold 1) was no better on them than the
// committed network (-isoceilfold 1: -0.94/+2.29 against -1.00/+2.19; on
// these voices babble costs both networks dB), and one holding fold 2's
// back worse (+0.12/+1.45 against +0.63/+1.97; its loss on them fell
// under the committed network's, 0.0614, only in epochs the validation
// speakers did not choose). Within the seed's spread
// (0.2 dB on the validation mixes, isonet.go), more voices of these kinds
// did not move the network. A fit with the whole pool peaked at 5.9 GB
// of RSS, 4.2 GB under GOMEMLIMIT=4GiB with its clips levelled in place
// (isoCutClips copies them again, about 0.7 GB more: set GOMEMLIMIT).
// -fit refits the committed network to its 6th digit, not to the byte
// (same 763080 examples, epoch 15, validation 0.0579): ktuberling's words
// are now decoded file by file by internal/realaudio, not joined by
// ffmpeg's concat filter (isoDecode).
const isoFitExtraSets = "ktuberling"

// isoFitExtraShare is the share of the mixes whose speech is an extra
// speaker's: enough to widen the voices, not so much that the corpus's
// kind of speech (read prompts, spoken letters) becomes the exception.
const isoFitExtraShare = 0.3

// isoExtraPackages names the packages m's extra material came from.
func isoExtraPackages() string {
	var pkgs []string
	sets := strings.Split(*fitExtra, ",")
	for _, v := range realaudio.FitVoices {
		if slices.Contains(sets, v.Set) && !slices.Contains(pkgs, v.Package) {
			pkgs = append(pkgs, v.Package)
		}
	}
	for _, v := range append(slices.Clone(isoExtraSpeech), isoExtraMusic...) {
		if slices.Contains(sets, v.set) && !slices.Contains(pkgs, v.pkg) {
			pkgs = append(pkgs, v.pkg)
		}
	}
	if len(pkgs) == 0 {
		return "none"
	}
	return strings.Join(pkgs, ", ")
}
