package wav

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// sharedDir returns ../shared next to the module root, found by walking up
// from the package directory to go.mod.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// chunk is one RIFF chunk for hand-made test files.
func chunk(id string, body []byte) []byte {
	b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	b = append(b, body...)
	if len(body)&1 == 1 {
		b = append(b, 0)
	}
	return b
}

// riff wraps chunks in a RIFF/WAVE header with a correct size.
func riff(chunks ...[]byte) []byte {
	body := []byte("WAVE")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// fmtChunk returns a 16-byte fmt chunk body.
func fmtChunk(tag, channels, rate, bits int) []byte {
	ba := channels * bits / 8
	b := binary.LittleEndian.AppendUint16(nil, uint16(tag))
	b = binary.LittleEndian.AppendUint16(b, uint16(channels))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate*ba))
	b = binary.LittleEndian.AppendUint16(b, uint16(ba))
	return binary.LittleEndian.AppendUint16(b, uint16(bits))
}

// extChunk returns a WAVE_FORMAT_EXTENSIBLE fmt chunk body.
func extChunk(sub, channels, rate, container, valid int, mask uint32) []byte {
	b := fmtChunk(formatExtensible, channels, rate, container)
	b = binary.LittleEndian.AppendUint16(b, 22)
	b = binary.LittleEndian.AppendUint16(b, uint16(valid))
	b = binary.LittleEndian.AppendUint32(b, mask)
	b = binary.LittleEndian.AppendUint16(b, uint16(sub))
	b = binary.LittleEndian.AppendUint16(b, 0)
	return append(b, guidTail...)
}

// onlyReader hides every method but Read (no Seek, no WriteTo).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// onlyWriter hides every method but Write: a non-seekable output.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// decodeAll decodes data completely, returning the samples and the error
// that ended the stream (nil for io.EOF).
func decodeAll(t testing.TB, data []byte) (*Decoder, audio.Buffer, error) {
	t.Helper()
	d, err := NewDecoder(context.Background(), onlyReader{bytes.NewReader(data)})
	if err != nil {
		return nil, nil, err
	}
	out, err := audio.ReadAll(context.Background(), d)
	return d, out, err
}

// encodeFile encodes b into a new file in dir (the seekable path) and
// returns its bytes.
func encodeFile(t testing.TB, path string, b audio.Buffer, rate int, opts audio.EncodeOptions) []byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := NewEncoder(context.Background(), f, audio.Format{SampleRate: rate, Channels: len(b)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), e, audio.NewBufferSource(b, rate)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
