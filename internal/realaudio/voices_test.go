package realaudio

import (
	"flag"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFitVoicesAreInNoHalf checks the fit-only pool against the halves'
// tables (without reading a recording: CI does not install the pool's
// packages): no speaker of the pool is one of the halves', no package of
// the pool is one the halves are built from, no recording of the pool
// lies in a folder the halves read, and ktuberling's languages are none
// of klettres's.
func TestFitVoicesAreInNoHalf(t *testing.T) {
	halfDirs := []string{codec2Dir, klettresDir}
	for _, v := range asteriskVoices {
		halfDirs = append(halfDirs, v.dir)
	}
	var klettres []string
	if testing.Short() {
		t.Log("-short: ktuberling's languages not checked against klettres-data's folders")
	} else {
		klettres = klettresLangs()
	}
	seen := map[string]bool{}
	for _, v := range FitVoices {
		if seen[v.Speaker] {
			t.Errorf("%s twice in FitVoices", v.Speaker)
		}
		seen[v.Speaker] = true
		if _, ok := speakerHalf[v.Speaker]; ok || strings.HasPrefix(v.Speaker, "klettres/") || strings.HasPrefix(v.Speaker, "codec2/") {
			t.Errorf("%s is a speaker of the halves", v.Speaker)
		}
		if slices.ContainsFunc(Packages, func(p Package) bool { return p.Name == v.Package }) {
			t.Errorf("%s: package %s is one the halves are built from", v.Speaker, v.Package)
		}
		if v.License == "" || v.RateHz <= 0 || v.Set == "" || v.Lang == "" || v.Kind == "" {
			t.Errorf("%s: licence, rate, set, language or kind missing: %+v", v.Speaker, v)
		}
		for _, g := range strings.Split(v.glob, ";") {
			for _, d := range halfDirs {
				if strings.HasPrefix(filepath.Clean(g), d+"/") {
					t.Errorf("%s: %s lies in %s, which the halves read", v.Speaker, g, d)
				}
			}
		}
		if lang, ok := strings.CutPrefix(v.Speaker, "ktuberling/"); ok && slices.ContainsFunc(klettres, func(l string) bool { return l == lang || strings.HasPrefix(l, lang+"_") }) {
			t.Errorf("%s: klettres-data has a voice of this language", v.Speaker)
		}
	}
	if len(FitPackages()) < 5 || len(FitSets()) < 3 {
		t.Errorf("packages %v, sets %v", FitPackages(), FitSets())
	}
}

var fitVoicesFlag = flag.Bool("fitvoices", false, "TestFitVoices: decode the fit-only pool (its packages installed) and log each voice")

// TestFitVoices decodes the fit-only pool (with -fitvoices: CI does not
// install its packages) and logs each voice's seconds and how far its
// floor lies under its speech; each voice must have 10 s of speech (a
// clip: ktuberling's languages hold a few words each).
func TestFitVoices(t *testing.T) {
	if !*fitVoicesFlag {
		t.Skip("decodes the fit-only pool with -fitvoices (its packages are not CI's)")
	}
	speech, err := FitSpeech()
	if err != nil {
		t.Fatal(err)
	}
	for i, us := range speech {
		v := FitVoices[i]
		var x []float64
		for _, u := range us {
			x = append(x, u.Samples...)
		}
		sec := float64(len(x)) / Rate
		t.Logf("%-22s %-10s %-5s %5d Hz %3d files %5.0f s, active %6.1f dBFS, floor %5.1f dB under, pitch %d Hz (%s, %s)",
			v.Speaker, v.Set, v.Lang, v.RateHz, len(us), sec, 10*math.Log10(ActiveLevel(x)+1e-30), FloorBelowDB(x), v.Pitch, v.Kind, v.Package)
		if sec < 10 {
			t.Errorf("%s: %.0f s of speech", v.Speaker, sec)
		}
	}
}
