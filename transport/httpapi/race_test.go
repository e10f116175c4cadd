//go:build race

package httpapi_test

// raceEnabled: the race detector slows everything down several times, so
// latency bounds are relaxed under it.
const raceEnabled = true
