// Package benchmarks measures audiopost against its peers (ffmpeg,
// libebur128) in the same run, so that figures are ratios on one machine
// rather than absolute seconds on a noisy one. Everything lives in _test.go
// files: run `go test -bench . ./benchmarks`.
package benchmarks
