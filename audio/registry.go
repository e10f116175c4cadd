package audio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Decoder is a Source over an encoded stream.
type Decoder interface {
	Source
	// Info describes the stream as far as the header told it; Frames may be
	// -1 when the exact length is only known at the end.
	Info() Info
	// Close releases the decoder's resources (processes, buffers). It does
	// not close the reader it was given.
	Close() error
}

// FrameSeeker is a Source that can move to any frame of its stream: the
// next Read starts there. Decoders of PCM in a file can; the Decoders
// Open and Decode return implement it and fail with ErrUnsupported where
// the codec or the reader cannot.
type FrameSeeker interface {
	SeekFrame(frame int64) error
}

// Encoder is a Sink that writes an encoded stream. Close flushes it and
// finishes the container; nothing is complete before Close returns nil.
type Encoder interface {
	Sink
	Close() error
}

// Codec is a decoder registration.
type Codec struct {
	// Name identifies the codec in errors and listings ("wav", "ffmpeg").
	Name string
	// Match reports whether the first bytes of a stream (up to SniffLen)
	// belong to this codec. A nil Match marks a fallback that is tried, in
	// registration order, when no codec matched.
	Match func(head []byte) bool
	// Decode opens a decoder. r is positioned at the start of the stream; it
	// is the caller's *os.File or io.ReadSeeker when the caller gave one, so
	// codecs can seek or hand the path to an external tool.
	Decode func(ctx context.Context, r io.Reader) (Decoder, error)
	// Probe, if set, reads Info without preparing to decode (cheaper for
	// external tools). Otherwise Probe opens a decoder and asks its Info.
	Probe func(ctx context.Context, r io.Reader) (Info, error)
}

// SniffLen is how many leading bytes Match functions see at most.
const SniffLen = 4096

// EncoderFactory creates an Encoder writing to w.
type EncoderFactory func(ctx context.Context, w io.Writer, f Format, opts EncodeOptions) (Encoder, error)

var registry struct {
	sync.RWMutex
	codecs    []Codec
	fallbacks []Codec
	encoders  map[string]EncoderFactory
}

// RegisterCodec makes a decoder available to Decode, Open and Probe.
// Codec packages call it from init.
func RegisterCodec(c Codec) {
	registry.Lock()
	defer registry.Unlock()
	if c.Match == nil {
		registry.fallbacks = append(registry.fallbacks, c)
		return
	}
	registry.codecs = append(registry.codecs, c)
}

// RegisterEncoder makes an encoder available under an output format name of
// the API (wav, wav-24bit, flac, mp3, ...). A later registration of the same
// name replaces the earlier one, so a pure-Go encoder registered after the
// ffmpeg adapter wins.
func RegisterEncoder(name string, f EncoderFactory) {
	registry.Lock()
	defer registry.Unlock()
	if registry.encoders == nil {
		registry.encoders = map[string]EncoderFactory{}
	}
	registry.encoders[name] = f
}

// Encoders lists the registered encoder names, sorted.
func Encoders() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.encoders))
	for n := range registry.encoders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewEncoder creates an encoder for the named output format.
func NewEncoder(ctx context.Context, format string, w io.Writer, f Format, opts EncodeOptions) (Encoder, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	registry.RLock()
	factory := registry.encoders[format]
	registry.RUnlock()
	if factory == nil {
		return nil, fmt.Errorf("%w: no encoder for %q (is its codec package imported?)", ErrUnsupported, format)
	}
	return factory(ctx, w, f, opts)
}

// DecodeOption adjusts Decode, Open and Probe.
type DecodeOption func(*decodeConfig)

type decodeConfig struct {
	maxDuration time.Duration
}

// WithMaxDuration caps the decoded duration: reading past it fails with
// ErrTooLong. It protects servers from inputs that decode forever.
func WithMaxDuration(d time.Duration) DecodeOption {
	return func(c *decodeConfig) { c.maxDuration = d }
}

// Decode detects the codec of r by its content and returns a decoder. The
// decoder runs under recover and honours ctx between reads, so a damaged
// file is an error on this stream, never a crash. If r is an *os.File or
// another io.ReadSeeker, codecs may seek in it.
func Decode(ctx context.Context, r io.Reader, opts ...DecodeOption) (Decoder, error) {
	var cfg decodeConfig
	for _, o := range opts {
		o(&cfg)
	}
	var d Decoder
	codec, err := tryCodecs(r, func(c Codec, rr io.Reader) error {
		return guard(c.Name, func() error {
			var err error
			d, err = c.Decode(ctx, rr)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	g := &guardedDecoder{ctx: ctx, d: d, codec: codec.Name, format: d.Format()}
	if err := g.format.Validate(); err != nil {
		d.Close()
		return nil, err
	}
	if cfg.maxDuration > 0 {
		g.maxFrames = int64(cfg.maxDuration.Seconds() * float64(g.format.SampleRate))
		if info := d.Info(); info.Frames > g.maxFrames || (info.Frames < 0 && info.Length > cfg.maxDuration.Seconds()) {
			d.Close()
			return nil, fmt.Errorf("%w: %.1f s, limit %s", ErrTooLong, info.Length, cfg.maxDuration)
		}
	}
	return g, nil
}

// Open decodes the named file; Close on the decoder also closes the file.
func Open(ctx context.Context, path string, opts ...DecodeOption) (Decoder, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := Decode(ctx, f, opts...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &fileDecoder{Decoder: d, f: f}, nil
}

// Probe reads the Info of a stream without decoding its audio where the codec
// allows.
func Probe(ctx context.Context, r io.Reader) (Info, error) {
	var info Info
	_, err := tryCodecs(r, func(codec Codec, rr io.Reader) error {
		return guard(codec.Name, func() error {
			if codec.Probe != nil {
				var err error
				info, err = codec.Probe(ctx, rr)
				return err
			}
			d, err := codec.Decode(ctx, rr)
			if err != nil {
				return err
			}
			info = d.Info()
			return d.Close()
		})
	})
	if err != nil {
		return Info{}, err
	}
	return info, nil
}

// tryCodecs calls try with the codecs that may read r, best first, and
// the stream positioned at its start, until one does not fail with
// ErrUnsupported: a codec that recognised the format but not this variant
// of it (MPEG-2.5, an exotic bit depth, a WAV in A-law) hands over to the
// fallback, when the stream can be rewound for it. Decode and Probe pick
// their codec alike this way, so that what a probe accepted is what a
// decode reads. It returns the codec tried last and its error.
func tryCodecs(r io.Reader, try func(Codec, io.Reader) error) (Codec, error) {
	cs, rr, err := candidates(r)
	if err != nil {
		return Codec{}, err
	}
	var (
		codec Codec
		start int64
	)
	seeker, canSeek := r.(io.Seeker)
	if canSeek {
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			canSeek = false
		}
	}
	for i, c := range cs {
		codec = c
		err = try(c, rr)
		if err == nil || !errors.Is(err, ErrUnsupported) || !canSeek || i == len(cs)-1 {
			break
		}
		if _, serr := seeker.Seek(start, io.SeekStart); serr != nil {
			break
		}
	}
	return codec, err
}

// ProbeFile probes the named file.
func ProbeFile(ctx context.Context, path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	info, err := Probe(ctx, f)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// maxBufferedTag bounds how much of a leading ID3v2 tag sniffing buffers from
// a reader that cannot seek; past it, codecs see the tag's first bytes only.
const maxBufferedTag = 1 << 20

// candidates returns the codecs that may decode r, best first: the codec
// whose Match accepts the head, then the fallbacks. Match sees the bytes
// after a leading ID3v2 tag (MP3 and some FLAC files carry one, and a cover
// image easily pushes the audio past SniffLen); the returned reader still
// starts at the tag.
func candidates(r io.Reader) ([]Codec, io.Reader, error) {
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, nil, err
	}
	head = head[:n]
	if n == 0 {
		return nil, nil, fmt.Errorf("%w: empty input", ErrMalformed)
	}
	probe := head
	seeker, canSeek := r.(io.Seeker)
	var replay []byte // what was read from a non-seekable r, to hand back
	replay = head
	if tag := id3v2Size(head); tag > 0 && tag < 1<<28 {
		if canSeek {
			after := make([]byte, SniffLen)
			if _, err := seeker.Seek(int64(tag-n), io.SeekCurrent); err == nil {
				m, _ := io.ReadFull(r, after)
				probe = after[:m]
				_, err = seeker.Seek(-int64(tag+m), io.SeekCurrent)
				if err != nil {
					return nil, nil, err
				}
				n = 0 // already rewound
			}
		} else if tag <= maxBufferedTag {
			more := make([]byte, tag+SniffLen-n)
			m, _ := io.ReadFull(r, more)
			replay = append(head, more[:m]...)
			if len(replay) > tag {
				probe = replay[tag:]
			}
		}
	}
	var rr io.Reader
	if canSeek {
		if n > 0 {
			if _, err := seeker.Seek(-int64(n), io.SeekCurrent); err != nil {
				return nil, nil, err
			}
		}
		rr = r
	} else {
		rr = io.MultiReader(bytes.NewReader(replay), r)
	}
	registry.RLock()
	defer registry.RUnlock()
	var cs []Codec
	for _, c := range registry.codecs {
		if c.Match(probe) || (len(probe) != len(head) && c.Match(head)) {
			cs = append(cs, c)
			break
		}
	}
	cs = append(cs, registry.fallbacks...)
	if len(cs) == 0 {
		return nil, nil, fmt.Errorf("%w: no registered codec recognises the content", ErrUnknownFormat)
	}
	return cs, rr, nil
}

// id3v2Size returns the total size of an ID3v2 tag at the start of head, or 0.
func id3v2Size(head []byte) int {
	if len(head) < 10 || string(head[:3]) != "ID3" || head[3] == 0xff || head[4] == 0xff {
		return 0
	}
	size := 0
	for _, b := range head[6:10] {
		if b&0x80 != 0 {
			return 0 // not syncsafe: not a tag
		}
		size = size<<7 | int(b)
	}
	size += 10
	if head[5]&0x10 != 0 { // footer present
		size += 10
	}
	return size
}

// guard runs f and turns a panic inside a codec into ErrMalformed.
func guard(codec string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s decoder failed on damaged input: %v", ErrMalformed, codec, p)
		}
	}()
	return f()
}

// CodecOf names the registered codec that decodes d ("wav", "ffmpeg",
// ...) when Decode or Open returned d, or a decoder that wraps one of
// theirs and has an Unwrap method returning it; "" for other decoders.
// The ffmpeg codec runs an external program for as long as d is open.
func CodecOf(d Decoder) string {
	for {
		switch v := d.(type) {
		case *guardedDecoder:
			return v.codec
		case *fileDecoder:
			d = v.Decoder
		case interface{ Unwrap() Decoder }:
			d = v.Unwrap()
		default:
			return ""
		}
	}
}

// guardedDecoder enforces the Source contract, the duration cap and context
// cancellation around any codec, and converts panics to errors.
type guardedDecoder struct {
	ctx       context.Context
	d         Decoder
	codec     string
	format    Format
	frames    int64
	maxFrames int64
	err       error
}

func (g *guardedDecoder) Format() Format { return g.format }
func (g *guardedDecoder) Info() Info     { return g.d.Info() }
func (g *guardedDecoder) Close() error   { return g.d.Close() }

// SeekFrame implements FrameSeeker where the codec's decoder does.
func (g *guardedDecoder) SeekFrame(frame int64) error {
	if _, ok := g.d.(FrameSeeker); !ok {
		return fmt.Errorf("%w: seeking in %s", ErrUnsupported, g.codec)
	}
	err := guard(g.codec, func() error { return seekFrame(g.d, frame) })
	if err == nil {
		g.frames, g.err = frame, nil
	}
	return err
}

// seekFrame seeks d if it can.
func seekFrame(d Source, frame int64) error {
	if s, ok := d.(FrameSeeker); ok {
		return s.SeekFrame(frame)
	}
	return fmt.Errorf("%w: the source cannot seek", ErrUnsupported)
}

func (g *guardedDecoder) Read(dst Buffer) (n int, err error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(dst) != g.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", ErrFormatMismatch, len(dst), g.format.Channels)
	}
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	err = guard(g.codec, func() error {
		var err error
		n, err = g.d.Read(dst)
		return err
	})
	if n < 0 || n > dst.Frames() {
		n, err = 0, fmt.Errorf("%w: %s decoder returned %d frames for a %d-frame buffer", ErrMalformed, g.codec, n, dst.Frames())
	}
	if n > 0 {
		// A codec that returns data together with an error gets the error
		// reported on the next call, as the Source contract requires.
		if err != nil {
			g.err = err
		}
		g.frames += int64(n)
		if g.maxFrames > 0 && g.frames > g.maxFrames {
			g.err = fmt.Errorf("%w: more than %d frames", ErrTooLong, g.maxFrames)
			return 0, g.err
		}
		return n, nil
	}
	if err == nil {
		if dst.Frames() == 0 {
			return 0, nil
		}
		err = fmt.Errorf("%w: %s decoder returned no frames and no error", ErrMalformed, g.codec)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%w: truncated stream: %v", ErrMalformed, err)
	}
	g.err = err
	return 0, err
}

type fileDecoder struct {
	Decoder
	f *os.File
}

// SeekFrame implements FrameSeeker.
func (d *fileDecoder) SeekFrame(frame int64) error { return seekFrame(d.Decoder, frame) }

func (d *fileDecoder) Close() error {
	err := d.Decoder.Close()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	return err
}
