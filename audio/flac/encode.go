package flac

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/audiopost/audiopost/audio"
	mflac "github.com/mewkiz/flac"
	"github.com/mewkiz/flac/meta"
)

// BlockSize is the number of frames per FLAC frame the encoder writes.
const BlockSize = 4096

// ErrClosed is returned by Write and Close on a closed Encoder.
var ErrClosed = errors.New("flac: encoder closed")

// Encoder writes a FLAC stream: 16-bit by default, 24-bit when
// EncodeOptions.BitDepth is 24, with Vorbis comments (audio.VorbisComments
// and, for EncodeOptions.Chapters, audio.VorbisChapters) and a front-cover
// PICTURE block from EncodeOptions.Tags. Frames of BlockSize samples are
// written as they fill, so memory does not grow with the length.
//
// On an io.WriteSeeker whose position can be read, Close rewrites STREAMINFO
// with the total sample count, the MD5 of the audio and the frame size
// range, relative to where the stream started; on other writers these stay
// "unknown", which FLAC allows.
type Encoder struct {
	ctx     context.Context
	out     *bufio.Writer
	dst     io.Writer
	seeker  io.WriteSeeker
	base    int64 // offset of "fLaC" in seeker
	info    meta.StreamInfo
	nch     int
	bits    int
	samples [][]int32 // one block per channel
	fill    int
	fw      *frameWriter
	hdr     frameHeader
	md5     hash.Hash
	md5buf  []byte
	total   uint64
	clipped int64
	minFrm  uint32
	maxFrm  uint32
	err     error
}

// NewEncoder writes the FLAC signature and metadata to w and returns an
// encoder for audio of format f. It does not close w.
func NewEncoder(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (*Encoder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.SampleRate >= 1<<20 {
		return nil, fmt.Errorf("%w: FLAC cannot store a sample rate of %d Hz", audio.ErrUnsupported, f.SampleRate)
	}
	bits := opts.BitDepth
	switch bits {
	case 0:
		bits = 16
	case 16, 24:
	default:
		return nil, fmt.Errorf("%w: %d-bit output (want 16 or 24)", ErrBitDepth, bits)
	}
	blocks, err := blocksFromTags(opts.Tags, opts.Chapters)
	if err != nil {
		return nil, err
	}
	e := &Encoder{
		ctx:     ctx,
		dst:     w,
		nch:     f.Channels,
		bits:    bits,
		samples: make([][]int32, f.Channels),
		md5:     md5.New(),
		md5buf:  make([]byte, BlockSize*f.Channels*(bits/8)),
		out:     bufio.NewWriterSize(w, 1<<16),
		fw:      newFrameWriter(BlockSize),
		hdr:     newFrameHeader(headerRate(f.SampleRate), bits),
	}
	if ws, ok := w.(io.WriteSeeker); ok {
		if pos, err := ws.Seek(0, io.SeekCurrent); err == nil {
			e.seeker, e.base = ws, pos
		}
	}
	backing := make([]int32, f.Channels*BlockSize)
	for c := range e.samples {
		e.samples[c] = backing[c*BlockSize : (c+1)*BlockSize]
	}
	e.info = meta.StreamInfo{
		BlockSizeMin:  BlockSize,
		BlockSizeMax:  BlockSize,
		SampleRate:    uint32(f.SampleRate),
		NChannels:     uint8(f.Channels),
		BitsPerSample: uint8(bits),
	}
	// The library writes the signature and the metadata blocks; the
	// frames are ours (frame.go), and so is STREAMINFO's completion.
	info := e.info
	if _, err = mflac.NewEncoder(e.out, &info, blocks...); err != nil {
		return nil, fmt.Errorf("flac: writing header: %w", err)
	}
	return e, nil
}

// headerRate returns the sample rate to put in frame headers, or 0 ("see
// STREAMINFO") for rates the frame header cannot express.
func headerRate(rate int) uint32 {
	switch {
	case rate%1000 == 0 && rate <= 255000, rate <= 65535, rate%10 == 0 && rate <= 655350:
		return uint32(rate)
	}
	return 0
}

// Clipped returns how many samples were outside [-1, 1) and were clipped.
func (e *Encoder) Clipped() int64 { return e.clipped }

// Write implements audio.Sink. It does not keep src.
func (e *Encoder) Write(src audio.Buffer) error {
	if e.err != nil {
		return e.err
	}
	if len(src) != e.nch {
		return fmt.Errorf("%w: %d channels for a %d-channel FLAC encoder", audio.ErrFormatMismatch, len(src), e.nch)
	}
	if err := e.ctx.Err(); err != nil {
		e.err = err
		return err
	}
	n := src.Frames()
	for off := 0; off < n; {
		k := min(n-off, BlockSize-e.fill)
		for c, ch := range src {
			out := e.samples[c][e.fill : e.fill+k]
			for i, x := range ch[off : off+k] {
				v, clip := audio.FloatToInt(x, e.bits)
				if clip {
					e.clipped++
				}
				out[i] = v
			}
		}
		e.fill += k
		off += k
		if e.fill == BlockSize {
			if err := e.writeFrame(); err != nil {
				e.err = err
				return err
			}
		}
	}
	return nil
}

func (e *Encoder) writeFrame() error {
	n := e.fill
	e.fill = 0
	e.hash(n)
	frame := e.fw.encode(e.samples, n, uint(e.bits), e.channelAssignment(n), e.hdr)
	if _, err := e.out.Write(frame); err != nil {
		return fmt.Errorf("flac: writing frame: %w", err)
	}
	size := uint32(len(frame))
	if e.minFrm == 0 || size < e.minFrm {
		e.minFrm = size
	}
	e.maxFrm = max(e.maxFrm, size)
	e.total += uint64(n)
	return nil
}

// hash adds the block to the MD5 of the audio as STREAMINFO defines it:
// interleaved little-endian samples of bits/8 bytes.
func (e *Encoder) hash(n int) {
	bps := e.bits / 8
	p := e.md5buf[:n*e.nch*bps]
	i := 0
	for s := 0; s < n; s++ {
		for c := 0; c < e.nch; c++ {
			v := e.samples[c][s]
			p[i], p[i+1] = byte(v), byte(v>>8)
			if bps == 3 {
				p[i+2] = byte(v >> 16)
			}
			i += bps
		}
	}
	e.md5.Write(p)
}

// channelAssignment picks the stereo decorrelation (left/right, left/side,
// side/right or mid/side) whose second differences are smallest, the
// estimate libFLAC uses, since smaller residuals code in fewer bits.
func (e *Encoder) channelAssignment(n int) uint8 {
	if e.nch != 2 || n < 3 {
		return uint8(e.nch - 1) // independent channels
	}
	l, r := e.samples[0][:n], e.samples[1][:n]
	var sl, sr, sm, ss int64
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	for i := 2; i < n; i++ {
		dl := int64(l[i]) - 2*int64(l[i-1]) + int64(l[i-2])
		dr := int64(r[i]) - 2*int64(r[i-1]) + int64(r[i-2])
		sl += abs(dl)
		sr += abs(dr)
		sm += abs((dl + dr) >> 1)
		ss += abs(dl - dr)
	}
	best, ch := sl+sr, uint8(1) // left, right
	if c := sl + ss; c < best {
		best, ch = c, chanLeftSide
	}
	if c := ss + sr; c < best {
		best, ch = c, chanSideRight
	}
	if c := sm + ss; c < best {
		ch = chanMidSide
	}
	return ch
}

// Close writes the last, possibly short, frame, flushes the output and, on a
// seekable writer, completes STREAMINFO. It does not close the writer.
func (e *Encoder) Close() error {
	if e.err != nil {
		if e.err == ErrClosed {
			return ErrClosed
		}
		err := e.err
		e.err = ErrClosed
		return err
	}
	e.err = ErrClosed
	if e.fill > 0 {
		if err := e.writeFrame(); err != nil {
			return err
		}
	}
	if err := e.out.Flush(); err != nil {
		return err
	}
	if e.seeker == nil {
		return nil
	}
	return e.patchStreamInfo()
}

// patchStreamInfo rewrites the STREAMINFO body, which starts 8 bytes into
// the stream (after "fLaC" and the block header), and returns to the end.
func (e *Encoder) patchStreamInfo() error {
	end, err := e.seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	si := e.info
	si.NSamples = e.total
	si.FrameSizeMin, si.FrameSizeMax = e.minFrm, e.maxFrm
	if e.total < BlockSize {
		si.BlockSizeMin, si.BlockSizeMax = uint16(e.total), uint16(e.total)
	}
	copy(si.MD5sum[:], e.md5.Sum(nil))
	body := streamInfoBody(&si)
	if _, err := e.seeker.Seek(e.base+8, io.SeekStart); err != nil {
		return err
	}
	if _, err := e.seeker.Write(body[:]); err != nil {
		return err
	}
	_, err = e.seeker.Seek(end, io.SeekStart)
	return err
}

// streamInfoBody packs STREAMINFO as the FLAC format lays it out.
func streamInfoBody(si *meta.StreamInfo) [34]byte {
	var b [34]byte
	binary.BigEndian.PutUint16(b[0:], si.BlockSizeMin)
	binary.BigEndian.PutUint16(b[2:], si.BlockSizeMax)
	put24 := func(p []byte, v uint32) { p[0], p[1], p[2] = byte(v>>16), byte(v>>8), byte(v) }
	put24(b[4:], si.FrameSizeMin)
	put24(b[7:], si.FrameSizeMax)
	// 20 bits rate, 3 bits channels-1, 5 bits bits-1, 36 bits total samples.
	x := uint64(si.SampleRate)<<44 | uint64(si.NChannels-1)<<41 | uint64(si.BitsPerSample-1)<<36 | si.NSamples&(1<<36-1)
	binary.BigEndian.PutUint64(b[10:], x)
	copy(b[18:], si.MD5sum[:])
	return b
}
