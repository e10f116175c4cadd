package flac

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/mewkiz/flac/meta"
)

// bitWriter packs bits MSB first.
type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) write(v uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>uint(i))&1
		w.nacc++
		if w.nacc == 8 {
			w.buf = append(w.buf, byte(w.acc))
			w.acc, w.nacc = 0, 0
		}
	}
}

func (w *bitWriter) align() {
	for w.nacc != 0 {
		w.write(0, 1)
	}
}

func crc8(p []byte) byte {
	var c byte
	for _, b := range p {
		c ^= b
		for i := 0; i < 8; i++ {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

func crc16(p []byte) uint16 {
	var c uint16
	for _, b := range p {
		c ^= uint16(b) << 8
		for i := 0; i < 8; i++ {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// verbatimFLAC writes a FLAC stream of verbatim subframes whose frame
// headers defer bit depth and sample rate to STREAMINFO, the only way to
// store depths such as 4 or 32 bits. It is a minimal independent encoder, so
// the decoder is tested against something other than its own library.
func verbatimFLAC(bits, rate int, samples [][]int32) []byte {
	const block = 1000
	n := len(samples[0])
	si := meta.StreamInfo{BlockSizeMin: block, BlockSizeMax: block, SampleRate: uint32(rate),
		NChannels: uint8(len(samples)), BitsPerSample: uint8(bits), NSamples: uint64(n)}
	body := streamInfoBody(&si)
	out := append([]byte("fLaC\x80\x00\x00\x22"), body[:]...)
	for fr, off := 0, 0; off < n; fr, off = fr+1, off+block {
		k := min(block, n-off)
		var w bitWriter
		w.write(0xFFF8, 16)                // sync, reserved, fixed blocking
		w.write(7, 4)                      // block size: 16 bits at end of header
		w.write(0, 4)                      // sample rate: from STREAMINFO
		w.write(uint64(len(samples)-1), 4) // independent channels
		w.write(0, 3)                      // bits per sample: from STREAMINFO
		w.write(0, 1)
		w.write(uint64(fr), 8) // frame number, UTF-8 coded (< 128)
		w.write(uint64(k-1), 16)
		w.buf = append(w.buf, crc8(w.buf))
		for _, ch := range samples {
			w.write(0x02, 8) // verbatim, no wasted bits
			for _, v := range ch[off : off+k] {
				w.write(uint64(uint32(v)), uint(bits))
			}
		}
		w.align()
		c := crc16(w.buf)
		out = append(append(out, w.buf...), byte(c>>8), byte(c))
	}
	return out
}

func TestOddBitDepths(t *testing.T) {
	for _, tc := range []struct{ bits, ch, rate int }{
		{4, 1, 8000}, {8, 2, 11025}, {12, 3, 32000}, {20, 2, 44100}, {24, 8, 192000}, {32, 2, 48000},
	} {
		t.Run(fmt.Sprintf("%dbit_%dch", tc.bits, tc.ch), func(t *testing.T) {
			full := int64(1) << (tc.bits - 1)
			in := intSignal(tc.ch, 2500, tc.bits, uint64(tc.bits))
			ints := make([][]int32, tc.ch)
			for c := range in {
				for _, x := range in[c] {
					ints[c] = append(ints[c], int32(int64(x*float64(full))))
				}
			}
			data := verbatimFLAC(tc.bits, tc.rate, ints)
			got, info := decodeAll(t, bytes.NewReader(data))
			if d := sameSamples(in, got); d != "" {
				t.Fatalf("decode: %s", d)
			}
			if info.BitDepth != tc.bits || info.SampleRate != tc.rate || info.Frames != 2500 {
				t.Errorf("Info = %+v", info)
			}
			if tc.bits > 24 {
				return // ffmpeg 5 does not decode 32-bit FLAC
			}
			need.Program(t, "ffmpeg")
			path := filepath.Join(t.TempDir(), "v.flac")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if d := sameSamples(ffmpegF64(t, path, tc.ch), got); d != "" {
				t.Errorf("differs from ffmpeg: %s", d)
			}
		})
	}
}

func TestUnsupportedBitDepth(t *testing.T) {
	data := verbatimFLAC(3, 8000, [][]int32{{1, 2, 3}}) // below FLAC's minimum of 4 bits
	_, err := NewDecoder(context.Background(), bytes.NewReader(data))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("3 bits")) {
		t.Errorf("err = %v, want a 3-bit depth error", err)
	}
	if !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("err = %v, want ErrUnsupported", err)
	}
}
