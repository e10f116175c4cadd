package goaudio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// Limits of CheckWAV. go-audio reads a fmt, LIST, smpl or cue chunk whole
// into memory, and each entry of a LIST/INFO chunk into a buffer of the size
// the entry states.
const (
	// MaxFmtChunk is the largest fmt chunk CheckWAV accepts
	// (WAVE_FORMAT_EXTENSIBLE needs 40 bytes).
	MaxFmtChunk = 4096
	// MaxMetadataChunk is the largest LIST, smpl or cue chunk CheckWAV
	// accepts.
	MaxMetadataChunk = 1 << 20
	// MaxChunks is the most chunks CheckWAV walks.
	MaxChunks = 10000
)

// sizeUnknown is the data size streaming writers (ffmpeg on a pipe) state.
const sizeUnknown = 0xFFFFFFFF

// Format tags of the fmt chunk.
const (
	formatPCM        = 0x0001
	formatFloat      = 0x0003
	formatExtensible = 0xFFFE
)

// guidTail is the part shared by the KSDATAFORMAT_SUBTYPE GUIDs; their
// first two bytes hold the format tag of the subformat.
var guidTail = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

// header is what CheckWAV learnt about a file, offsets from where r stood.
type header struct {
	format    audio.Format
	enc       audio.SampleEncoding
	bits      int   // container bits per sample, go-audio's Decoder.BitDepth
	dataStart int64 // first byte of the samples
	dataSize  int64 // bytes of samples, -1 for "to the end of the file"
	fileSize  int64
}

// CheckWAV vets a RIFF/WAVE file before go-audio's wav.Decoder reads it. It
// walks every chunk from the start of the file the way go-audio's chunk
// reader does (including Decoder.ReadMetadata from the start), and refuses
// the file if any chunk go-audio would read into memory (the first fmt
// chunk, LIST, smpl and cue chunks, each entry of a LIST/INFO chunk) claims
// more bytes than the file holds or than MaxFmtChunk / MaxMetadataChunk, if
// the fmt chunk describes a format outside audiopost's limits (1-8
// channels, 1-768 kHz, 8/16/24/32-bit integer or 32/64-bit float PCM, a
// consistent block align), if there are more than MaxChunks chunks, or if
// there is no data chunk after the fmt chunk. RF64 files are refused:
// go-audio reads only RIFF.
//
// Errors wrap audio.ErrUnknownFormat (not RIFF/WAVE), audio.ErrMalformed or
// audio.ErrUnsupported. CheckWAV reads only headers (it seeks over sample
// data), allocates under 1 KB whatever the file claims, and leaves
// r where it found it.
func CheckWAV(r io.ReadSeeker) error {
	_, err := checkWAV(r)
	return err
}

func checkWAV(r io.ReadSeeker) (h header, err error) {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return h, err
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return h, err
	}
	defer func() {
		if _, serr := r.Seek(start, io.SeekStart); serr != nil && err == nil {
			err = serr
		}
	}()
	h.fileSize = end - start
	w := walker{r: r, start: start, size: h.fileSize}
	var scratch [40]byte
	if err := w.readAt(0, scratch[:12]); err != nil {
		return h, fmt.Errorf("%w: truncated RIFF header", audio.ErrMalformed)
	}
	switch {
	case string(scratch[8:12]) != "WAVE":
		return h, fmt.Errorf("%w: not a RIFF/WAVE file", audio.ErrUnknownFormat)
	case string(scratch[:4]) == "RF64" || string(scratch[:4]) == "BW64":
		return h, fmt.Errorf("%w: %s file (go-audio reads only RIFF)", audio.ErrUnsupported, scratch[:4])
	case string(scratch[:4]) != "RIFF":
		return h, fmt.Errorf("%w: not a RIFF/WAVE file", audio.ErrUnknownFormat)
	}
	haveFmt, haveData := false, false
	pos := int64(12)
	for n := 0; pos+8 <= h.fileSize; n++ {
		if n >= MaxChunks {
			return h, fmt.Errorf("%w: more than %d chunks", audio.ErrMalformed, MaxChunks)
		}
		if err := w.readAt(pos, scratch[:8]); err != nil {
			return h, err
		}
		id := string(scratch[:4])
		size := binary.LittleEndian.Uint32(scratch[4:8])
		// go-audio rounds every chunk up to an even size in 32 bits, so
		// 0xFFFFFFFF becomes 0 and the walk goes on right after the chunk
		// header. Do the same, to see what go-audio will see.
		padded := size
		if padded%2 == 1 {
			padded++
		}
		body := pos + 8
		left := h.fileSize - body
		// A chunk of odd size at the very end often lacks its pad byte
		// (go-audio's encoder writes its LIST chunk so).
		fits := int64(size) <= left
		switch id {
		case "fmt ":
			if haveFmt {
				break // go-audio decodes the first fmt chunk only
			}
			haveFmt = true
			if size < 16 || !fits || padded > MaxFmtChunk {
				return h, fmt.Errorf("%w: fmt chunk of %d bytes", audio.ErrMalformed, size)
			}
			fb := scratch[:min(size, 40)]
			if err := w.readAt(body, fb); err != nil {
				return h, err
			}
			if err := h.parseFmt(fb); err != nil {
				return h, err
			}
		case "LIST", "smpl", "cue ":
			if !fits {
				return h, fmt.Errorf("%w: %q chunk of %d bytes where the file holds %d", audio.ErrMalformed, id, size, left)
			}
			if padded > MaxMetadataChunk {
				return h, fmt.Errorf("%w: %q chunk of %d bytes (at most %d)", audio.ErrUnsupported, id, size, MaxMetadataChunk)
			}
			if id == "LIST" {
				if err := w.checkList(body, min(int64(padded), left)); err != nil {
					return h, err
				}
			}
		case "data":
			if haveData {
				break
			}
			if !haveFmt {
				return h, fmt.Errorf("%w: data chunk before fmt chunk", audio.ErrMalformed)
			}
			haveData = true
			h.dataStart, h.dataSize = body, int64(size)
			if size == sizeUnknown {
				h.dataSize = -1
			}
		}
		if !fits {
			// go-audio drains the chunk to the end of the file and stops.
			break
		}
		pos = body + int64(padded)
	}
	switch {
	case !haveFmt:
		return h, fmt.Errorf("%w: no fmt chunk", audio.ErrMalformed)
	case !haveData:
		return h, fmt.Errorf("%w: no data chunk", audio.ErrMalformed)
	}
	return h, nil
}

// parseFmt checks a fmt chunk against audiopost's limits.
func (h *header) parseFmt(f []byte) error {
	tag := binary.LittleEndian.Uint16(f[0:2])
	channels := int(binary.LittleEndian.Uint16(f[2:4]))
	rate := int(binary.LittleEndian.Uint32(f[4:8]))
	blockAlign := int(binary.LittleEndian.Uint16(f[12:14]))
	bits := int(binary.LittleEndian.Uint16(f[14:16]))
	if tag == formatExtensible {
		if len(f) < 40 {
			return fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE fmt chunk of %d bytes, want 40", audio.ErrMalformed, len(f))
		}
		if !bytes.Equal(f[26:40], guidTail) {
			return fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE subformat GUID % x", audio.ErrUnsupported, f[24:40])
		}
		tag = binary.LittleEndian.Uint16(f[24:26])
	}
	h.format = audio.Format{SampleRate: rate, Channels: channels}
	if err := h.format.Validate(); err != nil {
		return err
	}
	switch {
	case tag == formatPCM && bits == 8:
		h.enc = audio.Uint8
	case tag == formatPCM && bits == 16:
		h.enc = audio.Int16
	case tag == formatPCM && bits == 24:
		h.enc = audio.Int24
	case tag == formatPCM && bits == 32:
		h.enc = audio.Int32
	case tag == formatFloat && bits == 32:
		h.enc = audio.Float32
	case tag == formatFloat && bits == 64:
		h.enc = audio.Float64
	default:
		return fmt.Errorf("%w: format tag 0x%04x with %d bits per sample", audio.ErrUnsupported, tag, bits)
	}
	if want := channels * h.enc.Bytes(); blockAlign != want {
		return fmt.Errorf("%w: block align %d, want %d for %d channels of %d bits", audio.ErrMalformed, blockAlign, want, channels, bits)
	}
	h.bits = bits
	return nil
}

// walker reads at offsets from the start of the file.
type walker struct {
	r     io.ReadSeeker
	start int64
	size  int64
}

func (w *walker) readAt(off int64, p []byte) error {
	if off+int64(len(p)) > w.size {
		return fmt.Errorf("%w: truncated header", audio.ErrMalformed)
	}
	if _, err := w.r.Seek(w.start+off, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.ReadFull(w.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: truncated header", audio.ErrMalformed)
		}
		return err
	}
	return nil
}

// checkList checks the entries of a LIST/INFO chunk the way go-audio's
// DecodeListChunk reads them: each entry's buffer is allocated at the size
// the entry states, so that size must fit in the chunk. The chunk (at most
// MaxMetadataChunk bytes) is read once, through a small buffer.
func (w *walker) checkList(body, size int64) error {
	if size < 4 {
		return nil
	}
	if _, err := w.r.Seek(w.start+body, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(io.LimitReader(w.r, size), 512)
	var b [8]byte
	if _, err := io.ReadFull(br, b[:4]); err != nil {
		return fmt.Errorf("%w: truncated LIST chunk", audio.ErrMalformed)
	}
	if string(b[:4]) != "INFO" {
		return nil // go-audio skips other lists
	}
	for p := int64(4); p+8 <= size; {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return fmt.Errorf("%w: truncated LIST chunk", audio.ErrMalformed)
		}
		n := int64(binary.LittleEndian.Uint32(b[4:8]))
		p += 8
		if n > size-p {
			return fmt.Errorf("%w: LIST/INFO entry %q of %d bytes in a %d-byte chunk", audio.ErrMalformed, b[:4], n, size)
		}
		skip := min(n+n&1, size-p)
		if _, err := br.Discard(int(skip)); err != nil {
			return fmt.Errorf("%w: truncated LIST chunk", audio.ErrMalformed)
		}
		p += skip
	}
	return nil
}
