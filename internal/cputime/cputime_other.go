//go:build !unix && !js

package cputime

import "time"

// Process is 0 where the system gives no CPU time of the process.
func Process() time.Duration { return 0 }
