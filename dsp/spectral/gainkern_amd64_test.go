//go:build !purego

package spectral

import (
	"context"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// Every node gives the same samples, bit for bit, with the AVX2 kernels of
// the gain and with the Go loops.
func TestGainKernelsKeepOutput(t *testing.T) {
	if !useGainKernels {
		t.Skip("the CPU has no AVX2")
	}
	in := stereoTest(fs, 3.3)
	p := analyse(t, in, ProfilerOptions{})
	run := func(c nodeCase, kernels bool) audio.Buffer {
		defer func(u bool) { useGainKernels = u }(useGainKernels)
		useGainKernels = kernels
		src, err := c.open(audio.NewBufferSource(in, fs), p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := audio.ReadAll(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range nodeCases() {
		a, b := run(c, true), run(c, false)
		for ch := range b {
			for i := range b[ch] {
				if math.Float64bits(a[ch][i]) != math.Float64bits(b[ch][i]) {
					t.Fatalf("%s: channel %d frame %d: %v with the kernels, %v without", c.name, ch, i, a[ch][i], b[ch][i])
				}
			}
		}
	}
}
