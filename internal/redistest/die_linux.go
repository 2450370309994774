package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill the server if the test binary dies
// without running its cleanups (a panic, a timeout), so no server is left.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
