package engine

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/audiopost/audiopost/production"
)

// OutputWriter is where the Engine puts a production's files: a local
// directory (DirWriter) or, behind the same interface, a blob store.
type OutputWriter interface {
	// Create starts the file called name (a plain file name, no
	// directories). Nothing is visible under name before the returned
	// file's Close returns nil; Abort discards it without a trace.
	Create(name string) (PendingFile, error)
}

// PendingFile is a file being written. Close publishes it under its name,
// replacing an older file of that name atomically (temp name + rename);
// Abort removes the partial data. After either, both are no-ops.
//
// A PendingFile that also has a method File() *os.File hands encoders the
// real file: they may seek back to patch headers (WAV and FLAC sizes, the
// MP3 Xing header), and the Engine reads the finished bytes back to
// checksum them. So does a PendingFile that is itself an io.Seeker and an
// io.ReaderAt (a file held elsewhere, such as in a browser's Blobs), which
// the encoders then write through its Write and Seek. Any other
// PendingFile is written strictly sequentially and checksummed as
// written.
type PendingFile interface {
	io.Writer
	Close() error
	Abort() error
}

// DirWriter is an OutputWriter over a local directory. Files are written
// to hidden temporary names in the same directory and renamed on Close, so
// readers never see a half-written file and a failed or cancelled run
// leaves nothing behind.
type DirWriter struct {
	Dir string
}

// tempPrefix starts the names of DirWriter's temporary files.
const tempPrefix = ".audiopost-tmp-"

// Create implements OutputWriter.
func (d DirWriter) Create(name string) (PendingFile, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("%w: output file name %q is not a plain file name", production.ErrInvalid, name)
	}
	f, err := createTemp(d.Dir, tempPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating output %s: %w", name, err)
	}
	return &dirFile{f: f, final: filepath.Join(d.Dir, name)}, nil
}

// createTemp is os.CreateTemp with the permissions of an ordinary new
// file, 0644 less the umask: os.CreateTemp's 0600 would leave the outputs
// unreadable to the web server or the colleague they are made for.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		b := make([]byte, 8)
		rand.Read(b)
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no unused temporary name in %s", dir)
}

type dirFile struct {
	f     *os.File
	final string
	done  bool
}

// File gives encoders the underlying file so they can seek.
func (d *dirFile) File() *os.File { return d.f }

func (d *dirFile) Write(p []byte) (int, error) { return d.f.Write(p) }

func (d *dirFile) Close() error {
	if d.done {
		return nil
	}
	d.done = true
	err := d.f.Sync()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(d.f.Name(), d.final)
	}
	if err != nil {
		os.Remove(d.f.Name())
		return fmt.Errorf("publishing %s: %w", filepath.Base(d.final), err)
	}
	return nil
}

func (d *dirFile) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	d.f.Close()
	if err := os.Remove(d.f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// fileHandle is what an encoder writes to: the PendingFile's *os.File when
// it has one, else the PendingFile behind a hashing counter.
type fileHandle struct {
	name string
	// output is the index of the OutputFile the file belongs to; kind
	// tells the output's own file from its chapter parts, part is the
	// number (0-based) of a part.
	output int
	kind   fileKind
	part   int
	pf     PendingFile
	ra     randomAccess // non-nil when encoders write to it directly
	h      hash.Hash
	n      int64
	// Size and MD5 once finished.
	size int64
	sum  string
}

// fileKind says what a file is to its output.
type fileKind uint8

const (
	kindMain fileKind = iota
	kindPart
)

// randomAccess is a file encoders may seek in and the Engine read back:
// an *os.File, or a PendingFile that can do both.
type randomAccess interface {
	io.WriteSeeker
	io.ReaderAt
}

func openHandle(out OutputWriter, name string, output int, kind fileKind) (*fileHandle, error) {
	pf, err := out.Create(name)
	if err != nil {
		return nil, err
	}
	fh := &fileHandle{name: name, output: output, kind: kind, pf: pf, h: md5.New()}
	if f, ok := pf.(interface{ File() *os.File }); ok {
		fh.ra = f.File()
	} else if ra, ok := pf.(randomAccess); ok {
		fh.ra = ra
	}
	return fh, nil
}

// writer returns what encoders should write to.
func (fh *fileHandle) writer() io.Writer {
	if fh.ra != nil {
		return fh.ra
	}
	return fh
}

// Write hashes and counts sequentially written bytes.
func (fh *fileHandle) Write(p []byte) (int, error) {
	n, err := fh.pf.Write(p)
	fh.h.Write(p[:n])
	fh.n += int64(n)
	return n, err
}

// finish computes size and checksum of the complete file.
func (fh *fileHandle) finish() error {
	if fh.ra == nil {
		fh.size, fh.sum = fh.n, hex.EncodeToString(fh.h.Sum(nil))
		return nil
	}
	end, err := fh.ra.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("checksum of %s: %w", fh.name, err)
	}
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(fh.ra, 0, end)); err != nil {
		return fmt.Errorf("checksum of %s: %w", fh.name, err)
	}
	fh.size, fh.sum = end, hex.EncodeToString(h.Sum(nil))
	return nil
}
