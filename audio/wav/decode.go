package wav

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// Limits on the header, so that a hostile file cannot make the decoder
// allocate or loop much before it reaches the audio.
const (
	maxFmtSize     = 4096 // WAVE_FORMAT_EXTENSIBLE needs 40
	maxDs64Size    = 1 << 16
	maxHeaderChunk = 10000 // chunks before "data"
	readBufSize    = 64 << 10
)

// Decoder is a streaming WAV decoder. It implements audio.Decoder.
type Decoder struct {
	ctx        context.Context
	r          io.Reader
	info       audio.Info
	format     audio.Format
	enc        audio.SampleEncoding
	blockAlign int
	mask       uint32

	remaining int64 // bytes of the data chunk still unread, -1 when unknown
	// dataAt is where the data chunk's samples start in a reader that can
	// seek (-1 otherwise), dataSize their length (-1 when unknown).
	dataAt, dataSize int64
	buf              []byte
	lo, hi           int  // buf[lo:hi] is read but not yet decoded
	srcEOF           bool // the reader reported io.EOF
	done             bool // no more bytes will be read
	readErr          error
	err              error // sticky end: io.EOF or the failure
	dropped          int
	stalls           int
}

// NewDecoder reads the WAV header from r and returns a decoder positioned at
// the first frame. It reads nothing past the header. If r is an io.Seeker,
// unknown chunks are skipped by seeking and the length of a stream of
// unknown size is estimated from the file size.
func NewDecoder(ctx context.Context, r io.Reader) (*Decoder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := &Decoder{ctx: ctx, r: r}
	if err := d.readHeader(); err != nil {
		return nil, err
	}
	d.buf = make([]byte, readBufSize)
	return d, nil
}

// header is the part of the chunk walk the decoder keeps.
type header struct {
	riffSize   uint32
	ds64Data   int64 // data size from an RF64 ds64 chunk, -1 if none
	fmt        []byte
	pos        int64 // bytes consumed from the start of the stream
	dataStart  int64
	dataSize32 uint32
}

func (d *Decoder) readHeader() error {
	var scratch [64]byte
	h := header{ds64Data: -1}
	if _, err := io.ReadFull(d.r, scratch[:12]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: truncated RIFF header", audio.ErrMalformed)
		}
		return err
	}
	if !Match(scratch[:12]) {
		return ErrNotWAV
	}
	rf64 := string(scratch[:4]) != "RIFF"
	h.riffSize = binary.LittleEndian.Uint32(scratch[4:8])
	h.pos = 12
	var fmtBuf [40]byte
	for chunks := 0; ; chunks++ {
		if chunks >= maxHeaderChunk {
			return fmt.Errorf("%w: more than %d chunks before the data chunk", audio.ErrMalformed, maxHeaderChunk)
		}
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if _, err := io.ReadFull(d.r, scratch[:8]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				if h.fmt == nil {
					return fmt.Errorf("%w: no fmt chunk", audio.ErrMalformed)
				}
				return fmt.Errorf("%w: no data chunk", audio.ErrMalformed)
			}
			return err
		}
		h.pos += 8
		id := string(scratch[:4])
		size := int64(binary.LittleEndian.Uint32(scratch[4:8]))
		// Chunks are padded to an even size; the pad byte is not counted.
		pad := size & 1
		switch id {
		case "data":
			if h.fmt == nil {
				return fmt.Errorf("%w: data chunk before fmt chunk", audio.ErrMalformed)
			}
			h.dataStart = h.pos
			h.dataSize32 = uint32(size)
			return d.setup(&h, rf64)
		case "fmt ":
			if h.fmt != nil {
				break // a second fmt chunk: the first one rules
			}
			if size < 16 || size > maxFmtSize {
				return fmt.Errorf("%w: fmt chunk of %d bytes", audio.ErrMalformed, size)
			}
			n := min(size, int64(len(fmtBuf)))
			if err := d.readFull(fmtBuf[:n], "fmt chunk"); err != nil {
				return err
			}
			h.fmt = fmtBuf[:n]
			h.pos += n
			size -= n
		case "ds64":
			if !rf64 || h.ds64Data >= 0 {
				break
			}
			if size < 28 || size > maxDs64Size {
				return fmt.Errorf("%w: ds64 chunk of %d bytes", audio.ErrMalformed, size)
			}
			if err := d.readFull(scratch[:28], "ds64 chunk"); err != nil {
				return err
			}
			h.pos += 28
			size -= 28
			ds := binary.LittleEndian.Uint64(scratch[8:16])
			if ds > 1<<62 {
				return fmt.Errorf("%w: ds64 data size %d", audio.ErrMalformed, ds)
			}
			h.ds64Data = int64(ds)
		case "LIST":
			if size < 4 || size > maxListSize {
				break
			}
			if err := d.readFull(scratch[:4], "LIST chunk"); err != nil {
				return err
			}
			h.pos += 4
			size -= 4
			if string(scratch[:4]) != "INFO" {
				break
			}
			// Grow with the bytes that actually arrive, so a LIST that
			// claims a megabyte in a short file costs only what is there.
			body, err := io.ReadAll(io.LimitReader(d.r, size))
			if err != nil {
				return err
			}
			h.pos += int64(len(body))
			if int64(len(body)) < size {
				return fmt.Errorf("%w: truncated LIST chunk", audio.ErrMalformed)
			}
			size = 0
			parseInfo(body, &d.info.Tags)
		}
		size += pad
		if err := d.skip(size); err != nil {
			return err
		}
		h.pos += size
	}
}

// readFull reads len(p) bytes of the named chunk.
func (d *Decoder) readFull(p []byte, what string) error {
	if _, err := io.ReadFull(d.r, p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: truncated %s", audio.ErrMalformed, what)
		}
		return err
	}
	return nil
}

// skip discards n bytes: by seeking when the reader can (a skipped chunk may
// be large), else by reading them.
func (d *Decoder) skip(n int64) error {
	if n == 0 {
		return nil
	}
	if s, ok := d.r.(io.Seeker); ok {
		if _, err := s.Seek(n, io.SeekCurrent); err == nil {
			return nil
		}
	}
	m, err := io.CopyN(io.Discard, d.r, n)
	if m < n && (err == nil || err == io.EOF) {
		return fmt.Errorf("%w: no data chunk (stream ends inside a %d-byte chunk)", audio.ErrMalformed, n)
	}
	return err
}

// setup checks the fmt chunk and prepares decoding of the data chunk.
func (d *Decoder) setup(h *header, rf64 bool) error {
	f := h.fmt
	tag := binary.LittleEndian.Uint16(f[0:2])
	channels := int(binary.LittleEndian.Uint16(f[2:4]))
	rate := int(binary.LittleEndian.Uint32(f[4:8]))
	blockAlign := int(binary.LittleEndian.Uint16(f[12:14]))
	container := int(binary.LittleEndian.Uint16(f[14:16]))
	valid := container
	if tag == formatExtensible {
		if len(f) < 40 || binary.LittleEndian.Uint16(f[16:18]) < 22 {
			return fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE fmt chunk of %d bytes, want 40", audio.ErrMalformed, len(f))
		}
		if v := int(binary.LittleEndian.Uint16(f[18:20])); v != 0 {
			valid = v
		}
		d.mask = binary.LittleEndian.Uint32(f[20:24])
		if string(f[28:40]) != string(guidTail) || binary.LittleEndian.Uint16(f[26:28]) != 0 {
			return fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE subformat GUID % x", audio.ErrUnsupported, f[24:40])
		}
		tag = binary.LittleEndian.Uint16(f[24:26])
	} else if container%8 != 0 && tag == formatPCM {
		// Plain PCM states the valid bits; samples sit in whole bytes.
		container = (container + 7) &^ 7
	}
	switch {
	case channels == 0:
		return fmt.Errorf("%w: zero channels", audio.ErrMalformed)
	case channels > audio.MaxChannels:
		return fmt.Errorf("%w: %d channels, at most %d", audio.ErrUnsupported, channels, audio.MaxChannels)
	case rate == 0:
		return fmt.Errorf("%w: sample rate 0", audio.ErrMalformed)
	case rate < audio.MinSampleRate || rate > audio.MaxSampleRate:
		return fmt.Errorf("%w: sample rate %d Hz outside %d-%d", audio.ErrUnsupported, rate, audio.MinSampleRate, audio.MaxSampleRate)
	case valid == 0 || valid > container:
		return fmt.Errorf("%w: %d valid bits in a %d-bit sample", audio.ErrMalformed, valid, container)
	}
	var enc audio.SampleEncoding
	switch {
	case tag == formatPCM && container == 8:
		enc = audio.Uint8
	case tag == formatPCM && container == 16:
		enc = audio.Int16
	case tag == formatPCM && container == 24:
		enc = audio.Int24
	case tag == formatPCM && container == 32:
		enc = audio.Int32
	case tag == formatFloat && container == 32:
		enc = audio.Float32
	case tag == formatFloat && container == 64:
		enc = audio.Float64
	case tag == formatPCM:
		return fmt.Errorf("%w: %d-bit PCM samples", audio.ErrUnsupported, container)
	case tag == formatFloat:
		return fmt.Errorf("%w: %d-bit float samples", audio.ErrUnsupported, container)
	default:
		return fmt.Errorf("%w: WAV format tag 0x%04x (only PCM and IEEE float)", audio.ErrUnsupported, tag)
	}
	if want := channels * enc.Bytes(); blockAlign != want {
		if blockAlign != 0 {
			return fmt.Errorf("%w: block align %d, want %d for %d channels of %d bits", audio.ErrMalformed, blockAlign, want, channels, container)
		}
		blockAlign = want
	}
	d.enc = enc
	d.blockAlign = blockAlign
	d.format = audio.Format{SampleRate: rate, Channels: channels}

	size := int64(h.dataSize32)
	if rf64 && h.dataSize32 == sizeUnknown && h.ds64Data >= 0 {
		size = h.ds64Data
	}
	switch {
	case size == sizeUnknown && h.dataSize32 == sizeUnknown:
		size = -1
	case size <= sizeSoxUnknown && size > sizeSoxUnknown-int64(blockAlign) && !d.holds(size):
		// sox on a pipe states 0x7FFFF000 rounded down to whole frames.
		size = -1
	case size == 0 && !(h.riffSize != sizeUnknown && int64(h.riffSize) == h.dataStart-8):
		// A zero size is what some streaming writers leave; an empty data
		// chunk in a file whose RIFF size ends right here is really empty.
		size = -1
	}
	d.remaining, d.dataSize, d.dataAt = size, size, -1
	if sk, ok := d.r.(io.Seeker); ok {
		// The header is read and nothing past it: here the samples start.
		if at, err := sk.Seek(0, io.SeekCurrent); err == nil {
			d.dataAt = at
		}
	}
	d.info = audio.Info{
		Format:     "wav",
		Container:  "wav",
		Channels:   channels,
		SampleRate: rate,
		BitDepth:   valid,
		Bitrate:    float64(rate*channels*enc.Bits()) / 1000,
		Frames:     -1,
		Tags:       d.info.Tags,
	}
	if size >= 0 {
		d.info.Frames = size / int64(blockAlign)
		d.info.Length = float64(d.info.Frames) / float64(rate)
	} else if s, ok := d.r.(io.Seeker); ok {
		// Unknown size: estimate from what the file holds after the header.
		if cur, err := s.Seek(0, io.SeekCurrent); err == nil {
			if end, err := s.Seek(0, io.SeekEnd); err == nil {
				if _, err := s.Seek(cur, io.SeekStart); err != nil {
					return err
				}
				d.info.Length = float64((end-cur)/int64(blockAlign)) / float64(rate)
			}
		}
	}
	return nil
}

// holds reports whether the reader can seek and has at least n bytes left.
func (d *Decoder) holds(n int64) bool {
	s, ok := d.r.(io.Seeker)
	if !ok {
		return false
	}
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return false
	}
	end, err := s.Seek(0, io.SeekEnd)
	if _, serr := s.Seek(cur, io.SeekStart); err != nil || serr != nil {
		return false
	}
	return end-cur >= n
}

// Format implements audio.Source.
func (d *Decoder) Format() audio.Format { return d.format }

// Info describes the stream. Frames is exact when the data chunk states its
// size and -1 when the stream is read to its end (Length is then estimated
// from the file size if the reader can seek, else 0).
func (d *Decoder) Info() audio.Info { return d.info }

// ChannelMask returns the speaker positions of a WAVE_FORMAT_EXTENSIBLE
// file (SpeakerFrontLeft | ...), or 0 when the file does not state them.
func (d *Decoder) ChannelMask() uint32 { return d.mask }

// Encoding returns the sample layout of the data chunk.
func (d *Decoder) Encoding() audio.SampleEncoding { return d.enc }

// Dropped returns how many bytes at the end of the data were dropped because
// they did not make a whole frame; valid once Read has returned an error.
func (d *Decoder) Dropped() int { return d.dropped }

// Close releases the read buffer. It does not close the reader.
func (d *Decoder) Close() error {
	d.buf = nil
	if d.err == nil {
		d.err = fmt.Errorf("wav: read after Close: %w", io.ErrClosedPipe)
	}
	return nil
}

// Read implements audio.Source: it decodes up to dst.Frames() frames. After
// the last frame it returns io.EOF, or ErrTruncated when the data chunk
// ended before its stated size.
func (d *Decoder) Read(dst audio.Buffer) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(dst) != d.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), d.format.Channels)
	}
	want := dst.Frames()
	if want == 0 {
		return 0, nil
	}
	if err := d.ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	for n < want {
		if d.hi-d.lo >= d.blockAlign {
			k := audio.DecodePCM(dst, n, d.buf[d.lo:d.hi], d.enc)
			d.lo += k * d.blockAlign
			n += k
			continue
		}
		if d.done {
			break
		}
		d.fill()
	}
	if n > 0 {
		return n, nil
	}
	d.err = d.end()
	return 0, d.err
}

// SeekFrame implements audio.FrameSeeker over a reader that can seek: the
// next Read starts at frame (the end, for a frame past it).
func (d *Decoder) SeekFrame(frame int64) error {
	sk, ok := d.r.(io.Seeker)
	switch {
	case !ok || d.dataAt < 0:
		return fmt.Errorf("%w: seeking in a WAV stream that cannot seek", audio.ErrUnsupported)
	case frame < 0:
		return fmt.Errorf("wav: seek to frame %d", frame)
	}
	off := frame * int64(d.blockAlign)
	if d.dataSize >= 0 {
		off = min(off, d.dataSize/int64(d.blockAlign)*int64(d.blockAlign))
	}
	if _, err := sk.Seek(d.dataAt+off, io.SeekStart); err != nil {
		return err
	}
	d.lo, d.hi = 0, 0
	d.srcEOF, d.done, d.readErr, d.err, d.stalls = false, false, nil, nil, 0
	if d.dataSize >= 0 {
		d.remaining = d.dataSize - off
	}
	return nil
}

// fill reads once from the reader into the free end of buf, never past the
// data chunk.
func (d *Decoder) fill() {
	if d.lo > 0 {
		d.hi = copy(d.buf, d.buf[d.lo:d.hi])
		d.lo = 0
	}
	space := int64(len(d.buf) - d.hi)
	if d.remaining >= 0 && space > d.remaining {
		space = d.remaining
	}
	if space == 0 {
		d.done = true
		return
	}
	m, err := d.r.Read(d.buf[d.hi : d.hi+int(space)])
	d.hi += m
	if d.remaining >= 0 {
		d.remaining -= int64(m)
	}
	switch {
	case err == io.EOF:
		d.srcEOF, d.done = true, true
	case err != nil:
		d.readErr, d.done = err, true
	case m == 0:
		// io.Reader allows (0, nil) but discourages it; give up on a reader
		// that keeps doing it rather than spin.
		if d.stalls++; d.stalls > 100 {
			d.readErr, d.done = io.ErrNoProgress, true
		}
	default:
		d.stalls = 0
	}
}

// end returns the error that follows the last complete frame.
func (d *Decoder) end() error {
	d.dropped = d.hi - d.lo
	d.lo = d.hi
	switch {
	case d.readErr != nil:
		if errors.Is(d.readErr, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %v", ErrTruncated, d.readErr)
		}
		return d.readErr
	case d.srcEOF && d.remaining > 0:
		if d.dropped > 0 {
			return fmt.Errorf("%w: %d bytes missing, partial frame of %d bytes dropped", ErrTruncated, d.remaining, d.dropped)
		}
		return fmt.Errorf("%w: %d bytes missing", ErrTruncated, d.remaining)
	}
	return io.EOF
}
