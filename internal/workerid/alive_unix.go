//go:build unix

package workerid

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid runs on this host
// (one we may not signal runs too).
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
