package goaudio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
)

// hostileSize is the length every hostile file is padded to.
const hostileSize = 300

// pad300 pads a file with a trailing JUNK chunk to hostileSize bytes.
func pad300(file []byte) []byte {
	if n := hostileSize - len(file) - 8; n >= 0 {
		file = append(file, chunk("JUNK", make([]byte, n))...)
	}
	return file
}

// listEntryClaims is a 300-byte WAV whose LIST/INFO chunk holds one INAM
// entry that claims n bytes: go-audio allocates n bytes for it.
func listEntryClaims(n uint32) []byte {
	entry := append([]byte("INFOINAM"), binary.LittleEndian.AppendUint32(nil, n)...)
	entry = append(entry, "title"...)
	return pad300(riff(chunk("fmt ", fmtBody(formatPCM, 2, 48000, 16)), chunk("LIST", entry), chunk("data", make([]byte, 16))))
}

// hostileFiles are ~300-byte WAV files whose headers make go-audio's reader
// allocate what they claim.
func hostileFiles() []struct {
	name string
	file []byte
	want error
} {
	fmt16 := chunk("fmt ", fmtBody(formatPCM, 2, 48000, 16))
	data := chunk("data", make([]byte, 16))
	return []struct {
		name string
		file []byte
		want error
	}{
		{"LIST/INFO entry claims 4 GiB", listEntryClaims(0xFFFFFFF0), audio.ErrMalformed},
		{"fmt chunk claims 4 GiB", pad300(riff(chunkSized("fmt ", 0xFFFFFFF0, fmtBody(formatPCM, 2, 48000, 16)), data)), audio.ErrMalformed},
		{"LIST chunk claims 2 GiB", pad300(riff(fmt16, chunkSized("LIST", 0x7FFFFFF0, []byte("INFO")), data)), audio.ErrMalformed},
		{"smpl chunk before fmt claims 4 GiB", pad300(riff(chunkSized("smpl", 0xFFFFFFF0, nil), fmt16, data)), audio.ErrMalformed},
		{"cue chunk after data claims 1 GiB", riff(fmt16, data, chunkSized("cue ", 1<<30, make([]byte, 200))), audio.ErrMalformed},
		{"LIST chunk claims 2 MiB", pad300(riff(fmt16, chunkSized("LIST", 2<<20, []byte("INFO")), data)), audio.ErrMalformed},
		{"65535 channels", pad300(riff(chunk("fmt ", fmtBody(formatPCM, 65535, 48000, 16)), data)), audio.ErrUnsupported},
		{"sample rate 4 GHz", pad300(riff(chunk("fmt ", fmtBody(formatPCM, 2, -16, 16)), data)), audio.ErrUnsupported},
		{"0 bits", pad300(riff(chunk("fmt ", fmtBody(formatPCM, 2, 48000, 0)), data)), audio.ErrUnsupported},
		{"12 bits", pad300(riff(chunk("fmt ", fmtBody(formatPCM, 2, 48000, 12)), data)), audio.ErrUnsupported},
		{"RF64", append([]byte("RF64"), riff(fmt16, data)[4:]...), audio.ErrUnsupported},
		{"no data chunk", pad300(riff(fmt16)), audio.ErrMalformed},
		{"data before fmt", pad300(riff(data, fmt16)), audio.ErrMalformed},
		{"unknown chunk past the end", riff(fmt16, chunkSized("bext", 1<<30, make([]byte, 200)), data), audio.ErrMalformed},
		{"not WAVE", pad300([]byte("RIFF\x00\x00\x00\x00AVI LIST")), audio.ErrUnknownFormat},
		{"12 bytes", []byte("RIFF\x04\x00\x00\x00WAVE"), audio.ErrMalformed},
		{"empty", nil, audio.ErrMalformed},
	}
}

// TestHostileHeaders: NewWAVSource refuses every hostile file quickly, with
// the right sentinel and without a sizeable allocation, before go-audio
// reads it.
func TestHostileHeaders(t *testing.T) {
	for _, tc := range hostileFiles() {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.file) > hostileSize+210 {
				t.Fatalf("file of %d bytes", len(tc.file))
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := NewWAVSource(bytes.NewReader(tc.file))
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<10 {
				t.Errorf("allocated %d bytes", alloc)
			}
			if elapsed > time.Second {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

// TestCheckWAVAcceptsMetadata: well-formed LIST, smpl and cue chunks before
// and after the samples pass, and go-audio reads the tags.
func TestCheckWAVAcceptsMetadata(t *testing.T) {
	info := []byte("INFO")
	info = append(info, chunk("INAM", []byte("A title\x00"))...)
	info = append(info, chunk("IART", []byte("odd\x00\x00"))...) // odd size, padded
	file := riff(chunk("LIST", info), chunk("fmt ", fmtBody(formatPCM, 1, 8000, 16)),
		chunk("smpl", make([]byte, 36)), chunk("data", make([]byte, 20)), chunk("cue ", make([]byte, 4)))
	r2 := bytes.NewReader(append([]byte("abc"), file...))
	r2.Seek(3, 0)
	if err := CheckWAV(r2); err != nil {
		t.Fatalf("CheckWAV at offset 3: %v", err)
	}
	if pos, _ := r2.Seek(0, 1); pos != 3 {
		t.Errorf("CheckWAV left the reader at %d, want 3", pos)
	}
	s, err := NewWAVSource(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if md := s.Decoder().Metadata; md == nil || md.Title != "A title" {
		t.Errorf("go-audio metadata %+v, want the title", md)
	}
	b := audio.NewBuffer(1, 100)
	if n, err := s.Read(b); n != 10 || err != nil {
		t.Errorf("Read = %d, %v; want 10 frames", n, err)
	}
}

// TestMetadataLimit: a LIST chunk larger than MaxMetadataChunk is refused
// even when the file really holds it (go-audio would read it whole).
func TestMetadataLimit(t *testing.T) {
	fmt16 := chunk("fmt ", fmtBody(formatPCM, 1, 8000, 16))
	big := append([]byte("INFO"), make([]byte, MaxMetadataChunk)...)
	_, err := NewWAVSource(bytes.NewReader(riff(fmt16, chunk("LIST", big), chunk("data", make([]byte, 4)))))
	if !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("err = %v, want ErrUnsupported", err)
	}
	ok := append([]byte("INFO"), make([]byte, MaxMetadataChunk-4)...)
	if _, err := NewWAVSource(bytes.NewReader(riff(fmt16, chunk("LIST", ok), chunk("data", make([]byte, 4))))); err != nil {
		t.Errorf("LIST of MaxMetadataChunk bytes: %v", err)
	}
}

// TestGoAudioAloneAllocates shows what the check prevents: go-audio's own
// decoder, given a 300-byte file whose LIST/INFO entry claims 64 MiB,
// allocates 64 MiB. (With 4 GiB it allocates 4 GiB: see
// BenchmarkHostileHeader.) If go-audio learns to guard itself, this test
// says so.
func TestGoAudioAloneAllocates(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB")
	}
	const claim = 64 << 20
	file := listEntryClaims(claim)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	gwav.NewDecoder(bytes.NewReader(file)).FwdToPCM()
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc < claim {
		t.Errorf("go-audio allocated only %d bytes for a %d-byte file; is the check still needed?", alloc, len(file))
	}
}
