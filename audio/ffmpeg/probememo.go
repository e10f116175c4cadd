package ffmpeg

import (
	"context"
	"io"
	"os"
	"slices"
	"sync"
)

// Probes is a memo of the probes of files. Under a context that carries
// one (WithProbes), ProbeDetails of a file it is given by path (an
// *os.File at offset 0) runs ffprobe once, and every later probe of the
// same file under such a context (the decode of an input, the remux of
// its video, the extraction of its cover) reuses that description. A
// file counts as the same while its identity, size and modification time
// are, so a file replaced or written to in between is probed again. A
// memo is meant to live as long as one piece of work (a production's
// run): it is no cache of files across jobs, and it keeps no file open.
// The zero value is an empty memo.
//
// Under a memo, Decode of a file also takes its Info from the probe
// (exact length and bitrate, the cover's size) rather than from what
// ffmpeg prints of the input (see parseDump), at the cost of one ffprobe
// run per file: for work that reports its inputs' properties.
type Probes struct {
	mu    sync.Mutex
	files map[string]probedFile
}

// WithProbes returns ctx carrying the memo p; with p nil, ctx without a
// memo (for a decode within such work whose Info does not matter).
func WithProbes(ctx context.Context, p *Probes) context.Context {
	if memoOf(ctx) == p {
		return ctx
	}
	return context.WithValue(ctx, probesKey{}, p)
}

type probesKey struct{}

// probedFile is one file's probe and what it was of.
type probedFile struct {
	fi  os.FileInfo
	det Details
}

// memoOf returns the memo of ctx, nil without one.
func memoOf(ctx context.Context) *Probes {
	m, _ := ctx.Value(probesKey{}).(*Probes)
	return m
}

// memoFile is the key of r in a memo: its path when it is read by path,
// and its FileInfo; ok is false for other readers.
func memoFile(r io.Reader) (path string, fi os.FileInfo, ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return "", nil, false
	}
	path, ok = fileInput(f)
	if !ok {
		return "", nil, false
	}
	fi, err := f.Stat()
	if err != nil {
		return "", nil, false
	}
	return path, fi, true
}

// lookup returns the memo's description of the file, if it is the one
// probed.
func (m *Probes) lookup(path string, fi os.FileInfo) (Details, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.files[path]
	if !ok || !os.SameFile(p.fi, fi) || p.fi.Size() != fi.Size() || !p.fi.ModTime().Equal(fi.ModTime()) {
		return Details{}, false
	}
	det := p.det
	det.Chapters = slices.Clone(det.Chapters)
	if c := det.Tags.Cover; c != nil {
		cover := *c
		det.Tags.Cover = &cover
	}
	return det, true
}

func (m *Probes) store(path string, fi os.FileInfo, det Details) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]probedFile{}
	}
	m.files[path] = probedFile{fi: fi, det: det}
}
