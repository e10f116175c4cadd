//go:build unix

package blob

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid runs on this host.
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
