package realaudio

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Rate is the sample rate of every signal of the corpus.
const Rate = 48000

// Half is one of the two disjoint halves of the corpus. Every function that
// returns material takes one, so that nothing reads the held-out half
// without saying so.
type Half int

const (
	// Tuning is the half algorithms are chosen and tuned on.
	Tuning Half = 1
	// HeldOut is the half only the quality report and the acceptance tests
	// read. Figures are reported on it; nothing is tuned on it.
	HeldOut Half = 2
)

func (h Half) String() string {
	switch h {
	case Tuning:
		return "tuning"
	case HeldOut:
		return "held-out"
	}
	return fmt.Sprintf("Half(%d)", int(h))
}

func (h Half) valid() bool { return h == Tuning || h == HeldOut }

// Origin says where a piece of material comes from: the Debian package,
// the file inside it, and the package's licence for that file (from
// /usr/share/doc/PKG/copyright).
type Origin struct {
	Package string
	Path    string
	License string
	// Note says what was taken or done, when not the whole file as is
	// ("sound 52 of the catalogue", "rendered with fluidsynth").
	Note string `json:",omitempty"`
}

func (o Origin) String() string {
	s := o.Package + ":" + o.Path + " (" + o.License + ")"
	if o.Note != "" {
		s += " " + o.Note
	}
	return s
}

// needPackages skips tb when a package the corpus is built from is missing,
// naming it, or fails it under CI, which installs them (.ci/run).
func needPackages(tb testing.TB) {
	tb.Helper()
	for _, p := range Packages {
		need.Path(tb, p.probe)
	}
	for _, prog := range []string{"ffmpeg", "sox"} {
		need.Program(tb, prog)
	}
}

// cacheVersion changes when the way a cached signal is made changes, so
// that old files are not read as new ones.
const cacheVersion = "realaudio-1"

// cacheDir is where decoded and rendered signals are kept between runs,
// beside the synthesized test audio.
func cacheDir() string { return filepath.Join(testaudio.CacheDir(), "realaudio") }

var memo sync.Map // key -> []float64

// cached returns the signal cached under key, making it with build on the
// first call on this machine. Signals are kept as 32-bit floats: the
// corpus is recordings of 16 bits at best.
func cached(key string, build func() ([]float64, error)) ([]float64, error) {
	if x, ok := lookup(key); ok {
		return x, nil
	}
	key = cacheVersion + "|" + key
	path := cachePath(key)
	x, err := build()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cacheDir(), 0o755); err == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if os.WriteFile(tmp, f32(x), 0o644) == nil {
			os.Rename(tmp, path)
		}
	}
	// What the cache gives back is what a later run will read: round
	// through float32 now too, so the first run and later ones agree.
	for i, v := range x {
		x[i] = float64(float32(v))
	}
	memo.Store(key, x)
	return x, nil
}

// lookup returns the signal cached under key, if there is one.
func lookup(key string) ([]float64, bool) {
	key = cacheVersion + "|" + key
	if x, ok := memo.Load(key); ok {
		return x.([]float64), true
	}
	if data, err := os.ReadFile(cachePath(key)); err == nil && len(data)%4 == 0 {
		x := make32(data)
		memo.Store(key, x)
		return x, true
	}
	return nil, false
}

func cachePath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(cacheDir(), hex.EncodeToString(sum[:10])+".f32")
}

func make32(b []byte) []float64 {
	x := make([]float64, len(b)/4)
	for i := range x {
		x[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return x
}

// decode returns the file at path (inside a package) as mono at Rate.
func decode(path string) ([]float64, error) {
	xs, err := decodeAll([]string{path}, 0)
	if err != nil {
		return nil, err
	}
	return xs[0], nil
}

// decodeAll returns the files (inside packages) as mono at Rate, decoded
// and resampled (soxr) by ffmpeg, which decodes up to 64 of the files not
// yet cached in one run: starting ffmpeg costs more than decoding a
// prompt. With seconds above 0, each file is cut after that many seconds.
// Raw G.722 (.g722), raw 8 kHz 16-bit PCM (.raw, codec2's samples) and
// raw GSM (.gsm, the fit-only pool's prompts) are named to ffmpeg by
// format.
func decodeAll(paths []string, seconds float64) ([][]float64, error) {
	out := make([][]float64, len(paths))
	keys := make([]string, len(paths))
	var todo []int
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		keys[i] = decodeKey(p, st.Size(), seconds)
		if x, ok := lookup(keys[i]); ok {
			out[i] = x
		} else {
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		batch := todo[:min(64, len(todo))]
		todo = todo[len(batch):]
		dir, err := os.MkdirTemp("", "realaudio-decode")
		if err != nil {
			return nil, err
		}
		args := []string{"-nostdin", "-v", "error"}
		for _, i := range batch {
			switch filepath.Ext(paths[i]) {
			case ".g722":
				args = append(args, "-f", "g722")
			case ".raw":
				args = append(args, "-f", "s16le", "-ar", "8000", "-ac", "1")
			case ".gsm":
				args = append(args, "-f", "gsm")
			}
			if seconds > 0 {
				args = append(args, "-t", fmt.Sprint(seconds))
			}
			args = append(args, "-i", paths[i])
		}
		for j := range batch {
			args = append(args, "-map", fmt.Sprintf("%d:a", j), "-ac", "1", "-af", "aresample=resampler=soxr",
				"-ar", fmt.Sprint(Rate), "-f", "f32le", filepath.Join(dir, fmt.Sprintf("%d.f32", j)))
		}
		_, err = runOut("ffmpeg", args...)
		for j, i := range batch {
			if err != nil {
				break
			}
			var b []byte
			b, err = os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.f32", j)))
			if err == nil && len(b) == 0 {
				err = fmt.Errorf("ffmpeg: no samples from %s", paths[i])
			}
			if err == nil {
				out[i], err = cached(keys[i], func() ([]float64, error) { return make32(b), nil })
			}
		}
		os.RemoveAll(dir)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeKey is the cache key of the file at path, of size bytes, decoded
// by decodeAll.
func decodeKey(path string, size int64, seconds float64) string {
	return fmt.Sprintf("decode|%s|%d|%g", path, size, seconds)
}

// forget drops the files decoded by decodeAll(paths, seconds) from the
// memory of this run (the cache on disk keeps them).
func forget(paths []string, seconds float64) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			memo.Delete(cacheVersion + "|" + decodeKey(p, st.Size(), seconds))
		}
	}
}

// runF32 runs a program that writes 32-bit float samples to its standard
// output and returns them.
func runF32(name string, args []string, stdin []byte) ([]float64, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, errb.Bytes())
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s %s: no samples", name, strings.Join(args, " "))
	}
	return make32(out.Bytes()), nil
}

// f32 encodes x as little-endian 32-bit floats.
func f32(x []float64) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	}
	return b
}
