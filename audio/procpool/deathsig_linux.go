package procpool

import "syscall"

// setDeathSignal has the kernel kill the program when the server dies
// (kill -9 included), which no clean-up code of ours can do. Go starts
// programs from threads that live as long as the process unless a
// goroutine locked to its thread exits, which the module does not do.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
