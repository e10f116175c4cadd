package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// tempOwner starts the random part of this process's temporary file
// names: "<pid>@<host>~", so that CleanOrphans can tell the files of a
// dead process of this host from those of a live writer.
var tempOwner = func() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, host)
	return strconv.Itoa(os.Getpid()) + "@" + host + "~"
}()

// parseTempOwner returns the pid and host of a temporary file name written
// by this version (false for older names).
func parseTempOwner(name string) (pid int, host string, ok bool) {
	rest := strings.TrimPrefix(name, storage.TempPrefix)
	owner, _, found := strings.Cut(rest, "~")
	if !found {
		return 0, "", false
	}
	p, h, found := strings.Cut(owner, "@")
	if !found {
		return 0, "", false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, h, true
}

// Orphans is what CleanOrphans removed.
type Orphans struct {
	TempFiles int // temporary files of interrupted writes
	Folders   int // empty folders
}

// CleanOrphans removes what interrupted writes left behind:
//
//   - temporary files of dead processes of this host (a kill -9 during an
//     upload) at once, and of this process's previous instance when it
//     had the same pid (a container's pid 1);
//   - temporary files not modified for grace, whoever wrote them (another
//     host sharing the folder): a live writer writes at least every few
//     seconds (the server's minimum upload rate), so grace (serve: 1 hour)
//     never races one;
//   - folders left empty: those this pass emptied at once, others once
//     unchanged for grace (a folder another process has just made for a
//     blob it is about to write has a fresh modification time).
func (d *Dir) CleanOrphans(ctx context.Context, grace time.Duration) (Orphans, error) {
	var o Orphans
	now := time.Now()
	cutoff := now.Add(-grace)
	myPID := os.Getpid()
	_, myHost, _ := parseTempOwner(storage.TempPrefix + tempOwner)
	emptied := map[string]bool{} // folders this pass removed something from
	var dirs []string
	err := fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			if p != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if !strings.HasPrefix(e.Name(), storage.TempPrefix) {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		orphan := info.ModTime().Before(cutoff)
		if pid, host, ok := parseTempOwner(e.Name()); ok && host == myHost {
			switch {
			case pid == myPID:
				orphan = orphan || info.ModTime().Before(d.opened) // a previous instance with our pid
			default:
				orphan = orphan || !processAlive(pid)
			}
		}
		if !orphan {
			return nil
		}
		if err := d.root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		o.TempFiles++
		emptied[filepath.ToSlash(filepath.Dir(p))] = true
		return nil
	})
	if err != nil {
		return o, fmt.Errorf("blob: clean orphans: %w", err)
	}
	// Deepest first, so that a folder whose only content was empty
	// folders goes too.
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		if d.removeEmptyDir(dir, cutoff, emptied[dir]) {
			o.Folders++
			emptied[filepath.ToSlash(filepath.Dir(dir))] = true
		}
	}
	return o, nil
}

// removeEmptyDir removes dir if it is empty and either unchanged since
// cutoff or emptied by this pass. It holds the lock of Create, so no
// writer of this process makes a file in it meanwhile.
func (d *Dir) removeEmptyDir(dir string, cutoff time.Time, emptied bool) bool {
	d.dirs.Lock()
	defer d.dirs.Unlock()
	f, err := d.root.Open(filepath.FromSlash(dir))
	if err != nil {
		return false
	}
	names, _ := f.Readdirnames(1)
	fi, err := f.Stat()
	f.Close()
	if len(names) > 0 || err != nil || !fi.IsDir() || (!emptied && !fi.ModTime().Before(cutoff)) {
		return false
	}
	return d.root.Remove(filepath.FromSlash(dir)) == nil
}

// CleanOrphans aborts multipart uploads begun more than grace ago: a
// bucket has no folders, and its uploads carry no process to ask about.
func (s *S3) CleanOrphans(ctx context.Context, grace time.Duration) (Orphans, error) {
	n, err := s.CleanTemp(ctx, grace)
	return Orphans{TempFiles: n}, err
}
