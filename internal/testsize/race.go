//go:build race

package testsize

// Race reports whether the test binary was built with the race detector
// (go test -race), under which computing costs five to twenty times as
// much: CI's race run checks the goroutines, and tests of numbers alone,
// which the plain run checks, skip or shrink their input there.
const Race = true
