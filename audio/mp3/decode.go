package mp3

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	gomp3 "github.com/hajimehoshi/go-mp3"
)

const (
	// decoderDelay is the delay of the standard Layer III synthesis (528
	// samples) plus one, which the LAME tag convention and ffmpeg add to the
	// encoder delay when trimming.
	decoderDelay = 529
	// goMP3Delay is how many samples go-mp3's output lags ffmpeg's untrimmed
	// output; TestGoMP3Delay measures it.
	goMP3Delay = 0
	// maxConcealed is how many frames in a row may fail to decode (and are
	// replaced by silence) before the stream is declared malformed.
	maxConcealed = 16
)

// stream is what opening an MP3 learns before decoding.
type stream struct {
	framer *framer
	info   audio.Info
	first  header
	skip   int64 // samples to drop at the start
	total  int64 // samples to deliver, -1 if not limited
}

// open reads the tags, finds the first frame and the VBR header and, for
// seekable inputs without a frame count, counts the frames.
func open(ctx context.Context, r io.Reader) (*stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seeker, _ := r.(io.Seeker)
	var start int64
	var v1 audio.Tags
	var hasV1 bool
	if seeker != nil {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			seeker = nil
		} else {
			v1, hasV1 = readID3v1(r, seeker, start)
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var tags audio.Tags
	for first := true; ; first = false {
		p, _ := br.Peek(10)
		n := id3.TagSize(p)
		if n == 0 {
			break
		}
		t, err := readID3v2(br, n)
		if err != nil {
			return nil, err
		}
		if first {
			tags = t
		} else {
			tags = mergeTags(tags, t)
		}
	}
	if hasV1 {
		tags = mergeTags(tags, v1)
	}
	f := newFramer(br)
	if err := f.sync(maxLeadingJunk); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no MPEG audio frame found", audio.ErrMalformed)
		}
		return nil, err
	}
	p, _ := br.Peek(maxFrameSize)
	h, _ := parseHeader(p)
	if h.version == 25 {
		return nil, ErrMPEG25
	}
	s := &stream{framer: f, first: h, total: -1}
	f.ref, f.haveRef = h, true
	vbr, hasVBR := parseVBR(h, p[:min(len(p), h.size)])
	if hasVBR {
		br.Discard(h.size) // the tag frame holds no audio
	}
	frames, streamBytes := vbr.frames, vbr.bytes
	if frames == 0 && seeker != nil {
		var err error
		if frames, streamBytes, err = countFrames(r, seeker, br, h); err != nil {
			return nil, err
		}
	}
	spf := int64(h.samples)
	s.skip = goMP3Delay
	if frames > 0 {
		s.total = frames * spf
		if vbr.lame && int64(vbr.delay+vbr.padding) < s.total {
			s.skip += int64(vbr.delay + decoderDelay)
			s.total -= int64(vbr.delay + vbr.padding)
		} else {
			// Without gapless information ffmpeg keeps every sample; so
			// do we, and the count is a duration, not a cut.
			s.total = -1
		}
	}
	s.info = audio.Info{
		Format:     "mp3",
		Container:  "mp3",
		Channels:   h.channels(),
		SampleRate: h.rate,
		Bitrate:    float64(h.bitrate),
		Frames:     -1,
		Tags:       tags,
	}
	if frames > 0 {
		s.info.Frames = frames * spf
		if s.total >= 0 {
			s.info.Frames = s.total
		}
		s.info.Length = float64(s.info.Frames) / float64(h.rate)
		if hasVBR && streamBytes > int64(h.size) {
			streamBytes -= int64(h.size) // the count includes the tag frame
		}
		if streamBytes > 0 {
			s.info.Bitrate = float64(streamBytes) * 8 / (float64(frames*spf) / float64(h.rate)) / 1000
		}
	}
	return s, nil
}

// readID3v1 reads a trailing ID3v1 tag and returns to start.
func readID3v1(r io.Reader, s io.Seeker, start int64) (audio.Tags, bool) {
	defer s.Seek(start, io.SeekStart)
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil || end-start < 128+4 {
		return audio.Tags{}, false
	}
	if _, err := s.Seek(end-128, io.SeekStart); err != nil {
		return audio.Tags{}, false
	}
	var p [128]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return audio.Tags{}, false
	}
	return id3.ParseV1(p[:])
}

// countFrames walks the frame headers from br's position to the end,
// without decoding, and restores the position. Only headers and frame
// lengths are read, through a separate buffer.
func countFrames(r io.Reader, s io.Seeker, br *bufio.Reader, first header) (frames, size int64, err error) {
	pos, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, 0, err
	}
	pos -= int64(br.Buffered()) // where br's reader logically is
	f := newFramer(io.MultiReader(bytesReader(br), r))
	f.ref, f.haveRef = first, true
	for {
		_, fr, err := f.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		frames++
		size += int64(len(fr))
	}
	if _, err := s.Seek(pos, io.SeekStart); err != nil {
		return 0, 0, err
	}
	br.Reset(r)
	return frames, size, nil
}

// bytesReader returns a reader over what br holds buffered, without
// consuming it from br.
func bytesReader(br *bufio.Reader) io.Reader {
	p, _ := br.Peek(br.Buffered())
	return &sliceReader{p: p}
}

type sliceReader struct{ p []byte }

func (r *sliceReader) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.p)
	r.p = r.p[n:]
	return n, nil
}

// Probe reads the Info of an MP3 stream without decoding audio.
func Probe(ctx context.Context, r io.Reader) (audio.Info, error) {
	s, err := open(ctx, r)
	if err != nil {
		return audio.Info{}, err
	}
	return s.info, nil
}

// Decoder decodes an MP3 stream. It implements audio.Decoder.
type Decoder struct {
	s       *stream
	dec     *gomp3.Decoder
	nch     int
	pcm     [1152 * 4]byte // one decoded frame: 16-bit stereo
	pcmN    int            // bytes in pcm
	pcmPos  int
	skip    int64
	remain  int64
	silent  int // frames of silence owed before go-mp3's next frame
	failRun int
	err     error
}

// NewDecoder opens an MP3 stream. r is read from its current position; if
// it is an io.Seeker, the frame count and a trailing ID3v1 tag are read by
// seeking, and the position is restored.
func NewDecoder(ctx context.Context, r io.Reader) (*Decoder, error) {
	s, err := open(ctx, r)
	if err != nil {
		return nil, err
	}
	d := &Decoder{s: s, nch: s.info.Channels, skip: s.skip, remain: s.total}
	// go-mp3 decodes the first frame while opening; a frame it rejects is
	// concealed like any other.
	for {
		dec, err := newGoMP3(s.framer)
		if err == nil {
			d.dec = dec
			break
		}
		if err == io.EOF {
			d.err = io.EOF
			break
		}
		d.silent++
		if d.silent > maxConcealed {
			return nil, fmt.Errorf("%w: MP3 frames undecodable: %v", audio.ErrMalformed, err)
		}
	}
	return d, nil
}

func newGoMP3(r io.Reader) (dec *gomp3.Decoder, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-mp3 panic: %v", p)
		}
	}()
	return gomp3.NewDecoder(r)
}

// Format implements audio.Source.
func (d *Decoder) Format() audio.Format { return d.s.info.StreamFormat() }

// Info implements audio.Decoder.
func (d *Decoder) Info() audio.Info { return d.s.info }

// Concealed returns how many frames were damaged and replaced by silence so
// far.
func (d *Decoder) Concealed() int64 { return d.s.framer.concealed }

// Close implements audio.Decoder. It does not close the reader.
func (d *Decoder) Close() error {
	if d.err == nil {
		d.err = io.EOF
	}
	d.dec = nil
	return nil
}

// Read implements audio.Source.
func (d *Decoder) Read(dst audio.Buffer) (int, error) {
	if len(dst) != d.nch {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel MP3 stream", audio.ErrFormatMismatch, len(dst), d.nch)
	}
	want := dst.Frames()
	n := 0
	for n < want {
		if d.pcmPos < d.pcmN {
			avail := (d.pcmN - d.pcmPos) / 4
			if d.skip > 0 {
				drop := int(min(d.skip, int64(avail)))
				d.pcmPos += drop * 4
				d.skip -= int64(drop)
				continue
			}
			k := min(want-n, avail)
			if d.remain >= 0 {
				if d.remain == 0 {
					d.pcmPos, d.pcmN = 0, 0
					d.err = io.EOF
					break
				}
				k = int(min(int64(k), d.remain))
				d.remain -= int64(k)
			}
			d.convert(dst, n, k)
			n += k
			continue
		}
		if d.err != nil {
			break
		}
		if d.remain == 0 {
			d.err = io.EOF
			break
		}
		if err := d.decodeFrame(); err != nil {
			d.err = err
			break
		}
	}
	if n > 0 {
		return n, nil
	}
	if d.err != nil {
		return 0, d.err
	}
	return 0, nil
}

// convert writes k frames from the decoded PCM to dst at offset off. Mono
// streams take the left channel of go-mp3's always-stereo output.
func (d *Decoder) convert(dst audio.Buffer, off, k int) {
	const scale = 1.0 / 32768
	p := d.pcm[d.pcmPos : d.pcmPos+4*k]
	l := dst[0][off : off+k]
	if d.nch == 1 {
		for i := range l {
			l[i] = float64(int16(uint16(p[4*i])|uint16(p[4*i+1])<<8)) * scale
		}
	} else {
		r := dst[1][off : off+k]
		for i := range l {
			l[i] = float64(int16(uint16(p[4*i])|uint16(p[4*i+1])<<8)) * scale
			r[i] = float64(int16(uint16(p[4*i+2])|uint16(p[4*i+3])<<8)) * scale
		}
	}
	d.pcmPos += 4 * k
}

// decodeFrame fills pcm with the next frame: owed silence first, then
// go-mp3's output. A frame go-mp3 fails on becomes silence of the same
// length, so that timing is kept; too many in a row end the stream.
func (d *Decoder) decodeFrame() (err error) {
	frameBytes := d.s.first.samples * 4
	d.pcmPos = 0
	if d.silent > 0 || d.dec == nil {
		if d.dec == nil && d.silent == 0 {
			return io.EOF
		}
		d.silent--
		clear(d.pcm[:frameBytes])
		d.pcmN = frameBytes
		return nil
	}
	n, err := d.readGoMP3()
	if err == nil && n == frameBytes {
		d.pcmN = n
		d.failRun = 0
		return nil
	}
	if err == io.EOF {
		d.pcmN = 0
		return io.EOF
	}
	if d.s.framer.err != nil && d.s.framer.err != io.EOF {
		return d.s.framer.err // an I/O error of the reader, not damage
	}
	d.failRun++
	d.s.framer.concealed++
	if d.failRun > maxConcealed {
		return fmt.Errorf("%w: %d MP3 frames in a row undecodable: %v", audio.ErrMalformed, d.failRun, err)
	}
	clear(d.pcm[:frameBytes])
	d.pcmN = frameBytes
	return nil
}

// readGoMP3 reads exactly one decoded frame from go-mp3, turning a panic
// into an error.
func (d *Decoder) readGoMP3() (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("go-mp3 panic: %v", p)
		}
	}()
	return d.dec.Read(d.pcm[:])
}
