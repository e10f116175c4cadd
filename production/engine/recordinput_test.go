package engine_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// countingFS opens files of the operating system, counting the bytes
// read from them with Read.
type countingFS struct{ read atomic.Int64 }

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{File: f, read: &c.read}, nil
}

// countingFile is an *os.File (it seeks, as the MP3 decoder's probe
// wants) whose reads are counted.
type countingFile struct {
	*os.File
	read *atomic.Int64
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.read.Add(int64(n))
	return n, err
}

// TestInputRecorded runs one production twice from an MP3 and from a
// 24-bit FLAC: with the default disk limit, where the first pass over the
// input keeps what it decoded for the passes after it (recordinput.go),
// and with a limit that leaves no disk beside the chain's spill, where
// every pass decodes the input again. The first run reads the input for
// one pass, the second for every pass (six here: analysis, loudness,
// limiter and render passes), so that the second reads the file at least
// twice more; both write the same WAV bytes and statistics: the passes
// read the same samples. Neither leaves a file in the engine's temporary
// folder. 2 s and a WAV output: 0.5 s of CPU (3 s with an MP3 output
// beside it, 1.3 s).
func TestInputRecorded(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, file string }{
		{"mp3", encodedInput(t, dir, "talk.mp3", 2, "-c:a", "libmp3lame", "-b:a", "128k")},
		{"flac", encodedInput(t, dir, "talk.flac", 2, "-c:a", "flac", "-sample_fmt", "s32")},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRecorded(t, tc.file) })
	}
}

func checkRecorded(t *testing.T, input string) {
	runWith := func(disk int64) (map[string][]byte, string, int64) {
		t.Helper()
		tmp, out := t.TempDir(), t.TempDir()
		eng := &engine.Engine{TempDir: tmp, Limits: production.Limits{Disk: disk}}
		p := newProduction(t, `{"input_file": "https://example.org/talk`+filepath.Ext(input)+`", "output_basename": "talk",
			"algorithms": {"loudnesstarget": -16}, "output_files": [{"format": "wav"}]}`)
		cfs := &countingFS{}
		if _, err := eng.Run(t.Context(), p, engine.Inputs{Main: input, FS: cfs}, engine.DirWriter{Dir: out}, nil); err != nil {
			t.Fatalf("disk %d: %v", disk, err)
		}
		if left := listDir(t, tmp); len(left) > 0 {
			t.Errorf("disk %d: temporary files left behind: %q", disk, left)
		}
		files := map[string][]byte{}
		for _, name := range listDir(t, out) {
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
		stats, err := json.Marshal(p.Statistics)
		if err != nil {
			t.Fatal(err)
		}
		return files, string(stats), cfs.read.Load()
	}
	size, err := os.Stat(input)
	if err != nil {
		t.Fatal(err)
	}
	once, onceStats, onceRead := runWith(0)
	// 1 GiB: the spill's share (up to 2 GiB) takes all the disk the
	// outputs leave.
	every, everyStats, everyRead := runWith(1 << 30)
	t.Logf("the input (%d bytes) read %.1f times recorded, %.1f times not", size.Size(),
		float64(onceRead)/float64(size.Size()), float64(everyRead)/float64(size.Size()))
	if everyRead-onceRead < 2*size.Size() {
		t.Errorf("%d bytes of the input read with its recording, %d without: want at least two passes fewer", onceRead, everyRead)
	}
	if len(once) != 1 || len(every) != 1 {
		t.Fatalf("files %d and %d, want 1", len(once), len(every))
	}
	for name, data := range every {
		if !bytes.Equal(once[name], data) {
			t.Errorf("%s differs between the recorded and the decoded passes", name)
		}
	}
	if onceStats != everyStats {
		t.Errorf("statistics differ:\n%s\n%s", onceStats, everyStats)
	}
}
