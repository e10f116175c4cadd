package mp3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
)

// fuzzSeeds returns small real MP3s when ffmpeg is installed, and a
// hand-made stream of silent frames in any case.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{silentMP3(3, []byte{0xFF, 0xFB, 0x90, 0x64})}
	if _, ok := need.HasProgram(f, "ffmpeg"); !ok {
		return seeds
	}
	dir := f.TempDir()
	for i, args := range [][]string{
		{"-ar", "44100", "-b:a", "32k", "-metadata", "title=t", "-metadata", "comment=c"},
		{"-ar", "22050", "-ac", "1", "-b:a", "8k", "-id3v2_version", "3", "-write_xing", "0"},
		{"-ar", "24000", "-q:a", "9", "-id3v2_version", "0"},
	} {
		path := filepath.Join(dir, "s"+string(rune('0'+i))+".mp3")
		a := append([]string{"-v", "error", "-f", "lavfi", "-i", "sine=d=0.1:r=44100"}, args...)
		if exec.Command("ffmpeg", append(a, "-c:a", "libmp3lame", path)...).Run() == nil {
			if b, err := os.ReadFile(path); err == nil {
				seeds = append(seeds, b)
			}
		}
	}
	return seeds
}

// FuzzDecode feeds arbitrary bytes to Match and the decoder: no panic, no
// hang, and no more output than the input can encode.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Match(data)
		d, err := NewDecoder(context.Background(), bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, audio.ErrMalformed) && !errors.Is(err, audio.ErrUnsupported) {
				t.Fatalf("open error of unexpected class: %v", err)
			}
			return
		}
		buf := audio.NewBuffer(d.Format().Channels, 1000)
		// The smallest frame (8 kbps at 24 kHz) is 24 bytes for 576
		// samples; concealment adds at most a run of silent frames.
		limit := (len(data)/24 + maxConcealed + 2) * 1152
		total := 0
		for {
			n, err := d.Read(buf)
			total += n
			if total > limit {
				t.Fatalf("%d frames from %d bytes", total, len(data))
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, audio.ErrMalformed) {
					t.Fatalf("read error of unexpected class: %v", err)
				}
				break
			}
		}
	})
}

// FuzzID3 checks reading ID3v2 tags off the stream on arbitrary bytes
// (parsing them is audio/id3's, fuzzed there): a truncated or lying tag is
// an error of class audio.ErrMalformed, never a panic or a large
// allocation.
func FuzzID3(f *testing.F) {
	f.Add([]byte("ID3\x03\x00\x00\x00\x00\x00\x1aTIT2\x00\x00\x00\x03\x00\x00\x00hiCOMM\x00\x00\x00\x01\x00\x00\x00"))
	f.Add([]byte("ID3\x04\x00\x80\x00\x00\x00\x0cTIT2\x00\x00\x00\x02\x00\x03\x03\xff\x00"))
	f.Add([]byte("ID3\x03\x00\x00\x7f\x7f\x7f\x7f"))
	for _, s := range fuzzSeeds(f) {
		if n := id3.TagSize(s); n > 0 && n <= len(s) {
			f.Add(s[:n])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := id3.TagSize(data)
		if n == 0 {
			return
		}
		tags, err := readID3v2(bytes.NewReader(data), n)
		if err != nil && !errors.Is(err, audio.ErrMalformed) {
			t.Fatalf("unexpected error class: %v", err)
		}
		if tags.Cover != nil && tags.Cover.Size > len(data) {
			t.Fatalf("cover of %d bytes from %d bytes", tags.Cover.Size, len(data))
		}
	})
}
