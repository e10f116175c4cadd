// Package cputime reads the CPU time the process has used, the figure the
// benchmarks compare on a shared machine where wall clocks vary with the
// load.
package cputime
