package local_test

import (
	"context"
	"testing"

	"github.com/audiopost/audiopost/transport/browser/local"
)

// BenchmarkProcess runs the page's engine on a minute of 48 kHz stereo
// speech-like signal held in memory, default chain, WAV out: the same Go
// code natively and as WebAssembly under Node.js, whose V8 is Chromium's
// engine, so that the loss of the WebAssembly build can be profiled
// without a browser. x_realtime is audio seconds per wall-clock second,
// x_realtime_cpu per CPU second of the process (Node's, compiler threads
// included), the figure to compare on a machine other work shares.
//
//	GOMAXPROCS=1 go test ./transport/browser/local -run '^$' -bench Process -benchtime 3x
//	GOMAXPROCS=1 go test -tags purego ./transport/browser/local -run '^$' -bench Process -benchtime 3x
//	go build -o /tmp/nodeexec ./internal/wasmsimd/nodeexec
//	GOOS=js GOARCH=wasm go test -tags wasmsimd -exec /tmp/nodeexec ./transport/browser/local -run '^$' -bench Process -benchtime 3x
//
// (the tag wasmsimd, as the browser build, links the SIMD kernels of
// internal/wasmsimd, which nodeexec gives the engine; without it and
// with GOROOT's go_js_wasm_exec, the Go loops), and V8's profile of the
// WebAssembly (functions by self time in the .cpuprofile, which
// Chromium's DevTools open):
//
//	GOOS=js GOARCH=wasm go test -c -tags wasmsimd -o local.wasm ./transport/browser/local
//	NODEEXEC_FLAGS=--cpu-prof /tmp/nodeexec local.wasm -test.run '^$' -test.bench Process -test.benchtime 3x
func BenchmarkProcess(b *testing.B) {
	const seconds = 60
	data := speech(b, seconds)
	ctx := context.Background()
	settings := []byte(`{"output_files": [{"format": "wav"}]}`)
	c0, t0 := cpuTime(), threadTime()
	for b.Loop() {
		in, _ := input("talk.wav", data)
		if _, err := local.Process(ctx, in, settings, files{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	cpu, thread := cpuTime()-c0, threadTime()-t0
	b.ReportMetric(seconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
	b.ReportMetric(seconds*float64(b.N)/cpu.Seconds(), "x_realtime_cpu")
	if thread > 0 {
		b.ReportMetric(seconds*float64(b.N)/thread.Seconds(), "x_realtime_thread")
	}
}
