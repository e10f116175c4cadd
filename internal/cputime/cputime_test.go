package cputime_test

import (
	"testing"

	"github.com/audiopost/audiopost/internal/cputime"
)

// TestProcessCounts spins until the process's CPU time has moved: a reader
// that stood still (or went back) would make every benchmark ratio built
// on it meaningless.
func TestProcessCounts(t *testing.T) {
	before := cputime.Process()
	if before <= 0 {
		t.Fatalf("CPU time %v at the start of a test process, want > 0", before)
	}
	x := 1.0
	for i := 0; cputime.Process() <= before; i++ {
		for range 100000 {
			x = x*1.0000001 + 1e-9
		}
		if i > 1e5 {
			t.Fatalf("CPU time still %v after %d spins (x %g)", before, i, x)
		}
	}
}
