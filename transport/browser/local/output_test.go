package local_test

import (
	"bytes"
	"crypto/md5"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/audiopost/audiopost/transport/browser/local"
)

// remote is a local.Remote in memory that counts the calls, as a
// browser's Blob parts would cost a round trip each.
type remote struct {
	b             []byte
	writes, reads int
}

func (r *remote) WriteAt(p []byte, off int64) error {
	r.writes++
	if end := int(off) + len(p); end > len(r.b) {
		r.b = append(r.b, make([]byte, end-len(r.b))...)
	}
	copy(r.b[off:], p)
	return nil
}

func (r *remote) ReadAt(p []byte, off int64) (int, error) {
	r.reads++
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	return copy(p, r.b[off:]), nil
}

// An encoder's pattern (a header, the samples in small writes, the header
// patched at the end) comes back byte for byte through the checksum's
// 32 KB reads, with one round trip per chunk each way: the file flushed
// before every read once dropped what it had read back, and read a chunk
// per 32 KB.
func TestChunkedFileReadsBackOncePerChunk(t *testing.T) {
	const chunk = 1 << 16
	r := &remote{}
	f := local.NewChunkedFile(r, chunk)
	rng := rand.New(rand.NewPCG(1, 2))
	var want []byte
	write := func(p []byte) {
		if _, err := f.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	write(make([]byte, 44))
	want = append(want, make([]byte, 44)...)
	for len(want) < 10*chunk+123 {
		p := make([]byte, 1+rng.IntN(5000))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		write(p)
		want = append(want, p...)
	}
	end, _ := f.Seek(0, io.SeekCurrent)
	if _, err := f.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	write([]byte{1, 2, 3, 4})
	copy(want[4:], []byte{1, 2, 3, 4})
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Seek(0, io.SeekEnd); got != int64(len(want)) {
		t.Fatalf("size %d, want %d", got, len(want))
	}
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, int64(len(want)))); err != nil {
		t.Fatal(err)
	}
	if got, w := h.Sum(nil), md5.Sum(want); !bytes.Equal(got, w[:]) {
		t.Errorf("read back a file of another checksum")
	}
	if !bytes.Equal(r.b, want) {
		t.Errorf("the remote holds other bytes than were written")
	}
	chunks := (len(want) + chunk - 1) / chunk
	writes := r.writes
	if r.reads > chunks {
		t.Errorf("%d reads of the remote for %d chunks", r.reads, chunks)
	}
	if writes > 2*chunks+1 { // a chunk and what a write took beyond it, and the patch
		t.Errorf("%d writes to the remote for %d chunks and a patch", writes, chunks)
	}
	if err := f.Release(); err != nil {
		t.Fatal(err)
	}
	if r.writes != writes {
		t.Errorf("releasing the file read back wrote %d times", r.writes-writes)
	}
}
