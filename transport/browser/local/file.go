package local

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"time"
)

// readChunk is how much of the recording one read of its ReaderAt asks
// for: reads of a browser's Blob cost a round trip each, so the decoders'
// small reads are served from a buffer of this size.
const readChunk = 1 << 20

// Input is a recording as its owner holds it: a name and random access to
// its bytes, such as a browser's File read in slices.
type Input struct {
	// Name is the file name, which the outputs are named after.
	Name string
	// Size is the length in bytes.
	Size int64
	// Data reads the bytes; it is read in slices of at most a megabyte,
	// from the start once per pass of the processing.
	Data io.ReaderAt
}

// inputFS is the fs.FS of one recording: every Open starts a reader of
// its own at the start, as the engine opens the input once per pass.
type inputFS struct {
	in   Input
	name string
	// seen is told how far each reader got, for the progress report.
	seen func(r *reader)
	// opened counts the readers.
	opened int
}

func (f *inputFS) Open(name string) (fs.File, error) {
	if name != f.name {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f.opened++
	return &reader{fsys: f, n: f.opened, buf: make([]byte, 0, min(readChunk, f.in.Size))}, nil
}

// reader reads the recording sequentially through a buffer and seeks
// anywhere (the WAV decoder seeks to its data chunk, codecs rewind after
// sniffing).
type reader struct {
	fsys *inputFS
	n    int   // which Open made it
	pos  int64 // offset of the next Read
	buf  []byte
	at   int64 // offset of buf[0]
}

func (r *reader) Read(p []byte) (int, error) {
	if r.pos >= r.fsys.in.Size {
		return 0, io.EOF
	}
	if r.pos < r.at || r.pos >= r.at+int64(len(r.buf)) {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.pos-r.at:])
	r.pos += int64(n)
	return n, nil
}

// fill reads the chunk at pos.
func (r *reader) fill() error {
	want := int(min(int64(cap(r.buf)), r.fsys.in.Size-r.pos))
	r.buf = r.buf[:want]
	n, err := r.fsys.in.Data.ReadAt(r.buf, r.pos)
	r.buf, r.at = r.buf[:n], r.pos
	if n < want {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if r.fsys.seen != nil {
		r.fsys.seen(r)
	}
	return nil
}

// ReadAt reads without moving the reader, as io.SectionReader does.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("local: negative offset")
	}
	if off >= r.fsys.in.Size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.fsys.in.Size-off)
	n, err := r.fsys.in.Data.ReadAt(p[:want], off)
	if n == len(p) {
		return n, nil
	}
	if err == nil {
		err = io.EOF
	}
	return n, err
}

func (r *reader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.pos
	case io.SeekEnd:
		off += r.fsys.in.Size
	}
	if off < 0 {
		return 0, errors.New("local: seek before the start")
	}
	r.pos = off
	return off, nil
}

// done is the fraction of the recording this reader has passed.
func (r *reader) done() float64 {
	if r.fsys.in.Size == 0 {
		return 1
	}
	return min(1, float64(r.at+int64(len(r.buf)))/float64(r.fsys.in.Size))
}

func (r *reader) Close() error { return nil }

func (r *reader) Stat() (fs.FileInfo, error) { return fileInfo{r.fsys}, nil }

type fileInfo struct{ f *inputFS }

func (i fileInfo) Name() string       { return path.Base(i.f.name) }
func (i fileInfo) Size() int64        { return i.f.in.Size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }
