//go:build !js

package local_test

import (
	"time"

	"github.com/audiopost/audiopost/internal/cputime"
)

// cpuTime is the CPU time of the test process.
var cpuTime = cputime.Process

// threadTime is cpuTime: the native benchmark runs with GOMAXPROCS=1.
func threadTime() time.Duration { return cpuTime() }
