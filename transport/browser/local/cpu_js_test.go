//go:build js

package local_test

import (
	"syscall/js"
	"time"
)

// cpuTime is the CPU time of the Node.js process running the
// WebAssembly: its main thread and V8's compiler and collector threads.
func cpuTime() time.Duration {
	u := js.Global().Get("process").Call("cpuUsage")
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond
}
