package proxy

import (
	"sync"
	"time"
)

// latency is the flush timer of a response whose length is unknown to the
// client but that is not flushed after every write: a rewritten body that
// is re-encoded or whose upstream sent no length. The rewriter may return a
// head token by token and a flush of a re-encoded body is a compressor
// flush plus a syscall, so these bodies are written into the response
// writer's buffers and flushed flushInterval after the first write that
// follows a flush: a paused upstream's bytes still reach the client within
// flushInterval. Every other response has no timer at all (ReverseProxy's
// FlushInterval is 0): one whose length is known is written as it is read,
// and one of unknown length passed through is flushed after every write,
// as ReverseProxy does for a stream.
type latency struct {
	flush   func() error // the response writer's; called under mu
	mu      sync.Mutex
	t       *time.Timer
	pending bool // bytes written since the last flush
	stopped bool
}

// wrote arms the timer after a write, unless it is armed already; the
// caller holds mu.
func (l *latency) wrote() {
	if l.pending || l.stopped {
		return
	}
	l.pending = true
	if l.t == nil {
		l.t = time.AfterFunc(flushInterval, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.pending && !l.stopped {
				_ = l.flush()
				l.pending = false
			}
		})
	} else {
		l.t.Reset(flushInterval)
	}
}

// stop ends the timer for good: the response is over (the ResponseWriter
// must not be touched after the handler returns).
func (l *latency) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped, l.pending = true, false
	if l.t != nil {
		l.t.Stop()
	}
}
