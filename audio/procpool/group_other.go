//go:build !unix

package procpool

import "os/exec"

// setGroup leaves exec's default: Cancel kills the program itself.
func setGroup(c *exec.Cmd) {}
