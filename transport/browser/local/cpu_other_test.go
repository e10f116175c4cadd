//go:build !js

package local_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time of the test process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadTime is cpuTime: the native benchmark runs with GOMAXPROCS=1.
func threadTime() time.Duration { return cpuTime() }
