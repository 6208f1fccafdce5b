package proxy

import (
	"net"
	"syscall"
	"unsafe"
)

// canSplice: net.TCPConn's ReadFrom from another TCP connection is
// splice(2) here.
const canSplice = true

// connReset reports a TCP connection its peer reset: its state is CLOSE
// (a reset ends the connection at once), not ESTABLISHED or, after the
// peer's normal close, CLOSE_WAIT. Read from TCP_INFO's first byte,
// tcpi_state.
func connReset(nc net.Conn) bool {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	const tcpClose = 7 // TCP_CLOSE, include/net/tcp_states.h
	var info [8]byte   // the start of struct tcp_info: tcpi_state first
	reset := false
	rc.Control(func(fd uintptr) {
		n := uint32(len(info))
		_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&n)), 0)
		reset = e == 0 && n >= 1 && info[0] == tcpClose
	})
	return reset
}
