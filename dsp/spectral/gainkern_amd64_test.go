//go:build !purego

package spectral

import (
	"context"
	"math"
	"math/cmplx"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// Every node gives the same samples, bit for bit, with the AVX2 kernels of
// the gain and with the Go loops.
func TestGainKernelsKeepOutput(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	in := stereoTest(fs, 3.3)
	p := analyse(t, in, ProfilerOptions{})
	run := func(c nodeCase, kernels bool) audio.Buffer {
		defer func(u bool) { useAVX2 = u }(useAVX2)
		useAVX2 = kernels
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

// addRamp gives the same sums with its AVX2 kernel as with the Go loop,
// its last frames included.
func TestAddRampKernelIsGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	defer func(u bool) { useAVX2 = u }(useAVX2)
	for n := range 40 {
		f := float64(n + 1)
		a, da := complex(0.3*f, -0.1), complex(1e-3, 2e-3/f)
		z, r := cmplx.Rect(1, 0.1*f), cmplx.Rect(1, 0.37+0.01*f)
		var got, want [40]float64
		for i := range n {
			got[i], want[i] = float64(i), float64(i)
		}
		useAVX2 = true
		addRamp(got[:n], a, da, z, r)
		useAVX2 = false
		addRamp(want[:n], a, da, z, r)
		for i := range n {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%d frames: frame %d %v with the kernel, %v without", n, i, got[i], want[i])
			}
		}
	}
}
