// Package testsize says how much of a sweep a test runs. The test suite
// has three sizes: `go test -short ./...`, the quick check, skips the
// numeric sweeps; the plain `go test ./...`, which CI runs, checks each
// sweep on a few points spread over its range; and AUDIOPOST_LONG=1 runs
// every point, as before a release or after changing an algorithm. CI's
// race run (-race -short) checks goroutines: Race tells the tests built for
// it, which skip or shrink what computes numbers only.
//
//	targets := testsize.Spread(allTargets, 4) // 4 in the plain run, all when long
package testsize

import (
	"os"
	"strconv"
	"testing"
)

// Env is the environment variable that asks for every point.
const Env = "AUDIOPOST_LONG"

// Long reports whether the long sweeps are asked for: AUDIOPOST_LONG is
// set to a true value (1, t, true; see strconv.ParseBool).
func Long() bool {
	b, err := strconv.ParseBool(os.Getenv(Env))
	return err == nil && b
}

// Spread returns all when Long, else Pick(all, n).
func Spread[T any](all []T, n int) []T {
	if Long() {
		return all
	}
	return Pick(all, n)
}

// Pick returns n of the elements of all spread evenly from the first to
// the last (both kept), so that a shortened sweep still covers both ends
// of its range; all itself when n >= len(all).
func Pick[T any](all []T, n int) []T {
	if n >= len(all) {
		return all
	}
	if n <= 1 {
		return all[:max(n, 0)]
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, all[i*(len(all)-1)/(n-1)])
	}
	return out
}

// SkipRace skips tb in a test binary built with the race detector (Race),
// saying why: a test of numbers, or of one goroutine, which the plain run
// checks, while CI's race run is for the goroutines.
func SkipRace(tb testing.TB, why string) {
	tb.Helper()
	if Race {
		tb.Skip(why)
	}
}
