//go:build js

package cputime

import (
	"syscall/js"
	"time"
)

// Process is the CPU time, user and system, of the Node.js process running
// the WebAssembly (its main thread and V8's compiler and collector
// threads); 0 outside Node.js.
func Process() (d time.Duration) {
	defer func() {
		if recover() != nil { // no process.cpuUsage: a browser
			d = 0
		}
	}()
	u := js.Global().Get("process").Call("cpuUsage")
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond
}
