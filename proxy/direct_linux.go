package proxy

import (
	"net"

	"golang.org/x/sys/unix"
)

// canSplice: net.TCPConn's ReadFrom from another TCP connection is
// splice(2) here.
const canSplice = true

// connReset reports a TCP connection its peer reset: its state (TCP_INFO's
// tcpi_state) is CLOSE, which a reset ends a connection in at once, not
// ESTABLISHED or, after the peer's normal close, CLOSE_WAIT. Only a
// failure's path calls it.
func connReset(nc net.Conn) bool {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	reset := false
	rc.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		reset = err == nil && info.State == unix.BPF_TCP_CLOSE // TCP_CLOSE, 7
	})
	return reset
}
