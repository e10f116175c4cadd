package procpool

import "golang.org/x/sys/unix"

// limitFileSize sets the largest file the process pid may write. A
// failure leaves the caller's check of the file's size when the program
// has exited.
func limitFileSize(pid int, limit int64) {
	lim := unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	_ = unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil)
}
