package proxy

import (
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/headgate/headgate/internal/codec"
)

// The compressed bytes headgate keeps while it looks for the end of a
// compressed page's head (to replay them when the page stays unchanged)
// are bounded, as the decoded head is by max_head_bytes: bytes that decode
// to nothing — empty gzip members, empty deflate blocks, empty brotli
// meta-blocks or zstd frames — would otherwise be recorded without end.
//
// Real pages compress their heads; even one flushed every few bytes
// stays well below four times its decoded size. Past the limit the head
// search stops and the page goes out unchanged, like a head over
// max_head_bytes (outcome skipped_too_large, counted in
// headgate_head_search_limit_total).
const (
	recordFactor   = 4
	minRecordLimit = 64 << 10
)

// recordLimit is the most compressed bytes recorded for a head of at most
// maxHead decoded bytes.
func recordLimit(maxHead int) int { return max(recordFactor*maxHead, minRecordLimit) }

// errRecordLimit ends the decoder's reads once the recording is full.
var errRecordLimit = errors.New("compressed head larger than the recording limit")

// passRecorded sends a compressed page whose head search passed the
// recording limit as the upstream sent it: the recorded bytes, then the
// rest, coding and length unchanged.
func (p *Proxy) passRecorded(res *http.Response, rs *reqState, dec codec.Decoder) error {
	if dec != nil {
		dec.Release()
	}
	body := rs.body
	body.replay()
	res.Body = body
	rs.outcome = SkippedTooLarge
	p.m.recordLimits.Inc()
	p.log.Info("head not rewritten", "path", rs.m.Path, "outcome", rs.outcome,
		"reason", "the compressed head passed the recording limit", "limit", body.limit)
	if !rs.st.shadow {
		p.applyHeaders(res, rs, nil, true)
	}
	p.finishHeaders(res.Header, rs)
	return nil
}

// idleConns tracks the public port's idle keep-alive connections, oldest
// first. Each holds a goroutine and its buffers (about 20 KiB) until
// IdleTimeout; with more than server.max_idle_connections idle, the oldest
// is closed. A connection closed just as its client reuses it is what a
// client must expect of any keep-alive connection: browsers and HTTP
// libraries retry the request on a new one.
//
// Every open connection has one node, made when it opens and dropped when
// it closes; a request's turns from idle to active and back only link and
// unlink that node (no allocation, no map write per request).
type idleConns struct {
	mu         sync.Mutex
	at         map[net.Conn]*idleNode // every open connection's node
	head, tail *idleNode              // the idle ones, oldest first
	n          int                    // how many are idle
}

type idleNode struct {
	c          net.Conn
	prev, next *idleNode
	idle       bool
}

func (ic *idleConns) link(e *idleNode) {
	e.prev, e.next, e.idle = ic.tail, nil, true
	if ic.tail != nil {
		ic.tail.next = e
	} else {
		ic.head = e
	}
	ic.tail = e
	ic.n++
}

func (ic *idleConns) unlink(e *idleNode) {
	if !e.idle {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		ic.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		ic.tail = e.prev
	}
	e.prev, e.next, e.idle = nil, nil, false
	ic.n--
}

// node is c's node e, made now if c has none yet (at StateNew; or at any
// state when the hook is called directly, as a test does).
func (ic *idleConns) node(c net.Conn, e *idleNode) *idleNode {
	if e != nil {
		return e
	}
	e = &idleNode{c: c}
	if ic.at == nil {
		ic.at = map[net.Conn]*idleNode{}
	}
	ic.at[c] = e
	return e
}

// connState is the public http.Server's ConnState hook.
func (p *Proxy) connState(c net.Conn, s http.ConnState) {
	ic := &p.idle
	var victim net.Conn
	ic.mu.Lock()
	e := ic.at[c]
	switch s {
	case http.StateClosed, http.StateHijacked:
		if e != nil {
			ic.unlink(e)
			delete(ic.at, c)
		}
	case http.StateIdle:
		e = ic.node(c, e)
		if !e.idle {
			ic.link(e)
		}
		if limit := p.Config().Server.MaxIdleConnections; limit > 0 && ic.n > limit {
			old := ic.head
			ic.unlink(old)
			victim = old.c // its node goes when the server reports it closed
		}
	default: // StateNew, StateActive
		ic.unlink(ic.node(c, e))
	}
	p.m.idleConns.Set(float64(ic.n))
	ic.mu.Unlock()
	if victim != nil {
		victim.Close()
		p.m.idleClosed.Inc()
	}
}
