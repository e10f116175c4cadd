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
	codec, rr, err := sniff(r)
	if err != nil {
		return nil, err
	}
	var cfg decodeConfig
	for _, o := range opts {
		o(&cfg)
	}
	var d Decoder
	err = guard(codec.Name, func() error {
		var err error
		d, err = codec.Decode(ctx, rr)
		return err
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
	codec, rr, err := sniff(r)
	if err != nil {
		return Info{}, err
	}
	var info Info
	err = guard(codec.Name, func() error {
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
	return info, err
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

// sniff reads the head of r, picks the codec and returns a reader positioned
// at the start of the stream: r itself, rewound, when it can seek.
func sniff(r io.Reader) (Codec, io.Reader, error) {
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Codec{}, nil, err
	}
	head = head[:n]
	var rr io.Reader
	if s, ok := r.(io.Seeker); ok {
		if _, err := s.Seek(-int64(n), io.SeekCurrent); err != nil {
			return Codec{}, nil, err
		}
		rr = r
	} else {
		rr = io.MultiReader(bytes.NewReader(head), r)
	}
	if n == 0 {
		return Codec{}, nil, fmt.Errorf("%w: empty input", ErrMalformed)
	}
	registry.RLock()
	defer registry.RUnlock()
	for _, c := range registry.codecs {
		if c.Match(head) {
			return c, rr, nil
		}
	}
	if len(registry.fallbacks) > 0 {
		return registry.fallbacks[0], rr, nil
	}
	return Codec{}, nil, fmt.Errorf("%w: no registered codec recognises the content", ErrUnknownFormat)
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

func (d *fileDecoder) Close() error {
	err := d.Decoder.Close()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	return err
}
