package mp3

import "encoding/binary"

// header is a parsed MPEG audio Layer III frame header.
type header struct {
	version  int // 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5)
	crc      bool
	bitrate  int // kbps
	rate     int // Hz
	padding  bool
	mono     bool
	size     int // bytes, header included
	samples  int // per channel
	sideInfo int // bytes of side information
}

var (
	bitratesV1 = [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}
	bitratesV2 = [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	ratesV1    = [4]int{44100, 48000, 32000, 0}
)

// parseHeader decodes a 4-byte frame header. It accepts only Layer III
// with a defined bitrate (free format is not supported by the decoder) and
// sample rate, so it rejects Layer I/II, ADTS AAC (layer bits 00) and most
// random data.
func parseHeader(p []byte) (header, bool) {
	if len(p) < 4 || p[0] != 0xFF || p[1]&0xE0 != 0xE0 {
		return header{}, false
	}
	var h header
	switch (p[1] >> 3) & 3 {
	case 0:
		h.version = 25
	case 2:
		h.version = 2
	case 3:
		h.version = 1
	default:
		return header{}, false
	}
	if (p[1]>>1)&3 != 1 { // Layer III
		return header{}, false
	}
	h.crc = p[1]&1 == 0
	bi, si := p[2]>>4, (p[2]>>2)&3
	if bi == 0 || bi == 15 || si == 3 || p[3]&3 == 2 { // free format, bad, reserved rate or emphasis
		return header{}, false
	}
	h.padding = p[2]&2 != 0
	h.mono = p[3]>>6 == 3
	h.rate = ratesV1[si]
	if h.version == 1 {
		h.bitrate = bitratesV1[bi]
		h.samples = 1152
		h.size = 144000 * h.bitrate / h.rate
		h.sideInfo = 32
		if h.mono {
			h.sideInfo = 17
		}
	} else {
		h.rate /= 2
		if h.version == 25 {
			h.rate /= 2
		}
		h.bitrate = bitratesV2[bi]
		h.samples = 576
		h.size = 72000 * h.bitrate / h.rate
		h.sideInfo = 17
		if h.mono {
			h.sideInfo = 9
		}
	}
	if h.padding {
		h.size++
	}
	if h.size < 4+h.sideInfo+h.crcLen() {
		return header{}, false
	}
	return h, true
}

func (h header) crcLen() int {
	if h.crc {
		return 2
	}
	return 0
}

// sameStream reports whether h can follow ref in one stream: the decoder
// and the output format are fixed by the first frame.
func (h header) sameStream(ref header) bool {
	return h.version == ref.version && h.rate == ref.rate && h.mono == ref.mono
}

// channels returns 1 for mono frames, 2 otherwise.
func (h header) channels() int {
	if h.mono {
		return 1
	}
	return 2
}

// vbrInfo is what a Xing/Info or VBRI header in the first frame says.
type vbrInfo struct {
	frames  int64 // audio frames after the tag frame, 0 if unknown
	bytes   int64 // stream bytes, 0 if unknown
	lame    bool  // a LAME tag with encoder delay and padding was found
	delay   int
	padding int
}

// parseVBR looks for a Xing/Info (with LAME extension) or VBRI header in the
// frame f with header h.
func parseVBR(h header, f []byte) (vbrInfo, bool) {
	var v vbrInfo
	off := 4 + h.crcLen() + h.sideInfo
	if off+8 <= len(f) && (string(f[off:off+4]) == "Xing" || string(f[off:off+4]) == "Info") {
		flags := binary.BigEndian.Uint32(f[off+4:])
		p := off + 8
		if flags&1 != 0 {
			if p+4 > len(f) {
				return v, true
			}
			v.frames = int64(binary.BigEndian.Uint32(f[p:]))
			p += 4
		}
		if flags&2 != 0 {
			if p+4 > len(f) {
				return v, true
			}
			v.bytes = int64(binary.BigEndian.Uint32(f[p:]))
			p += 4
		}
		if flags&4 != 0 {
			p += 100 // seek table
		}
		if flags&8 != 0 {
			p += 4 // quality
		}
		// The LAME tag: 9-byte encoder string, then delay and padding as
		// two 12-bit numbers 21 bytes in. ffmpeg writes it as Lavf/Lavc.
		if p+24 <= len(f) {
			switch string(f[p : p+4]) {
			case "LAME", "Lavf", "Lavc":
				q := f[p+21:]
				v.delay = int(q[0])<<4 | int(q[1])>>4
				v.padding = int(q[1]&0x0F)<<8 | int(q[2])
				v.lame = true
			}
		}
		return v, true
	}
	// VBRI (Fraunhofer) sits 32 bytes after the header in every version.
	if 4+32+18 <= len(f) && string(f[36:40]) == "VBRI" {
		v.bytes = int64(binary.BigEndian.Uint32(f[46:]))
		v.frames = int64(binary.BigEndian.Uint32(f[50:]))
		return v, true
	}
	return v, false
}

// bitReader reads big-endian bit fields from a byte slice; reads past the
// end return zeros (callers check lengths first).
type bitReader struct {
	p   []byte
	pos int
}

func (r *bitReader) read(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		b := 0
		if r.pos>>3 < len(r.p) {
			b = int(r.p[r.pos>>3]>>(7-uint(r.pos&7))) & 1
		}
		v = v<<1 | b
		r.pos++
	}
	return v
}

// sideInfoValid checks the side information of frame f for values that the
// standard forbids and that make go-mp3 fail or panic: big_values beyond
// 576 lines, region counts past the scale factor band table, window
// switching with the reserved block type 0, and MPEG-2 mixed blocks (which
// go-mp3 v0.3.4 indexes out of range).
func sideInfoValid(h header, f []byte) bool {
	start := 4 + h.crcLen()
	r := bitReader{p: f[start : start+h.sideInfo]}
	nch := h.channels()
	granules := 2
	if h.version == 1 {
		r.read(9) // main_data_begin
		if h.mono {
			r.read(5)
		} else {
			r.read(3)
		}
		r.read(4 * nch) // scfsi
	} else {
		granules = 1
		r.read(8)
		r.read(nch)
	}
	for gr := 0; gr < granules; gr++ {
		for ch := 0; ch < nch; ch++ {
			r.read(12) // part2_3_length
			if r.read(9) > 288 {
				return false
			}
			r.read(8) // global_gain
			if h.version == 1 {
				r.read(4)
			} else {
				r.read(9)
			}
			if r.read(1) == 1 { // window switching
				blockType, mixed := r.read(2), r.read(1)
				if blockType == 0 || (h.version != 1 && blockType == 2 && mixed == 1) {
					return false
				}
				r.read(10 + 9)
			} else {
				r.read(15)
				if r.read(4)+r.read(3)+2 > 22 {
					return false
				}
			}
			if h.version == 1 {
				r.read(1) // preflag
			}
			r.read(2)
		}
	}
	return true
}

// concealSideInfo zeroes the granule information in the side information
// of f, so the decoder renders the frame as silence. main_data_begin is
// kept: the bit reservoir must still reach back as far as before, or the
// following frames, which point into earlier frames' data, decode noise.
func concealSideInfo(h header, f []byte) {
	si := f[4+h.crcLen() : 4+h.crcLen()+h.sideInfo]
	if h.version == 1 {
		si[1] &= 0x80 // main_data_begin is 9 bits
		clear(si[2:])
	} else {
		clear(si[1:]) // 8 bits
	}
}
