package wav

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// TestDecodeKnownValues decodes hand-made files of every supported layout
// whose samples are known exactly.
func TestDecodeKnownValues(t *testing.T) {
	le16 := func(v ...int16) (b []byte) {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, uint16(x))
		}
		return b
	}
	le24 := func(v ...int32) (b []byte) {
		for _, x := range v {
			b = append(b, byte(x), byte(x>>8), byte(x>>16))
		}
		return b
	}
	le32 := func(v ...int32) (b []byte) {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	f32 := func(v ...float32) (b []byte) {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	f64 := func(v ...float64) (b []byte) {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	tests := []struct {
		name     string
		fmt      []byte
		data     []byte
		want     [][]float64
		bitDepth int
		mask     uint32
	}{
		{"u8 mono", fmtChunk(formatPCM, 1, 8000, 8), []byte{0, 64, 128, 192, 255},
			[][]float64{{-1, -0.5, 0, 0.5, 127.0 / 128}}, 8, 0},
		{"s16 stereo", fmtChunk(formatPCM, 2, 44100, 16), le16(-32768, 32767, 16384, -1, 0, 1),
			[][]float64{{-1, 0.5, 0}, {32767.0 / 32768, -1.0 / 32768, 1.0 / 32768}}, 16, 0},
		{"s24 mono", fmtChunk(formatPCM, 1, 48000, 24), le24(-8388608, 8388607, 4194304, -1),
			[][]float64{{-1, 8388607.0 / 8388608, 0.5, -1.0 / 8388608}}, 24, 0},
		{"s32 stereo", fmtChunk(formatPCM, 2, 96000, 32), le32(math.MinInt32, math.MaxInt32, 1<<30, -1),
			[][]float64{{-1, 0.5}, {math.MaxInt32 / 2147483648.0, -1.0 / 2147483648}}, 32, 0},
		{"f32 mono", fmtChunk(formatFloat, 1, 22050, 32), f32(0.25, -1.5, 1e-7),
			[][]float64{{0.25, -1.5, float64(float32(1e-7))}}, 32, 0},
		{"f64 stereo", fmtChunk(formatFloat, 2, 192000, 64), f64(0.1, -0.2, 2, math.SmallestNonzeroFloat64),
			[][]float64{{0.1, 2}, {-0.2, math.SmallestNonzeroFloat64}}, 64, 0},
		{"extensible s24 3ch", extChunk(formatPCM, 3, 48000, 24, 24, 7), le24(1, 2, 3, -4, -5, -6),
			[][]float64{{1.0 / 8388608, -4.0 / 8388608}, {2.0 / 8388608, -5.0 / 8388608}, {3.0 / 8388608, -6.0 / 8388608}}, 24, 7},
		{"extensible 20 valid bits in 24", extChunk(formatPCM, 1, 48000, 24, 20, 4), le24(0x7ffff0, -0x800000),
			[][]float64{{float64(0x7ffff0) / 8388608, -1}}, 20, 4},
		{"extensible 24 valid bits in 32", extChunk(formatPCM, 1, 48000, 32, 24, 4), le32(0x40000000, -256),
			[][]float64{{0.5, -256.0 / 2147483648}}, 24, 4},
		{"extensible float 2ch", extChunk(formatFloat, 2, 48000, 32, 32, 3), f32(0.5, -0.5),
			[][]float64{{0.5}, {-0.5}}, 32, 3},
		{"plain PCM 12 bits in 16", fmtChunk(formatPCM, 1, 8000, 12), le16(0x7ff0, -0x8000),
			[][]float64{{float64(0x7ff0) / 32768, -1}}, 12, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fmt
			if tc.name == "plain PCM 12 bits in 16" {
				binary.LittleEndian.PutUint16(f[12:], 2) // block align of the 16-bit container
			}
			file := riff(chunk("fmt ", f), chunk("data", tc.data))
			d, got, err := decodeAll(t, file)
			if err != nil {
				t.Fatal(err)
			}
			for c := range tc.want {
				for i := range tc.want[c] {
					if got[c][i] != tc.want[c][i] {
						t.Errorf("channel %d frame %d = %v, want %v", c, i, got[c][i], tc.want[c][i])
					}
				}
				if len(got[c]) != len(tc.want[c]) {
					t.Errorf("channel %d: %d frames, want %d", c, len(got[c]), len(tc.want[c]))
				}
			}
			info := d.Info()
			if info.BitDepth != tc.bitDepth || d.ChannelMask() != tc.mask || info.Frames != int64(len(tc.want[0])) {
				t.Errorf("Info = %+v, mask %#x; want bit depth %d, mask %#x, %d frames", info, d.ChannelMask(), tc.bitDepth, tc.mask, len(tc.want[0]))
			}
			if info.Format != "wav" || info.Container != "wav" {
				t.Errorf("Format/Container = %q/%q, want wav/wav", info.Format, info.Container)
			}
		})
	}
}

// TestDecodeChunks checks the chunk walk: unknown and odd-sized chunks before
// the data, tags, RF64, and both ways of saying "size unknown".
func TestDecodeChunks(t *testing.T) {
	pcm := make([]byte, 0, 400)
	for i := range 100 {
		pcm = binary.LittleEndian.AppendUint16(pcm, uint16(int16(i*300-15000)))
		pcm = binary.LittleEndian.AppendUint16(pcm, uint16(int16(-i*300)))
	}
	fmt16 := chunk("fmt ", fmtChunk(formatPCM, 2, 48000, 16))
	info := []byte("INFO")
	info = append(info, chunk("INAM", []byte("Title é\x00"))...)
	info = append(info, chunk("IART", []byte("Art\xe9\x00"))...) // Latin-1
	info = append(info, chunk("IPRD", []byte("Album\x00"))...)
	info = append(info, chunk("ICRD", []byte("2024\x00"))...)
	info = append(info, chunk("IGNR", []byte("Speech\x00"))...)
	info = append(info, chunk("ICMT", []byte("c\x00"))...)
	info = append(info, chunk("IPRT", []byte("7\x00"))...)
	wantTags := audio.Tags{Title: "Title é", Artist: "Arté", Album: "Album", Year: "2024", Genre: "Speech", Comment: "c", Track: "7"}

	streamed := func(riffSize, dataSize uint32) []byte {
		f := riff(fmt16, chunk("data", pcm))
		binary.LittleEndian.PutUint32(f[4:], riffSize)
		binary.LittleEndian.PutUint32(f[len(f)-len(pcm)-4:], dataSize)
		return f
	}
	rf64 := func(id string) []byte {
		ds := binary.LittleEndian.AppendUint64(nil, 0)
		ds = binary.LittleEndian.AppendUint64(ds, uint64(len(pcm)-4)) // one frame less than present
		ds = binary.LittleEndian.AppendUint64(ds, 99)
		ds = binary.LittleEndian.AppendUint32(ds, 0)
		f := riff(chunk("ds64", ds), fmt16, chunk("data", pcm))
		copy(f, id)
		binary.LittleEndian.PutUint32(f[4:], sizeUnknown)
		binary.LittleEndian.PutUint32(f[len(f)-len(pcm)-4:], sizeUnknown)
		return f
	}
	tests := []struct {
		name   string
		file   []byte
		frames int64 // Info().Frames
		decode int   // frames decoded
		tags   audio.Tags
	}{
		{"plain", riff(fmt16, chunk("data", pcm)), 100, 100, audio.Tags{}},
		{"odd chunks first", riff(chunk("abcd", []byte{1, 2, 3}), chunk("JUNK", make([]byte, 9)), fmt16, chunk("bext", make([]byte, 601)), chunk("data", pcm)), 100, 100, audio.Tags{}},
		{"tags", riff(fmt16, chunk("LIST", info), chunk("data", pcm)), 100, 100, wantTags},
		{"LIST that is not INFO", riff(fmt16, chunk("LIST", append([]byte("adtl"), chunk("INAM", []byte("x\x00"))...)), chunk("data", pcm)), 100, 100, audio.Tags{}},
		{"ffmpeg pipe sizes", streamed(sizeUnknown, sizeUnknown), -1, 100, audio.Tags{}},
		{"sox pipe sizes", streamed(sizeSoxUnknown+36, sizeSoxUnknown), -1, 100, audio.Tags{}},
		{"zero sizes", streamed(0, 0), -1, 100, audio.Tags{}},
		{"really empty", riff(fmt16, chunk("data", nil)), 0, 0, audio.Tags{}},
		{"data size with a partial frame", streamed(0, uint32(len(pcm)-2)), 99, 99, audio.Tags{}},
		{"trailing chunk after data", riff(fmt16, chunk("data", pcm), chunk("LIST", info)), 100, 100, audio.Tags{}},
		{"RF64", rf64("RF64"), 99, 99, audio.Tags{}},
		{"BW64", rf64("BW64"), 99, 99, audio.Tags{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, got, err := decodeAll(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if n := got.Frames(); n != tc.decode {
				t.Errorf("decoded %d frames, want %d", n, tc.decode)
			}
			for i := range got.Frames() {
				if want := float64(int16(i*300-15000)) / 32768; got[0][i] != want {
					t.Fatalf("frame %d = %v, want %v", i, got[0][i], want)
				}
			}
			if info := d.Info(); info.Frames != tc.frames || info.Tags != tc.tags {
				t.Errorf("Info = %+v, want Frames %d, Tags %+v", info, tc.frames, tc.tags)
			}
			if info := d.Info(); info.Channels != 2 || info.SampleRate != 48000 || info.BitDepth != 16 || info.Bitrate != 1536 {
				t.Errorf("Info = %+v, want 2 ch, 48000 Hz, 16 bit, 1536 kbps", info)
			}
			// Seekable readers take the seeking paths (skip, length estimate).
			d2, err := NewDecoder(context.Background(), bytes.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got2, err := audio.ReadAll(context.Background(), d2)
			if err != nil || got2.Frames() != tc.decode {
				t.Errorf("seekable reader: %d frames, %v", got2.Frames(), err)
			}
			if d2.Info().Frames < 0 && d2.Info().Length != 100.0/48000 {
				t.Errorf("seekable reader: estimated Length %v, want %v", d2.Info().Length, 100.0/48000)
			}
		})
	}
}

// TestTruncated checks that a data chunk cut short delivers every complete
// frame and then fails with ErrTruncated, reporting the dropped partial frame.
func TestTruncated(t *testing.T) {
	pcm := make([]byte, 4*1000)
	for i := range pcm {
		pcm[i] = byte(i * 7)
	}
	full := riff(chunk("fmt ", fmtChunk(formatPCM, 2, 48000, 16)), chunk("data", pcm))
	cut := full[:len(full)-4*300-3] // 699 whole frames and one byte of the 700th
	for _, bs := range audiotest.BlockSizes {
		d, err := NewDecoder(context.Background(), onlyReader{bytes.NewReader(cut)})
		if err != nil {
			t.Fatal(err)
		}
		buf := audio.NewBuffer(2, bs)
		frames := 0
		for {
			n, err := d.Read(buf)
			frames += n
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrTruncated) || !errors.Is(err, audio.ErrMalformed) {
				t.Fatalf("block %d: err = %v, want ErrTruncated", bs, err)
			}
			if want := "truncated data chunk"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
				t.Errorf("error %q does not say %q", err, want)
			}
			break
		}
		if frames != 699 || d.Dropped() != 1 {
			t.Errorf("block %d: %d frames, %d bytes dropped; want 699 and 1", bs, frames, d.Dropped())
		}
		if n, err := d.Read(buf); n != 0 || !errors.Is(err, ErrTruncated) {
			t.Errorf("Read after the error = %d, %v; want the same error again", n, err)
		}
	}
}

// TestCheckSource runs the Source contract over decoders of several layouts,
// through audio.Decode as well as directly.
func TestCheckSource(t *testing.T) {
	noise := audiotest.Noise(3, 5000, 0.9, 1)
	files := map[string][]byte{}
	for _, bits := range []int{16, 24, 32} {
		var buf bytes.Buffer
		e, err := NewEncoder(context.Background(), onlyWriter{&buf}, audio.Format{SampleRate: 44100, Channels: 3}, audio.EncodeOptions{BitDepth: bits})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Write(noise); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		files[map[int]string{16: "s16", 24: "s24", 32: "f32"}[bits]] = buf.Bytes()
	}
	u8 := make([]byte, 1001)
	for i := range u8 {
		u8[i] = byte(i)
	}
	files["u8 odd"] = riff(chunk("fmt ", fmtChunk(formatPCM, 1, 8000, 8)), chunk("data", u8))
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			got := audiotest.CheckSource(t, func() audio.Source {
				d, err := NewDecoder(context.Background(), onlyReader{bytes.NewReader(data)})
				if err != nil {
					t.Fatal(err)
				}
				return d
			})
			audiotest.CheckSource(t, func() audio.Source {
				d, err := audio.Decode(context.Background(), bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				return d
			})
			if name != "u8 odd" && got.Frames() != 5000 || name == "u8 odd" && got.Frames() != 1001 {
				t.Errorf("%d frames", got.Frames())
			}
		})
	}
}

// TestReadAllocs checks that steady-state decoding allocates nothing.
func TestReadAllocs(t *testing.T) {
	f := riff(chunk("fmt ", fmtChunk(formatPCM, 2, 48000, 24)), chunk("data", make([]byte, 6*48000*4)))
	d, err := NewDecoder(context.Background(), onlyReader{bytes.NewReader(f)})
	if err != nil {
		t.Fatal(err)
	}
	buf := audio.NewBuffer(2, 1000)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := d.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Read, want 0", allocs)
	}
}

// TestFormatMismatch checks that a buffer of the wrong shape is refused
// without ending the stream.
func TestFormatMismatch(t *testing.T) {
	f := riff(chunk("fmt ", fmtChunk(formatPCM, 2, 48000, 16)), chunk("data", make([]byte, 40)))
	d, err := NewDecoder(context.Background(), bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(audio.NewBuffer(1, 4)); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("mono buffer on stereo stream: %v, want ErrFormatMismatch", err)
	}
	if n, err := d.Read(audio.NewBuffer(2, 20)); n != 10 || err != nil {
		t.Errorf("Read = %d, %v; want 10, nil", n, err)
	}
	if _, err := d.Read(audio.NewBuffer(2, 20)); err != io.EOF {
		t.Errorf("Read at end = %v, want io.EOF", err)
	}
}
