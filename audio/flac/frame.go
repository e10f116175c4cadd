package flac

import (
	"encoding/binary"
	"math/bits"
)

// Channel assignments of a frame header (FLAC format, "Channel
// assignment"): below 8 the channels are independent, numbering
// channels-1; the others decorrelate a stereo pair.
const (
	chanLeftSide  = 8
	chanSideRight = 9
	chanMidSide   = 10
)

// Subframe types of the subframe header (6 bits): constant, verbatim, and
// fixed prediction of order n as fixedType|n.
const (
	subConstant = 0x00
	subVerbatim = 0x01
	subFixed    = 0x08
)

// maxFixedOrder is the highest fixed predictor order FLAC defines.
const maxFixedOrder = 4

// maxRiceParam is the largest Rice parameter tried: 15 is the escape
// code of a 4-bit parameter.
const maxRiceParam = 14

// frameWriter encodes FLAC frames into a buffer it keeps: the frame
// header, one subframe per channel (constant, verbatim or fixed
// prediction of order 0-4 with one Rice partition, whichever the cost
// estimate finds smallest) and the CRCs. A frame is built whole and then
// written once, and the buffers are reused, so that encoding allocates
// nothing per frame: a three-hour programme is 100000 frames.
type frameWriter struct {
	buf  []byte // the frame being built
	acc  uint64 // bits not yet appended to buf, in the low nacc bits
	nacc uint
	num  uint64 // the next frame's number

	// side and mid hold the decorrelated channels of a stereo frame.
	side, mid []int32
	// res holds the zigzag-folded residuals of every fixed order of
	// the subframe being analysed; res[o] has n-o values.
	res [maxFixedOrder + 1][]uint32
}

// newFrameWriter returns a frameWriter for frames of up to blockSize
// samples per channel.
func newFrameWriter(blockSize int) *frameWriter {
	w := &frameWriter{side: make([]int32, blockSize), mid: make([]int32, blockSize)}
	for o := range w.res {
		w.res[o] = make([]uint32, blockSize)
	}
	return w
}

// put appends the n (at most 32) low bits of v.
func (w *frameWriter) put(v uint64, n uint) {
	w.acc = w.acc<<n | v&(1<<n-1)
	w.nacc += n
	if w.nacc >= 32 {
		w.nacc -= 32
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(w.acc>>w.nacc))
	}
}

// flush pads the bits to a byte boundary with zeros and appends them.
func (w *frameWriter) flush() {
	if r := w.nacc % 8; r != 0 {
		w.put(0, 8-r)
	}
	for w.nacc > 0 {
		w.nacc -= 8
		w.buf = append(w.buf, byte(w.acc>>w.nacc))
	}
}

// rice appends the Rice code of the folded value u with parameter k: the
// quotient in unary (zeros ended by a one), then the k low bits.
func (w *frameWriter) rice(u uint32, k uint) {
	q := uint(u >> k)
	for q+1+k > 32 {
		z := min(q, 32)
		w.put(0, z)
		q -= z
	}
	w.put(uint64(1)<<k|uint64(u)&(1<<k-1), q+1+k)
}

// encode builds the frame of the first n samples of every channel of
// samples, bps bits each, and returns its bytes, valid until the next
// call. assign is the channel assignment (a stereo decorrelation, or
// len(samples)-1 for independent channels), hdr the stream's header
// codes.
func (w *frameWriter) encode(samples [][]int32, n int, bps uint, assign uint8, hdr frameHeader) []byte {
	w.buf = w.buf[:0]
	w.acc, w.nacc = 0, 0
	w.header(n, assign, hdr)
	w.flush() // a header is whole bytes
	w.buf = append(w.buf, headerCRC(w.buf))
	chans := [2][]int32{}
	var widths [2]uint
	if len(samples) == 2 && assign >= chanLeftSide {
		l, r := samples[0][:n], samples[1][:n]
		side := w.side[:n]
		for i := range side {
			side[i] = l[i] - r[i]
		}
		switch assign {
		case chanLeftSide:
			chans, widths = [2][]int32{l, side}, [2]uint{bps, bps + 1}
		case chanSideRight:
			chans, widths = [2][]int32{side, r}, [2]uint{bps + 1, bps}
		case chanMidSide:
			mid := w.mid[:n]
			for i := range mid {
				mid[i] = int32((int64(l[i]) + int64(r[i])) >> 1)
			}
			chans, widths = [2][]int32{mid, side}, [2]uint{bps, bps + 1}
		}
		for c := range chans {
			w.subframe(chans[c], widths[c])
		}
	} else {
		for _, ch := range samples {
			w.subframe(ch[:n], bps)
		}
	}
	w.flush()
	w.buf = binary.BigEndian.AppendUint16(w.buf, frameCRC(w.buf))
	w.num++
	return w.buf
}

// frameHeader is what the frame headers of a stream share: the codes of
// the sample rate and sample size, and the sample rate's suffix.
type frameHeader struct {
	rateCode, bpsCode uint8
	rateSuffix        uint32
	rateBits          uint
}

// rateCodes are the sample rates a frame header codes in its 4 bits,
// by code; code 0 is "see STREAMINFO".
var rateCodes = [...]uint32{0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000}

// newFrameHeader returns the header codes of a stream of rate Hz (0:
// "see STREAMINFO"; otherwise a rate headerRate admits) and bps bits per
// sample (16 or 24).
func newFrameHeader(rate uint32, bps int) frameHeader {
	var h frameHeader
	h.bpsCode = 4
	if bps == 24 {
		h.bpsCode = 6
	}
	for c, r := range rateCodes {
		if r == rate {
			h.rateCode = uint8(c)
			return h
		}
	}
	switch {
	case rate%1000 == 0 && rate <= 255000:
		h.rateCode, h.rateSuffix, h.rateBits = 12, rate/1000, 8
	case rate <= 65535:
		h.rateCode, h.rateSuffix, h.rateBits = 13, rate, 16
	default:
		h.rateCode, h.rateSuffix, h.rateBits = 14, rate/10, 16
	}
	return h
}

// header appends the frame header up to its CRC: sync code, fixed
// blocking, block size, sample rate, channels, sample size, the frame
// number as a "UTF-8" coded number, and the suffixes.
func (w *frameWriter) header(n int, assign uint8, hdr frameHeader) {
	w.put(0x3ffe<<2, 16) // sync, reserved 0, fixed block size
	var sizeCode uint64
	var sizeBits uint
	switch n {
	case 192:
		sizeCode = 1
	case 576, 1152, 2304, 4608:
		sizeCode = 2 + uint64(bits.TrailingZeros(uint(n/576)))
	case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768:
		sizeCode = 8 + uint64(bits.TrailingZeros(uint(n/256)))
	default:
		if n <= 256 {
			sizeCode, sizeBits = 6, 8
		} else {
			sizeCode, sizeBits = 7, 16
		}
	}
	w.put(sizeCode<<4|uint64(hdr.rateCode), 8)
	w.put(uint64(assign)<<4|uint64(hdr.bpsCode)<<1, 8)
	w.utf8(w.num)
	if sizeBits > 0 {
		w.put(uint64(n-1), sizeBits)
	}
	if hdr.rateBits > 0 {
		w.put(uint64(hdr.rateSuffix), hdr.rateBits)
	}
}

// utf8 appends x as FLAC's extended "UTF-8" coded number (up to 36 bits).
func (w *frameWriter) utf8(x uint64) {
	if x < 0x80 {
		w.put(x, 8)
		return
	}
	// Continuation bytes carry 6 bits each; the first byte has 7-cont
	// bits of the value after cont+1 leading ones and a zero.
	cont := uint(1)
	for x >= 1<<(6*cont+6-cont) && cont < 6 {
		cont++
	}
	lead := uint64(0xff) << (7 - cont) & 0xff
	w.put(lead|x>>(6*cont), 8)
	for i := int(cont) - 1; i >= 0; i-- {
		w.put(0x80|x>>(6*uint(i))&0x3f, 8)
	}
}

// subframe analyses one channel's samples (bps bits each, one more for a
// side channel) and appends the smallest of its constant, verbatim and
// fixed-prediction codings by the estimate: a constant block is its
// value, a verbatim one 6 bits of header plus every sample, a fixed
// predictor its warm-up samples plus its residuals Rice coded with the
// best single parameter.
func (w *frameWriter) subframe(x []int32, bps uint) {
	n := len(x)
	if n < 2 {
		w.verbatim(x, bps)
		return
	}
	constant := true
	for _, v := range x[1:] {
		if v != x[0] {
			constant = false
			break
		}
	}
	const maxInt = int(^uint(0) >> 1)
	constBits := maxInt
	if constant {
		constBits = 6 + int(bps)
	}
	verbatimBits := 6 + n*int(bps)
	fixedBits, order, param := maxInt, 0, uint(0)
	for o := 0; o <= maxFixedOrder && o < n; o++ {
		res := w.residuals(x, o)
		k, cost := riceParam(res)
		if c := 6 + o*int(bps) + cost; c < fixedBits {
			fixedBits, order, param = c, o, k
		}
	}
	switch {
	case constBits < verbatimBits && constBits < fixedBits:
		w.put(subConstant<<1, 8) // zero pad, type, no wasted bits
		w.put(uint64(x[0]), bps)
	case fixedBits < verbatimBits:
		w.put(uint64(subFixed|order)<<1, 8)
		for _, v := range x[:order] {
			w.put(uint64(v), bps)
		}
		// Rice coding with a 4-bit parameter (00), one partition (0000).
		w.put(uint64(param), 2+4+4)
		for _, u := range w.res[order][:n-order] {
			w.rice(u, param)
		}
	default:
		w.verbatim(x, bps)
	}
}

// verbatim appends a verbatim subframe.
func (w *frameWriter) verbatim(x []int32, bps uint) {
	w.put(subVerbatim<<1, 8)
	for _, v := range x {
		w.put(uint64(v), bps)
	}
}

// residuals fills res[order] with the zigzag-folded residuals of the
// fixed predictor of that order and returns them. The residual of order
// o is the o-th difference of the signal, computed from the samples so
// that each order stands alone. Samples of up to 25 bits (a 24-bit side
// channel) keep every difference within 30 bits.
func (w *frameWriter) residuals(x []int32, order int) []uint32 {
	n := len(x)
	res := w.res[order][:n-order]
	switch order {
	case 0:
		for i := range res {
			res[i] = fold(x[i])
		}
	case 1:
		for i := range res {
			res[i] = fold(x[i+1] - x[i])
		}
	case 2:
		for i := range res {
			res[i] = fold(x[i+2] - 2*x[i+1] + x[i])
		}
	case 3:
		for i := range res {
			res[i] = fold(x[i+3] - 3*x[i+2] + 3*x[i+1] - x[i])
		}
	case 4:
		for i := range res {
			res[i] = fold(x[i+4] - 4*x[i+3] + 6*x[i+2] - 4*x[i+1] + x[i])
		}
	}
	return res
}

// fold maps a signed residual onto the unsigned values Rice coding takes:
// 0, -1, 1, -2, 2... to 0, 1, 2, 3, 4...
func fold(e int32) uint32 { return uint32(e<<1) ^ uint32(e>>31) }

// riceCost returns the length in bits of the Rice codes of res with
// parameter k: per value the quotient in unary, its end bit and k bits.
func riceCost(res []uint32, k uint) int {
	var q uint64
	for _, u := range res {
		q += uint64(u >> k)
	}
	return int(q) + len(res)*int(1+k)
}

// riceParam returns the parameter from 0 to maxRiceParam that codes res
// in the fewest bits (the smallest such parameter when several tie), and
// that cost. The cost is convex in k: per value, raising k by one saves
// the bits the quotient loses, which do not grow with k, and costs one.
// So the search starts at the estimate from the mean and walks downhill,
// evaluating two or three parameters instead of all fifteen.
func riceParam(res []uint32) (uint, int) {
	var sum uint64
	for _, u := range res {
		sum += uint64(u)
	}
	k := uint(0)
	if mean := sum / uint64(len(res)); mean > 0 {
		k = min(uint(bits.Len64(mean))-1, maxRiceParam)
	}
	cost := riceCost(res, k)
	moved := false
	for k > 0 {
		c := riceCost(res, k-1)
		if c > cost {
			break
		}
		k, cost, moved = k-1, c, true
	}
	for !moved && k < maxRiceParam {
		c := riceCost(res, k+1)
		if c >= cost {
			break
		}
		k, cost = k+1, c
	}
	return k, cost
}

// crc8Table and crc16Table are the CRCs of the frame header (polynomial
// x^8+x^2+x+1) and of the whole frame (x^16+x^15+x^2+1), most
// significant bit first, from zero.
var crc8Table, crc16Table = func() (t8 [256]uint8, t16 [256]uint16) {
	for i := range 256 {
		c8, c16 := uint8(i), uint16(i)<<8
		for range 8 {
			c8 = c8<<1 ^ uint8(0x07*(c8>>7))
			c16 = c16<<1 ^ 0x8005*(c16>>15)
		}
		t8[i], t16[i] = c8, c16
	}
	return
}()

// headerCRC returns the CRC-8 of a frame header.
func headerCRC(p []byte) uint8 {
	var c uint8
	for _, b := range p {
		c = crc8Table[c^b]
	}
	return c
}

// frameCRC returns the CRC-16 of a frame.
func frameCRC(p []byte) uint16 {
	var c uint16
	for _, b := range p {
		c = c<<8 ^ crc16Table[byte(c>>8)^b]
	}
	return c
}
