package loudness_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/loudness"
)

// ebuDir finds ../shared/testdata/ebu-loudness next to the module root.
func ebuDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "testdata", "ebu-loudness")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("official EBU test files not present: %v", err)
	}
	return d
}

// TestOfficialEBUFiles runs the EBU Tech 3341/3342 minimum-requirements
// files that are present against the expected responses of the tables.
func TestOfficialEBUFiles(t *testing.T) {
	dir := ebuDir(t)
	type expect struct {
		i, m, s, tp, lra float64 // NaN: not checked
	}
	nan := math.NaN()
	tp := func(v float64) expect { return expect{nan, nan, nan, v, nan} }
	want := map[string]expect{
		"3341-1": {-23, -23, -23, nan, nan}, "3341-2": {-33, -33, -33, nan, nan},
		"3341-3": {-23, nan, nan, nan, nan}, "3341-4": {-23, nan, nan, nan, nan},
		"3341-5": {-23, nan, nan, nan, nan}, "3341-6": {-23, nan, nan, nan, nan},
		"3341-7": {-23, nan, nan, nan, nan}, "3341-8": {-23, nan, nan, nan, nan},
		"3341-9": {nan, nan, -23, nan, nan}, "3341-10": {nan, nan, -23, nan, nan},
		"3341-12": {nan, -23, nan, nan, nan}, "3341-13": {nan, -23, nan, nan, nan},
		"3341-15": tp(-6), "3341-16": tp(-6), "3341-17": tp(-6), "3341-18": tp(-6), "3341-19": tp(3),
		"3341-20": tp(0), "3341-21": tp(0), "3341-22": tp(0), "3341-23": tp(0),
		"3342-1": {nan, nan, nan, nan, 10}, "3342-2": {nan, nan, nan, nan, 5}, "3342-3": {nan, nan, nan, nan, 20},
		"3342-4": {nan, nan, nan, nan, 15}, "3342-5": {nan, nan, nan, nan, 5}, "3342-6": {nan, nan, nan, nan, 15},
	}
	name := regexp.MustCompile(`^seq-(334[12])-(\d+)(-\d+)?-\d+bit\.wav$`)
	files, _ := filepath.Glob(filepath.Join(dir, "*.wav"))
	ran := 0
	for _, f := range files {
		mm := name.FindStringSubmatch(filepath.Base(f))
		if mm == nil {
			continue
		}
		n, _ := strconv.Atoi(mm[2])
		w, ok := want[fmt.Sprintf("%s-%d", mm[1], n)]
		if !ok {
			continue
		}
		ran++
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, err := audio.Open(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			r, err := loudness.Measure(context.Background(), d, loudness.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got, want, lo, hi float64) {
				if math.IsNaN(want) {
					return
				}
				if !(got >= want+lo && got <= want+hi) {
					t.Errorf("%s = %.3f, want %.1f (%+.1f/%+.1f)", what, got, want, lo, hi)
				}
			}
			check("I", r.Integrated, w.i, -0.1, 0.1)
			check("max M", r.MaxMomentary, w.m, -0.1, 0.1)
			check("max S", r.MaxShortTerm, w.s, -0.1, 0.1)
			check("true peak", r.TruePeak, w.tp, -0.4, 0.2)
			check("LRA", r.LRA, w.lra, -1, 1)
			t.Logf("I %.2f M %.2f S %.2f LRA %.2f TP %.2f", r.Integrated, r.MaxMomentary, r.MaxShortTerm, r.LRA, r.TruePeak)
		})
	}
	if ran == 0 {
		t.Skip("no EBU test file found in " + dir)
	}
}
