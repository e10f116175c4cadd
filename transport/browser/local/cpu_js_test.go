//go:build js

package local_test

import (
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/audiopost/audiopost/internal/cputime"
)

// cpuTime is the CPU time of the Node.js process running the
// WebAssembly: its main thread and V8's compiler and collector threads.
var cpuTime = cputime.Process

// threadTime is the CPU time of the thread running the WebAssembly
// (Node.js's main thread, read from Linux's /proc through Node's fs),
// without the compiler's threads, whose work varies from run to run: the
// figure to compare two builds by. 0 where there is no /proc.
func threadTime() time.Duration {
	var s string
	func() {
		defer func() { recover() }() // no /proc: a JavaScript exception
		pid := js.Global().Get("process").Get("pid").Int()
		s = js.Global().Get("fs").Call("readFileSync", "/proc/self/task/"+strconv.Itoa(pid)+"/stat", "utf8").String()
	}()
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+sy) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
