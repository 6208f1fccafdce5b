//go:build unix && !aix

package proxy

import (
	"net"
	"syscall"
)

// peeker looks at an idle connection without blocking. Its raw connection
// and callback are made once per connection, so that a peek allocates
// nothing (a closure and SyscallConn's value each time cost 3 allocations).
type peeker struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	state int
	n     int
	buf   [40]byte // the start of bytes found: for the log line
}

// canPeek: idle connections can be peeked at here.
const canPeek = true

func (p *peeker) init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.rc, p.fn = rc, p.look
}

func (p *peeker) look(fd uintptr) bool {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case n > 0:
		p.state, p.n = peekData, n
	case n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK):
		p.state = peekIdle
	default:
		p.state = peekClosed
	}
	return true
}

// peek looks at an idle connection without blocking: peekIdle when
// nothing came on it, as on a connection the upstream still keeps open;
// peekData for bytes nobody asked for; peekClosed for a close or an
// error.
func (c *h1Conn) peek() int {
	p := &c.pk
	if p.rc == nil {
		return peekIdle
	}
	p.state = peekClosed
	if err := p.rc.Read(p.fn); err != nil {
		return peekClosed
	}
	return p.state
}

// start is the start of the bytes the last peek found.
func (p *peeker) start() []byte { return p.buf[:p.n] }
