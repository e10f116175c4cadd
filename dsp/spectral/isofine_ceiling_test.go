package spectral

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// TestIsoFineCeiling measures, as TestIsolationCeiling does (tuning half,
// babble and music at 5-15 dB SNR, through the product), what a per-bin
// stage after the band gains could add under a few kHz:
//
//	go test ./dsp/spectral -run TestIsoFineCeiling -v -args -isoceiling all -realfull
//
// With -isoceilval it measures on TestFitIsoFine's validation mixes
// instead (speakers neither network was fitted on: the tuning half's own
// babble and music mixes are all of speakers they were fitted on).
//
// Oracle: the network's gains (or the oracle band gains) with the ideal
// ratio mask under f, or times the ideal mask's shape within the band (the
// per-bin IRM over the band IRM spread to the bin). Blind: the band gain
// reshaped within its band by a cue of the bin, keeping the speech energy
// the band gain gives the band (reshape).
var isoFineNets = flag.String("finenets", "", "TestIsoFineCeiling: per-bin networks written by TestFitIsoFine -finesave, comma-separated, measured as masks fine1...")

func TestIsoFineCeiling(t *testing.T) {
	if *isoCeiling == "" {
		t.Skip("measures per-bin refinements of speech isolation's mask on the tuning half with -isoceiling")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	mixes := isoCeilingMixes(c)
	if *isoCeilVal {
		mixes = isoValMixes(c) // isodiag_test.go
	}
	bm := newBandMapN(isoBands, fs, FFTSize(fs))
	kOf := func(hz float64) float64 { return hz * float64(FFTSize(fs)) / fs }
	irm := (*isoMixFrames).irm
	net := func(mf *isoMixFrames) [][]float64 { return mf.binGains(bm, mf.net) }
	orc := func(mf *isoMixFrames) [][]float64 { return mf.binGains(bm, mf.bandIRM(bm)) }
	// corr multiplies g under hz by the ideal mask over the oracle band
	// gain spread to the bin.
	corr := func(mf *isoMixFrames, g [][]float64, hz float64) [][]float64 {
		ir, ob := irm(mf), orc(mf)
		for f := range g {
			for k := 0; k < int(kOf(hz)); k++ {
				if ob[f][k] > 1e-6 {
					g[f][k] = min(1, g[f][k]*ir[f][k]/ob[f][k])
				} else {
					g[f][k] = ir[f][k]
				}
			}
		}
		return g
	}
	masks := map[string]func(mf *isoMixFrames) [][]float64{
		"net":  nil, // the product: band gains and the per-bin stage
		"band": net, // the band gains alone
		"irm":  irm,
	}
	// Per-bin networks of -finenets run in the product instead of
	// isofinemodel.go's, as masks fine1...
	fineNets := map[string]*isoFineNet{}
	if *isoFineNets != "" {
		for i, path := range strings.Split(*isoFineNets, ",") {
			n, err := loadIsoFineNet(path)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("fine%d", i+1)
			fineNets[name] = n
			masks[name] = nil
		}
	}
	for _, hz := range []float64{1000, 1500, 2000} {
		s := map[float64]string{1000: "1k", 1500: "1.5k", 2000: "2k"}[hz]
		masks["net+irm<"+s] = func(mf *isoMixFrames) [][]float64 { return splice(irm(mf), net(mf), kOf(hz)) }
		masks["net*corr<"+s] = func(mf *isoMixFrames) [][]float64 { return corr(mf, net(mf), hz) }
		masks["oracle+irm<"+s] = func(mf *isoMixFrames) [][]float64 { return splice(irm(mf), orc(mf), kOf(hz)) }
	}
	for _, a := range []float64{0.5, 1} {
		masks[fmtA("net+peak", a)] = func(mf *isoMixFrames) [][]float64 {
			return mf.reshape(bm, net(mf), mf.peakiness(a), kOf(1500))
		}
		masks[fmtA("net+cont", a)] = func(mf *isoMixFrames) [][]float64 {
			return mf.reshape(bm, net(mf), mf.continuity(a), kOf(1500))
		}
		masks[fmtA("net+harm", a)] = func(mf *isoMixFrames) [][]float64 {
			return mf.reshape(bm, net(mf), mf.harmonic(a), kOf(1500))
		}
	}
	// The stage from hz up, the band gains under (setLow), as masks
	// net>hz (or fineN>hz, the nets of -finenets).
	lows := map[string]float64{}
	for _, hz := range []float64{60, 100, 150, 250, 400} {
		for _, base := range append([]string{"net"}, slices.Sorted(maps.Keys(fineNets))...) {
			name := fmt.Sprintf("%s>%g", base, hz)
			masks[name], lows[name] = nil, hz
		}
	}
	// The stage up to hz, the band gains over (setHigh), as masks
	// net<hz (fineN<hz), with the band gains under isoFineLowHz.
	highs := map[string]float64{}
	for _, hz := range []float64{1000, 1500} {
		for _, base := range append([]string{"net"}, slices.Sorted(maps.Keys(fineNets))...) {
			name := fmt.Sprintf("%s<%g", base, hz)
			masks[name], highs[name] = nil, hz
		}
	}
	isoCeilingRun(t, mixes, nil, isoCeilingNames(t, masks), masks, func(name string, iso *isolator, _ *isoMixFrames) {
		base := name
		if hz, ok := lows[name]; ok {
			iso.fine.setLow(hz)
			base, _, _ = strings.Cut(name, ">")
		}
		if hz, ok := highs[name]; ok {
			iso.fine.setHigh(hz*isoFineFadeHz/isoFineTopHz, hz)
			base, _, _ = strings.Cut(name, "<")
		}
		if n := fineNets[base]; n != nil {
			iso.fineNet = n
		}
	})
}

func fmtA(name string, a float64) string {
	if a == 1 {
		return name
	}
	return fmt.Sprintf("%s%g", name, a)
}

// reshape shares the speech the band gains g give each band among its
// bins under kTop in proportion to the cue c times the bin's power, so
// that each band keeps the speech energy g gives it (the comb's rule,
// isoceiling_test.go).
func (mf *isoMixFrames) reshape(bm bandMapN, g, c [][]float64, kTop float64) [][]float64 {
	out := make([][]float64, mf.frames)
	num, den := make([]float64, bm.nb), make([]float64, bm.nb)
	for f := range out {
		out[f] = append([]float64(nil), g[f]...)
		clear(num)
		clear(den)
		x := mf.x[f]
		for k, p := range x {
			b, u := bm.lo[k], bm.up[k]
			num[b] += (1 - u) * c[f][k] * p
			num[b+1] += u * c[f][k] * p
			den[b] += (1 - u) * p
			den[b+1] += u * p
		}
		mean := func(b int) float64 {
			if den[b] <= 0 {
				return 1
			}
			return num[b] / den[b]
		}
		for k := 0; k < int(kTop) && k < len(x); k++ {
			b, u := bm.lo[k], bm.up[k]
			if m := (1-u)*mean(b) + u*mean(b+1); m > 0 {
				out[f][k] = min(1, g[f][k]*c[f][k]/m)
			}
		}
	}
	return out
}

// peakiness is each bin's power over the mean of its +-2 neighbours',
// to the power a (at most 1 after dividing by 4).
func (mf *isoMixFrames) peakiness(a float64) [][]float64 {
	out := make([][]float64, mf.frames)
	for f, x := range mf.x {
		out[f] = make([]float64, len(x))
		for k := range x {
			var s float64
			n := 0
			for d := -2; d <= 2; d++ {
				if j := k + d; d != 0 && j >= 0 && j < len(x) {
					s += x[j]
					n++
				}
			}
			r := 1.0
			if s > 0 {
				r = x[k] * float64(n) / s
			}
			out[f][k] = math.Pow(min(r/4, 1), a)
		}
	}
	return out
}

// isPeak says whether bin k of x is a local maximum over +-2 bins.
func isPeak(x []float64, k int) bool {
	for d := -2; d <= 2; d++ {
		if j := k + d; d != 0 && j >= 0 && j < len(x) && x[j] >= x[k] {
			return false
		}
	}
	return true
}

// continuity is, per bin, the share of the frames f-2..f+2 in which the
// bin or a neighbour is a local maximum (a harmonic that glides), to
// the power a, held above 0.1.
func (mf *isoMixFrames) continuity(a float64) [][]float64 {
	F := mf.frames
	peak := make([][]bool, F)
	for f, x := range mf.x {
		peak[f] = make([]bool, len(x))
		for k := range x {
			peak[f][k] = isPeak(x, k)
		}
	}
	out := make([][]float64, F)
	for f := range out {
		out[f] = make([]float64, mf.bins)
		for k := range out[f] {
			n := 0
			for d := -2; d <= 2; d++ {
				q := f + d
				if q < 0 || q >= F {
					continue
				}
				for j := max(0, k-1); j <= min(mf.bins-1, k+1); j++ {
					if peak[q][j] {
						n++
						break
					}
				}
			}
			out[f][k] = math.Pow(max(0.1, float64(n)/5), a)
		}
	}
	return out
}

// harmonic is a comb at the mixture's pitch (the front's), cos^2(pi d)
// with d the bin's distance from the nearest harmonic, to the power a,
// held above 0.1; 1 on frames without a pitch.
func (mf *isoMixFrames) harmonic(a float64) [][]float64 {
	hz := float64(fs) / float64(mf.n)
	out := make([][]float64, mf.frames)
	for f := range out {
		out[f] = make([]float64, mf.bins)
		for k := range out[f] {
			out[f][k] = 1
			if mf.lag[f] == 0 || mf.harm[f] < 0.4 {
				continue
			}
			r := float64(k) * hz * float64(mf.lag[f]) / fs
			cs := math.Cos(math.Pi * (r - math.Round(r)))
			out[f][k] = math.Pow(max(0.1, cs*cs), a)
		}
	}
	return out
}
