// Command nodeexec runs a Go WebAssembly binary built with the build tag
// wasmsimd under Node.js with the SIMD kernels linked, as GOROOT's
// go_js_wasm_exec runs one built without. It is a go test -exec program:
//
//	go build -o /tmp/nodeexec ./internal/wasmsimd/nodeexec
//	GOOS=js GOARCH=wasm go test -tags wasmsimd -exec /tmp/nodeexec ./dsp ./loudness
//
// NODEEXEC_FLAGS adds flags of node's own, which NODE_OPTIONS does not
// take all of (NODEEXEC_FLAGS=--cpu-prof writes V8's profile).
package main

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/audiopost/audiopost/internal/wasmsimd"
)

//go:embed run.js
var runJS []byte

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nodeexec BINARY.wasm [ARGS]")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodeexec: go env GOROOT:", err)
		return 1
	}
	wasmExec := filepath.Join(strings.TrimSpace(string(out)), "lib", "wasm", "wasm_exec.js")
	dir, err := os.MkdirTemp("", "nodeexec-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodeexec:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{"run.js": runJS, "link.js": wasmsimd.LinkJS, "kernels.wasm": wasmsimd.Module()}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "nodeexec:", err)
			return 1
		}
	}
	flags := append([]string{"--stack-size=8192"}, strings.Fields(os.Getenv("NODEEXEC_FLAGS"))...)
	cmd := exec.Command("node", append(flags, filepath.Join(dir, "run.js"), wasmExec,
		filepath.Join(dir, "link.js"), filepath.Join(dir, "kernels.wasm"))...)
	cmd.Args = append(cmd.Args, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "nodeexec:", err)
		return 1
	}
	return 0
}
