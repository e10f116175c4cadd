package wav

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Encoder writes a WAV stream. It implements audio.Encoder.
//
// To an io.WriteSeeker it writes a header saying "size unknown" (so a file
// cut short by a crash still reads to its end) and patches the sizes on
// Close, switching to RF64 in the reserved JUNK chunk if the data outgrew
// 4 GiB. To any other writer it states the size from EncodeOptions.Length
// when given, and otherwise 0xFFFFFFFF ("unknown"), as ffmpeg does on
// pipes; this package's decoder and ffmpeg read such files to the end.
type Encoder struct {
	ctx        context.Context
	w          io.Writer
	ws         io.WriteSeeker // nil when w cannot seek
	start      int64          // offset of the RIFF header in ws
	format     audio.Format
	enc        audio.SampleEncoding
	validBits  int
	blockAlign int
	tags       audio.Tags
	declared   int64 // frames announced in the header, -1 when not
	frames     int64
	clipped    int64
	buf        []byte
	err        error
	closed     bool
}

// NewEncoder writes a WAV header for f to w and returns an encoder for the
// samples. opts.BitDepth selects 16-bit PCM (0 or 16), 24-bit PCM (24) or
// 32-bit IEEE float (32); WAVE_FORMAT_EXTENSIBLE is used for more than two
// channels or more than 16 bits, as Microsoft's WAVE specification
// recommends. opts.Tags are written as a LIST/INFO chunk before the data.
// Close finishes the file; it does not close w.
func NewEncoder(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (*Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	e := &Encoder{ctx: ctx, w: w, format: f, tags: opts.Tags, declared: -1}
	switch opts.BitDepth {
	case 0, 16:
		e.enc = audio.Int16
	case 24:
		e.enc = audio.Int24
	case 32:
		e.enc = audio.Float32
	default:
		return nil, fmt.Errorf("%w: WAV bit depth %d (want 16, 24 or 32)", audio.ErrUnsupported, opts.BitDepth)
	}
	e.validBits = e.enc.Bits()
	e.blockAlign = f.Channels * e.enc.Bytes()
	if ws, ok := w.(io.WriteSeeker); ok {
		// *os.File satisfies io.WriteSeeker even on a pipe; only a Seek
		// that works proves the writer can be patched later.
		if pos, err := ws.Seek(0, io.SeekCurrent); err == nil {
			e.ws, e.start = ws, pos
		}
	}
	if e.ws == nil && opts.Length > 0 {
		e.declared = int64(math.Round(opts.Length.Seconds() * float64(f.SampleRate)))
	}
	e.buf = make([]byte, (readBufSize/e.blockAlign)*e.blockAlign)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := w.Write(e.header(e.declared)); err != nil {
		return nil, err
	}
	return e, nil
}

// header returns the bytes before the samples for a stream of the given
// frame count, -1 meaning unknown. Its length depends only on the encoder's
// settings and on whether RF64 is needed, so Close can rewrite it in place.
func (e *Encoder) header(frames int64) []byte {
	extensible := e.format.Channels > 2 || e.enc.Bits() > 16
	tag := uint16(formatPCM)
	if e.enc == audio.Float32 {
		tag = formatFloat
	}
	fmtSize := 16
	if extensible {
		fmtSize = 40
	}
	fact := tag != formatPCM // non-PCM formats carry a fact chunk
	info := appendInfo(nil, e.tags)
	// The JUNK chunk reserves room for a ds64 chunk, so a seekable output
	// can become RF64 on Close without moving the samples.
	reserve := e.ws != nil
	headLen := 12 + 8 + fmtSize + len(info) + 8
	if fact {
		headLen += 12
	}
	var dataBytes, riffSize int64 = -1, -1
	rf64 := false
	if frames >= 0 {
		dataBytes = frames * int64(e.blockAlign)
		riffSize = int64(headLen) - 8 + dataBytes + dataBytes&1
		if riffSize+36 > math.MaxUint32 {
			rf64, reserve = true, true
		}
	}
	if reserve {
		headLen += 36
		if riffSize >= 0 {
			riffSize += 36
		}
	}
	size32 := func(v int64) uint32 {
		if v < 0 || rf64 {
			return sizeUnknown
		}
		return uint32(v)
	}

	h := make([]byte, 0, headLen)
	if rf64 {
		h = append(h, "RF64"...)
	} else {
		h = append(h, "RIFF"...)
	}
	h = binary.LittleEndian.AppendUint32(h, size32(riffSize))
	h = append(h, "WAVE"...)
	if rf64 {
		h = append(h, "ds64"...)
		h = binary.LittleEndian.AppendUint32(h, 28)
		h = binary.LittleEndian.AppendUint64(h, uint64(riffSize))
		h = binary.LittleEndian.AppendUint64(h, uint64(dataBytes))
		h = binary.LittleEndian.AppendUint64(h, uint64(frames))
		h = binary.LittleEndian.AppendUint32(h, 0) // no table entries
	} else if reserve {
		h = append(h, "JUNK"...)
		h = binary.LittleEndian.AppendUint32(h, 28)
		h = append(h, make([]byte, 28)...)
	}
	h = append(h, "fmt "...)
	h = binary.LittleEndian.AppendUint32(h, uint32(fmtSize))
	if extensible {
		h = binary.LittleEndian.AppendUint16(h, formatExtensible)
	} else {
		h = binary.LittleEndian.AppendUint16(h, tag)
	}
	h = binary.LittleEndian.AppendUint16(h, uint16(e.format.Channels))
	h = binary.LittleEndian.AppendUint32(h, uint32(e.format.SampleRate))
	h = binary.LittleEndian.AppendUint32(h, uint32(e.format.SampleRate*e.blockAlign))
	h = binary.LittleEndian.AppendUint16(h, uint16(e.blockAlign))
	h = binary.LittleEndian.AppendUint16(h, uint16(e.enc.Bits()))
	if extensible {
		h = binary.LittleEndian.AppendUint16(h, 22)
		h = binary.LittleEndian.AppendUint16(h, uint16(e.validBits))
		h = binary.LittleEndian.AppendUint32(h, DefaultChannelMask(e.format.Channels))
		h = binary.LittleEndian.AppendUint16(h, tag)
		h = binary.LittleEndian.AppendUint16(h, 0)
		h = append(h, guidTail...)
	}
	if fact {
		h = append(h, "fact"...)
		h = binary.LittleEndian.AppendUint32(h, 4)
		n := uint32(sizeUnknown)
		if frames >= 0 && frames < math.MaxUint32 {
			n = uint32(frames)
		}
		h = binary.LittleEndian.AppendUint32(h, n)
	}
	h = append(h, info...)
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, size32(dataBytes))
	return h
}

// Write encodes src. Integer output rounds to nearest without dither and
// clips samples outside [-1, 1]; Clipped counts them.
func (e *Encoder) Write(src audio.Buffer) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return fmt.Errorf("wav: write after Close: %w", io.ErrClosedPipe)
	}
	if len(src) != e.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(src), e.format.Channels)
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	n := src.Frames()
	if e.declared >= 0 && e.frames+int64(n) > e.declared {
		e.err = fmt.Errorf("%w: %d frames announced", ErrLengthExceeded, e.declared)
		return e.err
	}
	per := len(e.buf) / e.blockAlign
	for off := 0; off < n; off += per {
		k := min(per, n-off)
		e.clipped += int64(audio.EncodePCM(e.buf, src, off, k, e.enc))
		if _, err := e.w.Write(e.buf[:k*e.blockAlign]); err != nil {
			e.err = err
			return err
		}
		e.frames += int64(k)
	}
	return nil
}

// Clipped returns the number of samples that were outside [-1, 1] (or NaN)
// and were clipped to the integer range. Float output never clips.
func (e *Encoder) Clipped() int64 { return e.clipped }

// Frames returns the number of frames written so far.
func (e *Encoder) Frames() int64 { return e.frames }

// Close completes the file: it pads a stream that announced a longer Length
// with silence, adds the pad byte of an odd-sized data chunk, and patches
// the header sizes of a seekable output. It does not close the writer.
func (e *Encoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	if e.declared > e.frames {
		clear(e.buf)
		for e.frames < e.declared {
			k := min(int64(len(e.buf)/e.blockAlign), e.declared-e.frames)
			if _, err := e.w.Write(e.buf[:k*int64(e.blockAlign)]); err != nil {
				e.err = err
				return err
			}
			e.frames += k
		}
	}
	if e.frames*int64(e.blockAlign)&1 == 1 {
		if _, err := e.w.Write([]byte{0}); err != nil {
			e.err = err
			return err
		}
	}
	if e.ws == nil {
		return nil
	}
	end, err := e.ws.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = e.ws.Seek(e.start, io.SeekStart)
	}
	if err == nil {
		_, err = e.ws.Write(e.header(e.frames))
	}
	if err == nil {
		_, err = e.ws.Seek(end, io.SeekStart)
	}
	if err != nil {
		e.err = fmt.Errorf("wav: patching header sizes: %w", err)
	}
	return e.err
}
