// Package flac decodes and encodes FLAC streams in pure Go on top of
// github.com/mewkiz/flac, which decodes and writes the metadata blocks;
// the encoder builds the frames itself (frame.go), in buffers it reuses.
// Importing it registers the "flac" decoder (matched
// by content: "fLaC", optionally behind an ID3v2 tag) and the "flac" encoder
// with package audio.
//
// Integer samples map to floats by dividing by 2^(bits-1), the scaling of
// audio.IntToFloat, so FLAC -> Buffer -> FLAC at the same bit depth is
// bit-exact.
package flac

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
	mflac "github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
)

func init() {
	audio.RegisterCodec(audio.Codec{
		Name:  "flac",
		Match: Match,
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) {
			return NewDecoder(ctx, r)
		},
	})
	audio.RegisterEncoder("flac", func(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		return NewEncoder(ctx, w, f, opts)
	})
}

// Errors of this package; each wraps the audio sentinel that fits.
var (
	// ErrNotFLAC means the stream does not start with the FLAC signature.
	ErrNotFLAC = fmt.Errorf("%w: not a FLAC stream", audio.ErrUnknownFormat)
	// ErrBitDepth means a bit depth outside what FLAC (decode: 4-32) or this
	// encoder (16, 24) supports.
	ErrBitDepth = fmt.Errorf("%w: FLAC bit depth", audio.ErrUnsupported)
)

var signature = []byte("fLaC")

// id3Size returns the total size of an ID3v2 tag at the start of head
// (header, body and optional footer), or 0 if head does not start with one.
func id3Size(head []byte) int {
	if len(head) < 10 || string(head[:3]) != "ID3" || head[3] == 0xFF || head[4] == 0xFF {
		return 0
	}
	for _, b := range head[6:10] {
		if b >= 0x80 {
			return 0
		}
	}
	n := 10 + (int(head[6])<<21 | int(head[7])<<14 | int(head[8])<<7 | int(head[9]))
	if head[5]&0x10 != 0 { // footer present (v2.4)
		n += 10
	}
	return n
}

// Match reports whether head starts a FLAC stream: the "fLaC" signature,
// possibly behind an ID3v2 tag that ends inside head, followed by a
// STREAMINFO block header.
func Match(head []byte) bool {
	if n := id3Size(head); n > 0 {
		if n > len(head) {
			// The tag hides the signature; MP3 is far more likely.
			return false
		}
		head = head[n:]
	}
	if len(head) < 8 || !bytes.Equal(head[:4], signature) {
		return false
	}
	// STREAMINFO must come first and is 34 bytes long.
	return head[4]&0x7F == 0 && head[5] == 0 && head[6] == 0 && head[7] == 34
}

// Decoder decodes a FLAC stream. It implements audio.Decoder.
type Decoder struct {
	stream *mflac.Stream
	br     *bufio.Reader
	info   audio.Info
	bits   uint8
	scale  float64 // 1 / 2^(bits-1): exact, since it is a power of two
	nch    int
	cur    *frame.Frame
	pos    int // next sample of cur to deliver
	done   int64
	err    error
}

// NewDecoder reads the FLAC signature and every metadata block of r and
// returns a decoder positioned at the first audio frame. When r is an
// io.Seeker (an *os.File), it also measures the stream size for the bitrate
// and restores the position.
func NewDecoder(ctx context.Context, r io.Reader) (*Decoder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var size int64 = -1
	if s, ok := r.(io.Seeker); ok {
		if cur, err := s.Seek(0, io.SeekCurrent); err == nil {
			if end, err := s.Seek(0, io.SeekEnd); err == nil {
				size = end - cur
			}
			if _, err := s.Seek(cur, io.SeekStart); err != nil {
				return nil, err
			}
		}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(10)
	if n := id3Size(head); n > 0 {
		if _, err := br.Discard(n); err != nil {
			return nil, fmt.Errorf("%w: truncated ID3v2 tag before FLAC stream", audio.ErrMalformed)
		}
		size -= int64(n)
	}
	sig, err := br.Peek(4)
	if err != nil || !bytes.Equal(sig, signature) {
		return nil, ErrNotFLAC
	}
	stream, err := mflac.Parse(br)
	if err != nil {
		return nil, malformed("metadata", err)
	}
	si := stream.Info
	if si.BitsPerSample < 4 || si.BitsPerSample > 32 {
		return nil, fmt.Errorf("%w: %d bits per sample (want 4-32)", ErrBitDepth, si.BitsPerSample)
	}
	f := audio.Format{SampleRate: int(si.SampleRate), Channels: int(si.NChannels)}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	d := &Decoder{
		stream: stream,
		br:     br,
		bits:   si.BitsPerSample,
		scale:  1 / float64(int64(1)<<(si.BitsPerSample-1)),
		nch:    f.Channels,
		info: audio.Info{
			Format:     "flac",
			Container:  "flac",
			Channels:   f.Channels,
			SampleRate: f.SampleRate,
			BitDepth:   int(si.BitsPerSample),
			Frames:     -1,
		},
	}
	if si.NSamples > 0 {
		d.info.Frames = int64(si.NSamples)
		d.info.Length = float64(si.NSamples) / float64(si.SampleRate)
		if size > 0 {
			d.info.Bitrate = float64(size) * 8 / d.info.Length / 1000
		}
	}
	d.info.Tags = tagsFromBlocks(stream.Blocks)
	return d, nil
}

// malformed wraps an error of the FLAC library as audio.ErrMalformed and says
// where it happened; a premature end reads as a truncated stream.
func malformed(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated FLAC %s", audio.ErrMalformed, what)
	}
	return fmt.Errorf("%w: FLAC %s: %v", audio.ErrMalformed, what, err)
}

// Format implements audio.Source.
func (d *Decoder) Format() audio.Format { return d.info.StreamFormat() }

// Info implements audio.Decoder.
func (d *Decoder) Info() audio.Info { return d.info }

// Close implements audio.Decoder. It does not close the reader.
func (d *Decoder) Close() error {
	d.cur = nil
	if d.err == nil {
		d.err = io.EOF
	}
	return nil
}

// Read implements audio.Source.
func (d *Decoder) Read(dst audio.Buffer) (int, error) {
	if len(dst) != d.nch {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel FLAC stream", audio.ErrFormatMismatch, len(dst), d.nch)
	}
	want := dst.Frames()
	n := 0
	for n < want {
		if d.cur == nil || d.pos >= int(d.cur.BlockSize) {
			if d.err != nil {
				break
			}
			if err := d.nextFrame(); err != nil {
				d.err = err
				break
			}
			continue
		}
		k := min(want-n, int(d.cur.BlockSize)-d.pos)
		for c, sf := range d.cur.Subframes {
			out := dst[c][n : n+k]
			in := sf.Samples[d.pos : d.pos+k]
			for i, v := range in {
				out[i] = float64(v) * d.scale
			}
		}
		d.pos += k
		n += k
	}
	if n > 0 {
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	return 0, nil
}

// nextFrame decodes the next audio frame into d.cur. The library cannot
// decode into caller buffers, so each frame costs its allocations (one
// slice per channel plus bookkeeping); nothing else here allocates.
func (d *Decoder) nextFrame() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: FLAC frame decoder failed on damaged input: %v", audio.ErrMalformed, p)
		}
	}()
	d.cur, d.pos = nil, 0
	if p, _ := d.br.Peek(3); string(p) == "TAG" {
		return io.EOF // an ID3v1 tag ends the audio
	}
	f, err := d.stream.Next()
	if err != nil {
		// Trailing junk (an ID3v1 tag, say) after every promised sample is
		// the end, as it is for ffmpeg and libFLAC.
		if err == io.EOF || (d.info.Frames > 0 && d.done >= d.info.Frames) {
			return io.EOF
		}
		return malformed("frame header", err)
	}
	// Frames may defer bit depth and sample rate to STREAMINFO; the library
	// leaves them 0 then, so fill them in before it decodes the subframes.
	if f.BitsPerSample == 0 {
		f.BitsPerSample = d.bits
	}
	if f.BitsPerSample != d.bits {
		return fmt.Errorf("%w: FLAC frame has %d bits per sample, stream has %d", audio.ErrMalformed, f.BitsPerSample, d.bits)
	}
	if f.Channels.Count() != d.nch {
		return fmt.Errorf("%w: FLAC frame has %d channels, stream has %d", audio.ErrMalformed, f.Channels.Count(), d.nch)
	}
	if err := f.Parse(); err != nil {
		return malformed("frame", err)
	}
	for _, sf := range f.Subframes {
		if len(sf.Samples) != int(f.BlockSize) {
			return fmt.Errorf("%w: FLAC subframe has %d samples, frame has %d", audio.ErrMalformed, len(sf.Samples), f.BlockSize)
		}
	}
	d.cur = f
	d.done += int64(f.BlockSize)
	return nil
}
