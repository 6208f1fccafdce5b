//go:build unix

package proxy

import "syscall"

// setRecvBuffer sets a socket's receive buffer (SO_RCVBUF) from a dialer's
// Control, before the connection's window is announced.
func setRecvBuffer(fd uintptr, n int) {
	syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}

// The errors a splice fails with when the client's end broke or the
// upstream's end reset.
var errPipe, errConnReset error = syscall.EPIPE, syscall.ECONNRESET
