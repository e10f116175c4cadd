//go:build !purego

package spectral

import (
	"context"
	"math"
	"math/cmplx"
	"reflect"
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

// phasorTabs.dots gives dotTab's sums bit for bit, for every length and
// table count.
func TestDotsKernelIsGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	for tables := 1; tables <= 9; tables++ {
		re, im := make([][]float64, tables), make([][]float64, tables)
		for j := range re {
			re[j], im[j] = make([]float64, 50), make([]float64, 50)
			for i := range re[j] {
				z := cmplx.Rect(1, -0.37*float64((j+1)*i))
				re[j][i], im[j][i] = real(z), imag(z)
			}
		}
		p := newPhasorTabs(re, im)
		outR, outI := make([]float64, p.kp), make([]float64, p.kp)
		for n := 1; n <= 50; n++ {
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Sin(0.1*float64(i*i)) + 0.3
			}
			p.dots(x, outR, outI)
			for j := range tables {
				want := dotTab(x, re[j], im[j])
				if math.Float64bits(outR[j]) != math.Float64bits(real(want)) || math.Float64bits(outI[j]) != math.Float64bits(imag(want)) {
					t.Fatalf("%d tables, %d samples: table %d %v, dotTab %v", tables, n, j, complex(outR[j], outI[j]), want)
				}
			}
		}
	}
}

// The Profiler's hum detector gives the same Profile with the Goertzel
// kernel as with the Go loop.
func TestProfilerKernelsKeepProfile(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	defer func(u bool) { useAVX2 = u }(useAVX2)
	in := stereoTest(fs, 4.3)
	useAVX2 = true
	a := analyse(t, in, ProfilerOptions{})
	useAVX2 = false
	b := analyse(t, in, ProfilerOptions{})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("with the kernels %+v\nwithout %+v", a, b)
	}
	if a.Hum.Base != 50 {
		t.Fatalf("hum %+v, want 50 Hz", a.Hum)
	}
}
