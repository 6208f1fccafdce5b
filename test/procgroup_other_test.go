//go:build !unix

package test

import "os/exec"

// inOwnGroup: no process groups here.
func inOwnGroup(*exec.Cmd) {}

// signalGroup: no Ctrl-C to send here; the process is killed.
func signalGroup(cmd *exec.Cmd, _ bool) { cmd.Process.Kill() }
