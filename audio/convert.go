package audio

import (
	"encoding/binary"
	"fmt"
	"math"
)

// SampleEncoding is a little-endian interleaved PCM sample layout.
type SampleEncoding int

// The PCM encodings found in WAV files and raw pipes.
const (
	Uint8 SampleEncoding = iota + 1 // unsigned, offset 128 (8-bit WAV)
	Int16
	Int24
	Int32
	Float32
	Float64
)

// Bytes returns the size of one sample.
func (e SampleEncoding) Bytes() int {
	switch e {
	case Uint8:
		return 1
	case Int16:
		return 2
	case Int24:
		return 3
	case Int32, Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// Bits returns the precision of one sample.
func (e SampleEncoding) Bits() int { return e.Bytes() * 8 }

// String names the encoding.
func (e SampleEncoding) String() string {
	switch e {
	case Uint8:
		return "u8"
	case Int16:
		return "s16le"
	case Int24:
		return "s24le"
	case Int32:
		return "s32le"
	case Float32:
		return "f32le"
	case Float64:
		return "f64le"
	}
	return fmt.Sprintf("SampleEncoding(%d)", int(e))
}

// Integer scaling is by 2^(bits-1) both ways, so every integer sample maps to
// a float exactly and back to the same integer: round trips are bit-exact.
const (
	scale8  = 128.0
	scale16 = 32768.0
	scale24 = 8388608.0
	scale32 = 2147483648.0
)

// IntToFloat converts a signed integer sample of the given bit depth (1-32)
// to the nominal [-1, 1) range.
func IntToFloat(v int32, bits int) float64 {
	return float64(v) / float64(int64(1)<<(bits-1))
}

// FloatToInt converts x to a signed integer sample of the given bit depth
// (1-32) by rounding to nearest, without dither, clipping to the range. It
// reports whether it clipped.
func FloatToInt(x float64, bits int) (v int32, clipped bool) {
	full := float64(int64(1) << (bits - 1))
	return quantize(x, full, full-1, -full)
}

// quantize saturates at the integer range. Only samples outside the nominal
// [-1, 1] range (and NaN) count as clipped: +1.0 itself lands one step below
// full scale, which is the usual 0 dBFS convention, not distortion.
func quantize(x, scale, hi, lo float64) (int32, bool) {
	y := x * scale
	switch {
	case y >= hi:
		return int32(hi), x > 1
	case y <= lo:
		return int32(lo), x < -1
	case y != y: // NaN: silence, and count it as a fault
		return 0, true
	}
	return int32(math.Round(y)), false
}

// DecodePCM de-interleaves frames from src (little-endian samples in encoding
// e, len(dst) channels per frame) into dst starting at frame offset off, and
// returns the number of frames converted: the smaller of what src holds and
// what dst has room for.
func DecodePCM(dst Buffer, off int, src []byte, e SampleEncoding) int {
	ch := len(dst)
	frameBytes := ch * e.Bytes()
	n := len(src) / frameBytes
	if room := dst.Frames() - off; n > room {
		n = room
	}
	if n <= 0 {
		return 0
	}
	if ch == 2 {
		decodeStereo(dst[0][off:off+n], dst[1][off:off+n], src[:n*frameBytes], e)
		return n
	}
	for c := 0; c < ch; c++ {
		out := dst[c][off : off+n]
		p := c * e.Bytes()
		switch e {
		case Uint8:
			for i := range out {
				out[i] = float64(int(src[p])-128) / scale8
				p += frameBytes
			}
		case Int16:
			for i := range out {
				out[i] = float64(int16(binary.LittleEndian.Uint16(src[p:]))) / scale16
				p += frameBytes
			}
		case Int24:
			for i := range out {
				out[i] = float64(int32(uint32(src[p])<<8|uint32(src[p+1])<<16|uint32(src[p+2])<<24)>>8) / scale24
				p += frameBytes
			}
		case Int32:
			for i := range out {
				out[i] = float64(int32(binary.LittleEndian.Uint32(src[p:]))) / scale32
				p += frameBytes
			}
		case Float32:
			for i := range out {
				out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(src[p:])))
				p += frameBytes
			}
		case Float64:
			for i := range out {
				out[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[p:]))
				p += frameBytes
			}
		}
	}
	return n
}

// decodeStereo is the common case unrolled: one pass over src instead of two.
func decodeStereo(l, r []float64, src []byte, e SampleEncoding) {
	switch e {
	case Int16:
		for i := decodeStereo16Fast(l, r, src); i < len(l); i++ {
			p := src[i*4 : i*4+4]
			l[i] = float64(int16(binary.LittleEndian.Uint16(p))) / scale16
			r[i] = float64(int16(binary.LittleEndian.Uint16(p[2:]))) / scale16
		}
	case Int24:
		for i := range l {
			p := src[i*6 : i*6+6]
			l[i] = float64(int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24)>>8) / scale24
			r[i] = float64(int32(uint32(p[3])<<8|uint32(p[4])<<16|uint32(p[5])<<24)>>8) / scale24
		}
	case Float32:
		for i := range l {
			p := src[i*8 : i*8+8]
			l[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
			r[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p[4:])))
		}
	default:
		var pair Buffer = [][]float64{l, r}
		for c := range pair {
			fb := 2 * e.Bytes()
			one := src[c*e.Bytes():]
			for i := range pair[c] {
				pair[c][i] = decodeOne(one[i*fb:], e)
			}
		}
	}
}

func decodeOne(p []byte, e SampleEncoding) float64 {
	switch e {
	case Uint8:
		return float64(int(p[0])-128) / scale8
	case Int16:
		return float64(int16(binary.LittleEndian.Uint16(p))) / scale16
	case Int24:
		return float64(int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24)>>8) / scale24
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(p))) / scale32
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	case Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	return 0
}

// EncodePCM interleaves frames [from, from+n) of src into dst as little-endian
// samples in encoding e. dst must hold n*len(src)*e.Bytes() bytes. Integer
// encodings round to nearest (ties to even) without dither and saturate;
// the number of samples outside [-1, 1] (and NaNs) is returned. Float
// encodings are written as they are.
func EncodePCM(dst []byte, src Buffer, from, n int, e SampleEncoding) (clipped int) {
	ch := len(src)
	sb := e.Bytes()
	fb := ch * sb
	if e == Int16 && ch == 2 {
		// The kernel takes the frames up to the first that saturates.
		k := encodeStereo16Fast(dst, src[0][from:from+n], src[1][from:from+n])
		dst, from, n = dst[k*fb:], from+k, n-k
	}
	if n <= 0 {
		return 0 // (dst may be shorter than a channel's offset)
	}
	for c := 0; c < ch; c++ {
		in := src[c][from : from+n]
		p := c * sb
		switch e {
		case Uint8:
			for _, x := range in {
				v, clip := quantize(x, scale8, scale8-1, -scale8)
				if clip {
					clipped++
				}
				dst[p] = byte(v + 128)
				p += fb
			}
		case Int16:
			out := dst[p:]
			for i, x := range in {
				v := roundScaled(x * scale16)
				if v > scale16-1 || v < -scale16 || x != x {
					v, clipped = saturate(x, v, scale16), clipped+countClip(x)
				}
				iv := int16(v)
				o := out[i*fb : i*fb+2]
				o[0], o[1] = byte(iv), byte(iv>>8)
			}
		case Int24:
			out := dst[p:]
			for i, x := range in {
				v := roundScaled(x * scale24)
				if v > scale24-1 || v < -scale24 || x != x {
					v, clipped = saturate(x, v, scale24), clipped+countClip(x)
				}
				iv := int32(v)
				o := out[i*fb : i*fb+3]
				o[0], o[1], o[2] = byte(iv), byte(iv>>8), byte(iv>>16)
			}
		case Int32:
			for _, x := range in {
				v, clip := quantize(x, scale32, scale32-1, -scale32)
				if clip {
					clipped++
				}
				binary.LittleEndian.PutUint32(dst[p:], uint32(v))
				p += fb
			}
		case Float32:
			for _, x := range in {
				binary.LittleEndian.PutUint32(dst[p:], math.Float32bits(float32(x)))
				p += fb
			}
		case Float64:
			for _, x := range in {
				binary.LittleEndian.PutUint64(dst[p:], math.Float64bits(x))
				p += fb
			}
		}
	}
	return clipped
}

// roundMagic is 1.5 * 2^52: adding and subtracting it rounds any |y| < 2^51
// to the nearest integer (ties to even) in two float operations, which is
// several times faster than math.Round on the encoder hot path. Larger
// values come out unrounded, and the range check after it catches them.
const roundMagic = 6755399441055744.0

func roundScaled(y float64) float64 { return (y + roundMagic) - roundMagic }

// saturate handles the rare out-of-range sample: full scale with the sign of
// x, silence for NaN.
func saturate(x, v, scale float64) float64 {
	switch {
	case x != x:
		return 0
	case v >= scale-1:
		return scale - 1
	default:
		return -scale
	}
}

func countClip(x float64) int {
	if x > 1 || x < -1 || x != x {
		return 1
	}
	return 0
}
