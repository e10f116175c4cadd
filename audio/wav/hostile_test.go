package wav

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
)

// TestHostile feeds damaged and malicious headers to the decoder. Each must
// fail with the right sentinel, quickly, and without a large allocation.
func TestHostile(t *testing.T) {
	fmt16 := chunk("fmt ", fmtChunk(formatPCM, 2, 48000, 16))
	set := func(b []byte, off int, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	set16 := func(b []byte, off int, v uint16) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint16(b[off:], v)
		return b
	}
	plain := riff(fmt16, chunk("data", make([]byte, 8)))
	// Offsets in plain: fmt body at 20, data size at 40.
	badGUID := extChunk(formatPCM, 2, 48000, 24, 24, 3)
	badGUID[39] ^= 0xff
	var manyChunks []byte
	for range maxHeaderChunk + 1 {
		manyChunks = append(manyChunks, chunk("JUNK", nil)...)
	}
	tests := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, audio.ErrMalformed},
		{"truncated RIFF header", []byte("RIFF\x00\x00"), audio.ErrMalformed},
		{"not WAVE", []byte("RIFF\x04\x00\x00\x00AVI LIST"), audio.ErrUnknownFormat},
		{"header only", riff(), audio.ErrMalformed},
		{"truncated chunk header", riff(fmt16)[:len(riff(fmt16))-20], audio.ErrMalformed},
		{"no data chunk", riff(fmt16), audio.ErrMalformed},
		{"data before fmt", riff(chunk("data", make([]byte, 8)), fmt16), audio.ErrMalformed},
		{"zero channels", set16(plain, 22, 0), audio.ErrMalformed},
		{"nine channels", set16(plain, 22, 9), audio.ErrUnsupported},
		{"65535 channels", set16(plain, 22, 65535), audio.ErrUnsupported},
		{"sample rate 0", set(plain, 24, 0), audio.ErrMalformed},
		{"sample rate 100", set(plain, 24, 100), audio.ErrUnsupported},
		{"sample rate 4G", set(plain, 24, 0xFFFFFFFF), audio.ErrUnsupported},
		{"zero bits", set16(plain, 34, 0), audio.ErrMalformed},
		{"48-bit PCM", riff(chunk("fmt ", fmtChunk(formatPCM, 1, 48000, 48)), chunk("data", nil)), audio.ErrUnsupported},
		{"16-bit float", riff(chunk("fmt ", fmtChunk(formatFloat, 1, 48000, 16)), chunk("data", nil)), audio.ErrUnsupported},
		{"MP3 in WAV", riff(chunk("fmt ", fmtChunk(0x55, 2, 48000, 16)), chunk("data", nil)), audio.ErrUnsupported},
		{"block align mismatch", set16(plain, 32, 7), audio.ErrMalformed},
		{"short fmt", riff(chunk("fmt ", make([]byte, 8)), chunk("data", nil)), audio.ErrMalformed},
		{"fmt claims 4 GB", set(riff(fmt16), 16, 0xFFFFFFF0), audio.ErrMalformed},
		{"extensible without extension", riff(chunk("fmt ", fmtChunk(formatExtensible, 2, 48000, 16)), chunk("data", nil)), audio.ErrMalformed},
		{"extensible unknown GUID", riff(chunk("fmt ", badGUID), chunk("data", nil)), audio.ErrUnsupported},
		{"extensible valid bits above container", riff(chunk("fmt ", extChunk(formatPCM, 2, 48000, 16, 24, 3)), chunk("data", nil)), audio.ErrMalformed},
		{"LIST claims 1 MiB", riff(fmt16, []byte("LIST\x00\x00\x10\x00INFOINAM")), audio.ErrMalformed},
		{"unknown chunk claims 4 GB", riff(fmt16, []byte("abcd\xff\xff\xff\xff")), audio.ErrMalformed},
		{"ds64 claims 4 GB", append([]byte("RF64\xff\xff\xff\xffWAVEds64\xf0\xff\xff\xff"), make([]byte, 28)...), audio.ErrMalformed},
		{"ds64 data size 2^63", append(append([]byte("RF64\xff\xff\xff\xffWAVEds64\x1c\x00\x00\x00"), make([]byte, 8)...), 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), audio.ErrMalformed},
		{"too many chunks", riff(append(manyChunks, fmt16...)), audio.ErrMalformed},
		{"44 bytes claiming 4 GB", set(set(plain, 4, 0xFFFFFFF0), 40, 0xFFFFFFF0-36), ErrTruncated},
		{"data claims more", set(plain, 40, 1000), ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, seekable := range []bool{false, true} {
				var r io.Reader = onlyReader{bytes.NewReader(tc.file)}
				if seekable {
					r = bytes.NewReader(tc.file)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				err := decodeReader(r)
				elapsed := time.Since(start)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, tc.want) {
					t.Errorf("seekable=%v: err = %v, want %v", seekable, err, tc.want)
				}
				// The read buffer (64 KiB) is the only sizeable allocation.
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
					t.Errorf("seekable=%v: allocated %d bytes", seekable, alloc)
				}
				if elapsed > 2*time.Second {
					t.Errorf("seekable=%v: took %v", seekable, elapsed)
				}
			}
		})
	}
}

// decodeReader opens r and reads it to the end, returning the first error
// other than io.EOF.
func decodeReader(r io.Reader) error {
	d, err := NewDecoder(context.Background(), r)
	if err != nil {
		return err
	}
	defer d.Close()
	buf := audio.NewBuffer(d.Format().Channels, 4096)
	for {
		if _, err := d.Read(buf); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestCanceled checks that a canceled context stops decoding and encoding.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	file := riff(chunk("fmt ", fmtChunk(formatPCM, 1, 8000, 16)), chunk("data", make([]byte, 100)))
	d, err := NewDecoder(ctx, bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEncoder(ctx, io.Discard, d.Format(), audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := d.Read(audio.NewBuffer(1, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel: %v", err)
	}
	if err := e.Write(audio.NewBuffer(1, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("Write after cancel: %v", err)
	}
	if _, err := NewDecoder(ctx, bytes.NewReader(file)); !errors.Is(err, context.Canceled) {
		t.Errorf("NewDecoder after cancel: %v", err)
	}
}
