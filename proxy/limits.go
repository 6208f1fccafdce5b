package proxy

import (
	"container/list"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/headgate/headgate/internal/codec"
	"github.com/headgate/headgate/rewrite"
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
	rs.outcome = string(rewrite.SkippedTooLarge)
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
type idleConns struct {
	mu    sync.Mutex
	order list.List // of net.Conn
	at    map[net.Conn]*list.Element
}

// connState is the public http.Server's ConnState hook.
func (p *Proxy) connState(c net.Conn, s http.ConnState) {
	ic := &p.idle
	var victim net.Conn
	ic.mu.Lock()
	if e, ok := ic.at[c]; ok {
		ic.order.Remove(e)
		delete(ic.at, c)
	}
	if s == http.StateIdle {
		if ic.at == nil {
			ic.at = map[net.Conn]*list.Element{}
		}
		ic.at[c] = ic.order.PushBack(c)
		if limit := p.Config().Server.MaxIdleConnections; limit > 0 && ic.order.Len() > limit {
			e := ic.order.Front()
			victim = e.Value.(net.Conn)
			ic.order.Remove(e)
			delete(ic.at, victim)
		}
	}
	p.m.idleConns.Set(float64(ic.order.Len()))
	ic.mu.Unlock()
	if victim != nil {
		victim.Close()
		p.m.idleClosed.Inc()
	}
}
