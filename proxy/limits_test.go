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
	// Open: 3 and 4 (idle) and 0 (active); 1 was closed, 2 hijacked.
	if n, idle := len(p.idle.at), p.idle.n; n != 3 || idle != 2 {
		t.Errorf("tracking %d connections, %d idle; want 3, 2 idle", n, idle)
	}
	var seen []net.Conn
	for e := p.idle.head; e != nil; e = e.next {
		seen = append(seen, e.c)
	}
	if len(seen) != 2 || seen[0] != cs[3] || seen[1] != cs[4] {
		t.Errorf("idle, oldest first: %v, want connections 3 and 4", seen)
	}
	p.connState(cs[3], http.StateActive)
	p.connState(cs[3], http.StateClosed)
	p.connState(cs[4], http.StateClosed)
	p.connState(cs[0], http.StateClosed)
	if n, idle := len(p.idle.at), p.idle.n; n != 0 || idle != 0 || p.idle.head != nil || p.idle.tail != nil {
		t.Errorf("after every close: tracking %d, %d idle, head %v tail %v", n, idle, p.idle.head, p.idle.tail)
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

// BenchmarkConnState is the hook's cost for one request on a keep-alive
// connection (active, then idle again) with 256 connections open.
//
//	go test ./proxy -run '^$' -bench ConnState -benchmem
func BenchmarkConnState(b *testing.B) {
	p, err := New(testConfig(b, "http://127.0.0.1:1", ""), Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs := make([]*closeConn, 256)
	for i := range cs {
		cs[i] = &closeConn{}
		p.connState(cs[i], http.StateNew)
		p.connState(cs[i], http.StateActive)
		p.connState(cs[i], http.StateIdle)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := cs[i%len(cs)]
		p.connState(c, http.StateActive)
		p.connState(c, http.StateIdle)
		i++
	}
}
