//go:build unix && !aix

package proxy

import (
	"syscall"
)

// peek looks at an idle connection without blocking: peekIdle when
// nothing came on it, as on a connection the upstream still keeps open;
// peekData for bytes nobody asked for; peekClosed for a close or an
// error.
func (c *h1Conn) peek() int {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return peekIdle
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return peekClosed
	}
	state := peekClosed
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			state = peekData
		case n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK):
			state = peekIdle
		}
		return true
	})
	if err != nil {
		return peekClosed
	}
	return state
}
