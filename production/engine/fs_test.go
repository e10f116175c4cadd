package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/production/engine"
)

// memOutputs is an OutputWriter in memory whose files can seek and be
// read back, as a browser's Blobs can: the encoders patch their headers
// through it.
type memOutputs map[string]*memPending

func (m memOutputs) Create(name string) (engine.PendingFile, error) {
	f := &memPending{name: name, outputs: m}
	return f, nil
}

// memPending must be a random-access file for the engine to seek in it.
var _ interface {
	io.WriteSeeker
	io.ReaderAt
} = (*memPending)(nil)

type memPending struct {
	testaudio.MemFile
	name    string
	outputs memOutputs
	done    bool
}

func (f *memPending) Close() error {
	if !f.done {
		f.done = true
		f.outputs[f.name] = f
	}
	return nil
}

func (f *memPending) Abort() error { f.done = true; return nil }

// TestInputsFS runs one production twice: from a file of the operating
// system into a directory, and from an fs.FS into seekable files in
// memory. The files must be byte for byte the same (the encoders patched
// the headers of both, and the memory files were checksummed by reading
// them back), and so must the statistics.
func TestInputsFS(t *testing.T) {
	dir := t.TempDir()
	// 6 s; 2 s under the race detector, where the encoders' writes to
	// the memory files are what it watches (the 6 s took 2.9 s of the
	// race run's CPU).
	seconds := 6.0
	if testsize.Race {
		seconds = 2
	}
	wav := testaudio.EncodeWAV(t, testaudio.SpeechLike(44100, seconds, 0.3), 44100, 16)
	in := filepath.Join(dir, "talk.wav")
	if err := os.WriteFile(in, wav, 0o644); err != nil {
		t.Fatal(err)
	}
	const req = `{"output_files": [{"format": "wav"}, {"format": "flac"}, {"format": "stats", "ending": "json"}]}`
	ctx := context.Background()
	e := &engine.Engine{TempDir: t.TempDir()}

	onDisk := newProduction(t, req)
	onDisk.InputFile = "talk.wav"
	out := t.TempDir()
	if _, err := e.Run(ctx, onDisk, engine.Inputs{Main: in}, engine.DirWriter{Dir: out}, nil); err != nil {
		t.Fatal(err)
	}

	inMemory := newProduction(t, req)
	inMemory.InputFile = "talk.wav"
	mem := memOutputs{}
	fsys := fstest.MapFS{"uploads/talk.wav": &fstest.MapFile{Data: wav}}
	res, err := e.Run(ctx, inMemory, engine.Inputs{Main: "uploads/talk.wav", FS: fsys}, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 3 {
		t.Fatalf("%d files, want 3: %+v", len(res.Files), res.Files)
	}
	for _, f := range res.Files {
		want, err := os.ReadFile(filepath.Join(out, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		got := mem[f.Name]
		if got == nil {
			t.Fatalf("%s was not published", f.Name)
		}
		if !bytes.Equal(got.B, want) {
			t.Errorf("%s: %d bytes from the fs.FS input, %d from the file; they differ", f.Name, len(got.B), len(want))
		}
		if f.Size != int64(len(want)) {
			t.Errorf("%s: size %d, file has %d bytes", f.Name, f.Size, len(want))
		}
	}
	for i := range onDisk.OutputFiles {
		if a, b := onDisk.OutputFiles[i].Checksum, inMemory.OutputFiles[i].Checksum; a != b || a == "" {
			t.Errorf("output %d: checksum %q from the fs.FS input, %q from the file", i, b, a)
		}
	}
	a, _ := json.Marshal(onDisk.Statistics)
	b, _ := json.Marshal(inMemory.Statistics)
	if !bytes.Equal(a, b) {
		t.Errorf("statistics differ:\nfile  %s\nfs.FS %s", a, b)
	}

	// A missing input is the error of the file system, named as an input.
	missing := newProduction(t, req)
	missing.InputFile = "gone.wav"
	if _, err := e.Run(ctx, missing, engine.Inputs{Main: "gone.wav", FS: fsys}, memOutputs{}, nil); err == nil {
		t.Error("a file missing from the fs.FS was processed")
	}
}
