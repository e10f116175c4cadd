//go:build unix

package procpool

import (
	"os/exec"
	"syscall"
)

// setGroup runs c in a process group of its own and makes its Cancel
// kill that group: a program's own children (a shell's, a helper's) go
// with it.
func setGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(c.SysProcAttr)
	c.Cancel = func() error {
		err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		if err == syscall.ESRCH {
			// Already gone (exited, or reaped by Wait).
			return nil
		}
		return err
	}
}
