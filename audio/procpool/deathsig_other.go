//go:build unix && !linux

package procpool

import "syscall"

// setDeathSignal: only Linux has a parent-death signal.
func setDeathSignal(*syscall.SysProcAttr) {}
