//go:build unix

package test

import (
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own, so that
// signalGroup reaches what its shell starts, as a terminal's Ctrl-C does.
func inOwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to cmd's process group; kill is SIGKILL's case.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-cmd.Process.Pid, sig)
}
