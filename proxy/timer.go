package proxy

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// errHeaderTimeout cancels an upstream request whose response headers did
// not arrive within server.upstream_timeout.
var errHeaderTimeout = errors.New("upstream sent no response headers within upstream_timeout")

// headTimer is server.upstream_timeout's clock for one proxied request. It
// runs twice: from sending the request to the response headers (phase
// header), and, on a page headgate rewrites, from the headers to the end
// of the document head (phase head). When it fires it cancels the
// request's context with the phase's cause, which the transport turns
// into an error and proxyError into a 504.
//
// One clock for both phases, instead of the transport's
// ResponseHeaderTimeout and a second timer for the head: the transport's
// costs a timer and a channel select per request, and a rewritten page
// paid for two timers. The clocks are pooled: a request takes one, and
// gives it back when it is done, so that none is allocated per request.
type headTimer struct {
	t     *time.Timer
	rs    atomic.Pointer[reqState] // the request it runs for; nil between requests
	phase atomic.Int32
	armed bool // Reset and not yet stopped (only the request's goroutine reads these two)
	fired bool // a Stop came too late: the callback ran or runs; never reused
}

const (
	phaseHeader = iota
	phaseHead
)

var headTimers = sync.Pool{New: func() any {
	ht := new(headTimer)
	ht.t = time.AfterFunc(time.Hour, ht.fire)
	ht.t.Stop()
	return ht
}}

// fire is the clock's callback.
func (ht *headTimer) fire() {
	if rs := ht.rs.Load(); rs != nil && rs.cancel != nil {
		if ht.phase.Load() == phaseHead {
			rs.cancel(errHeadTimeout)
		} else {
			rs.cancel(errHeaderTimeout)
		}
	}
}

// startHeadTimer takes a clock for rs and starts its header phase.
func startHeadTimer(rs *reqState, d time.Duration) *headTimer {
	ht := headTimers.Get().(*headTimer)
	ht.rs.Store(rs)
	ht.phase.Store(phaseHeader)
	ht.armed = true
	ht.t.Reset(d)
	return ht
}

// restart starts the phase again for d.
func (ht *headTimer) restart(phase int32, d time.Duration) {
	ht.stop()
	if ht.fired {
		return // the request is cancelled already
	}
	ht.phase.Store(phase)
	ht.armed = true
	ht.t.Reset(d)
}

// stop stops the clock; after a stop that came too late the clock is
// never reused, since its callback may still be about to cancel.
func (ht *headTimer) stop() {
	if ht.armed {
		ht.armed = false
		if !ht.t.Stop() {
			ht.fired = true
		}
	}
}

// release stops the clock and gives it back, unless it fired.
func (ht *headTimer) release() {
	ht.stop()
	if ht.fired {
		return
	}
	ht.rs.Store(nil)
	headTimers.Put(ht)
}
