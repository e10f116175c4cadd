package wasmsimd_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/wasmsimd"
)

var engine = flag.Bool("engine", false, "also run the kernel tests of audio, dsp, dsp/classify, loudness, internal/fft and production/artwork as WebAssembly under Node.js with the kernels linked (compiles them for GOOS=js: about a minute)")

// The module is valid WebAssembly, exports every kernel the engine
// imports, and links to a Go build's memory through link.js.
func TestModuleLinks(t *testing.T) {
	node := need.Program(t, "node")
	dir := t.TempDir()
	for name, b := range map[string][]byte{"kernels.wasm": wasmsimd.Module(), "link.js": wasmsimd.LinkJS} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `
const fs = require("fs");
const audiopostSIMD = require(process.argv[1] + "/link.js");
const bytes = fs.readFileSync(process.argv[1] + "/kernels.wasm");
if (!WebAssembly.validate(bytes)) { throw new Error("invalid module"); }
const mod = new WebAssembly.Module(bytes);
const imports = {};
const link = audiopostSIMD(imports, mod);
const mem = new WebAssembly.Memory({ initial: 1 });
link({ exports: { mem } });
// One frame through one section with b0 = 1: the output is the input
// plus the anti-denormal offset the coefficient block starts with.
const f = new Float64Array(mem.buffer);
f.set([1e-20, 1e-20, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], 0);  // coef at 0
f[100] = 0.5; f[101] = -0.25;                            // l at 800, r at 808
imports.audiopost_simd.stereo1(800, 808, 1, 0, 1024);
console.log(Object.keys(imports.audiopost_simd).sort().join(" ") + "|" + f[100] + " " + f[101]);
`
	out, err := exec.Command(node, "-e", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	names, got, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
	if want := strings.Join(slices.Sorted(slices.Values(wasmsimd.Names())), " "); names != want {
		t.Errorf("exports %q, want %q", names, want)
	}
	if got != "0.5 -0.25" {
		t.Errorf("one frame through stereo1: %s, want 0.5 -0.25", got)
	}
}

// With -engine: the tests of audio, dsp, dsp/classify, loudness,
// internal/fft and production/artwork that hold their kernels to the Go
// loops bit for bit run
// as WebAssembly under Node.js with these kernels linked (command
// nodeexec), as the browser build runs them. The plain run leaves this
// to transport/browser's TestProcessLikeNative, which compares the whole
// chain in Chromium with the native binary's output to the bit.
func TestEngineKernels(t *testing.T) {
	if !*engine {
		t.Skip("with -engine")
	}
	need.Program(t, "node")
	exe := filepath.Join(t.TempDir(), "nodeexec")
	if out, err := exec.Command("go", "build", "-o", exe, "github.com/audiopost/audiopost/internal/wasmsimd/nodeexec").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command("go", "test", "-count=1", "-tags", "wasmsimd", "-exec", exe,
		"-run", "TestCascadeFusedLoopsExact|TestCascadeStereoChannelsIndependent|TestEnergy2IsEnergy|TestEnergy2SqIsEnergy2|TestPeaks3IsBranchPeak|TestAbsMaxIsGo|TestStereo16IsMono|TestRampIsGo|TestLimiterSteadyIsExact|TestRadix4KernelIsGo|TestFirstSplitKernelsAreGo|TestWhitenKernelIsGo|TestMono2KernelIsGo|TestLowPass2KernelIsGo|TestPowerSpectrumKernelIsGo|TestBoundsKernelIsGo|TestEncodePCMClipsAndCounts|TestLevels2IsGo|TestSpanMaxIsGo|TestWindowSquaresKernelIsGo", "-v",
		"github.com/audiopost/audiopost/audio", "github.com/audiopost/audiopost/dsp", "github.com/audiopost/audiopost/loudness", "github.com/audiopost/audiopost/internal/fft", "github.com/audiopost/audiopost/dsp/classify", "github.com/audiopost/audiopost/production/artwork")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "--- PASS"); n != 20 {
		t.Errorf("%d tests passed, want 20", n)
	}
}
