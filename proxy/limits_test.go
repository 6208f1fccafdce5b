package proxy

import (
	"net"
	"net/http"
	"testing"
)

// closeConn is a net.Conn that notes its Close.
type closeConn struct {
	net.Conn
	closed bool
}

func (c *closeConn) Close() error { c.closed = true; return nil }

// Past server.max_idle_connections the oldest idle connection is closed;
// one that became active again is not idle; 0 turns the bound off.
func TestIdleConnsBound(t *testing.T) {
	p, err := New(testConfig(t, "http://127.0.0.1:1", "[server]\nmax_idle_connections = 2\n\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]*closeConn, 5)
	for i := range cs {
		cs[i] = &closeConn{}
		p.connState(cs[i], http.StateNew)
		p.connState(cs[i], http.StateActive)
	}
	p.connState(cs[0], http.StateIdle)
	p.connState(cs[1], http.StateIdle)
	p.connState(cs[0], http.StateActive) // reused: not idle
	p.connState(cs[2], http.StateIdle)
	if cs[0].closed || cs[1].closed || cs[2].closed {
		t.Fatalf("closed with 2 idle: %v %v %v", cs[0].closed, cs[1].closed, cs[2].closed)
	}
	p.connState(cs[3], http.StateIdle) // 3 idle: the oldest (1) goes
	if !cs[1].closed || cs[2].closed || cs[3].closed {
		t.Errorf("after a third idle: closed %v %v %v, want only the oldest", cs[1].closed, cs[2].closed, cs[3].closed)
	}
	p.connState(cs[1], http.StateClosed)
	p.connState(cs[2], http.StateHijacked)
	p.connState(cs[4], http.StateIdle)
	if cs[3].closed || cs[4].closed {
		t.Errorf("2 idle after a hijack, yet one was closed")
	}
	if n := len(p.idle.at); n != 2 || p.idle.order.Len() != 2 {
		t.Errorf("tracking %d (%d) connections, want 2", n, p.idle.order.Len())
	}

	off, err := New(testConfig(t, "http://127.0.0.1:1", "[server]\nmax_idle_connections = 0\n\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		c := &closeConn{}
		off.connState(c, http.StateIdle)
		if c.closed {
			t.Fatal("closed with the bound off")
		}
	}
}
