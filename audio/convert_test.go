package audio

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPCMRoundTripIsBitExact(t *testing.T) {
	for _, e := range []SampleEncoding{Uint8, Int16, Int24, Int32, Float32, Float64} {
		t.Run(e.String(), func(t *testing.T) {
			const ch, frames = 3, 1000
			src := make([]byte, ch*frames*e.Bytes())
			// Every byte pattern is a valid integer sample; for floats keep
			// values finite by deriving them from a ramp.
			for i := range src {
				src[i] = byte(i*131 + i/7)
			}
			if e == Float32 || e == Float64 {
				b := NewBuffer(ch, frames)
				for c := range b {
					for i := range b[c] {
						b[c][i] = math.Sin(float64(i*(c+1))) * 0.9
					}
				}
				EncodePCM(src, b, 0, frames, e)
			}
			buf := NewBuffer(ch, frames)
			if n := DecodePCM(buf, 0, src, e); n != frames {
				t.Fatalf("DecodePCM converted %d frames, want %d", n, frames)
			}
			out := make([]byte, len(src))
			if clipped := EncodePCM(out, buf, 0, frames, e); clipped != 0 {
				t.Fatalf("round trip clipped %d samples", clipped)
			}
			for i := range src {
				if src[i] != out[i] {
					t.Fatalf("byte %d: got %#x, want %#x", i, out[i], src[i])
				}
			}
		})
	}
}

func TestDecodePCMScaling(t *testing.T) {
	tests := []struct {
		e    SampleEncoding
		in   []byte
		want float64
	}{
		{Uint8, []byte{0}, -1},
		{Uint8, []byte{128}, 0},
		{Int16, []byte{0x00, 0x80}, -1},
		{Int16, []byte{0xff, 0x7f}, 32767.0 / 32768},
		{Int24, []byte{0x00, 0x00, 0x80}, -1},
		{Int24, []byte{0x00, 0x00, 0x40}, 0.5},
		{Int32, []byte{0x00, 0x00, 0x00, 0xc0}, -0.5},
		{Float32, []byte{0x00, 0x00, 0x80, 0x3f}, 1},
	}
	for _, tt := range tests {
		b := NewBuffer(1, 1)
		DecodePCM(b, 0, tt.in, tt.e)
		if b[0][0] != tt.want {
			t.Errorf("%v % x = %v, want %v", tt.e, tt.in, b[0][0], tt.want)
		}
	}
}

func TestEncodePCMClipsAndCounts(t *testing.T) {
	b := Buffer{{1.5, -1.5, 0.25, math.NaN(), 1.0}}
	out := make([]byte, 2*5)
	if got := EncodePCM(out, b, 0, 5, Int16); got != 3 {
		t.Errorf("clipped = %d, want 3 (two overs and a NaN; 1.0 saturates without counting)", got)
	}
	back := NewBuffer(1, 5)
	DecodePCM(back, 0, out, Int16)
	want := []float64{32767.0 / 32768, -1, 0.25, 0, 32767.0 / 32768}
	for i := range want {
		if back[0][i] != want[i] {
			t.Errorf("sample %d = %v, want %v", i, back[0][i], want[i])
		}
	}
}

func TestFloatToIntRoundsToNearest(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		bits int
		want int32
	}{
		{0.4 / 32768, 16, 0},
		{0.6 / 32768, 16, 1},
		{-0.6 / 32768, 16, -1},
		{-1, 24, -8388608},
		{0.5, 8, 64},
	} {
		if got, _ := FloatToInt(tt.x, tt.bits); got != tt.want {
			t.Errorf("FloatToInt(%v, %d) = %d, want %d", tt.x, tt.bits, got, tt.want)
		}
		if tt.want != 0 && IntToFloat(tt.want, tt.bits) == 0 {
			t.Errorf("IntToFloat lost the value %d", tt.want)
		}
	}
}

func BenchmarkDecodePCMStereo16(b *testing.B) {
	const frames = 4096
	src := make([]byte, frames*4)
	buf := NewBuffer(2, frames)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		DecodePCM(buf, 0, src, Int16)
	}
}

func BenchmarkEncodePCMStereo16(b *testing.B) {
	const frames = 4096
	src := NewBuffer(2, frames)
	for c := range src {
		for i := range src[c] {
			src[c][i] = math.Sin(float64(i)) * 0.7
		}
	}
	dst := make([]byte, frames*4)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		EncodePCM(dst, src, 0, frames, Int16)
	}
}

// 16-bit stereo, which the SSE2 kernels take where there are some, encodes
// and decodes exactly as two mono channels do (the plain loops): every
// byte and the clip count, with saturation, NaN, ties and signed zeros
// scattered among ordinary samples, at odd and even lengths and offsets.
func TestStereo16IsMono(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float64{1, -1, 1.5, -1.5, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.5 / 32768, 1.5 / 32768, -0.5 / 32768, 32767.5 / 32768, -32768.5 / 32768, 0.99999}
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1001} {
		for _, rare := range []bool{false, true} {
			src := NewBuffer(2, n+3)
			for c := range src {
				for i := range src[c] {
					src[c][i] = r.NormFloat64() * 0.3
					if rare && r.IntN(20) == 0 {
						src[c][i] = special[r.IntN(len(special))]
					}
				}
			}
			from := n % 3
			got := make([]byte, 4*n)
			clipped := EncodePCM(got, src, from, n, Int16)
			want := make([]byte, 4*n)
			wantClipped := 0
			for c := range src {
				mono := make([]byte, 2*n)
				wantClipped += EncodePCM(mono, Buffer{src[c]}, from, n, Int16)
				for i := range n {
					copy(want[4*i+2*c:4*i+2*c+2], mono[2*i:2*i+2])
				}
			}
			if !bytes.Equal(got, want) || clipped != wantClipped {
				t.Fatalf("%d frames (specials %v): clipped %d, want %d; bytes equal %v", n, rare, clipped, wantClipped, bytes.Equal(got, want))
			}
			dec := NewBuffer(2, n+1)
			if k := DecodePCM(dec, 1, got, Int16); k != n {
				t.Fatalf("decoded %d frames, want %d", k, n)
			}
			for c := range dec {
				mono := make([]byte, 2*n)
				for i := range n {
					copy(mono[2*i:2*i+2], got[4*i+2*c:4*i+2*c+2])
				}
				ref := NewBuffer(1, n)
				DecodePCM(ref, 0, mono, Int16)
				for i := range n {
					if math.Float64bits(dec[c][1+i]) != math.Float64bits(ref[0][i]) {
						t.Fatalf("%d frames: channel %d frame %d decodes to %v, mono %v", n, c, i, dec[c][1+i], ref[0][i])
					}
				}
			}
		}
	}
}
