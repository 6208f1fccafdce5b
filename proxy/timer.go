package proxy

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// errHeaderTimeout cancels an upstream request whose response headers did
// not arrive within server.upstream_timeout.
var errHeaderTimeout = errors.New("upstream sent no response headers within upstream_timeout")

// clock is server.upstream_timeout's clock for one proxied request. It
// runs twice: from the request written (sent, for one without a body; its
// body read to the end by the transport, for one with a body, as
// ResponseHeaderTimeout counted) to the response headers (phase header),
// and, on a page headgate rewrites, from the headers to the end
// of the document head (phase head). When its deadline passes, the sweeper
// cancels the request's context with the phase's cause, which the
// transport turns into an error and proxyError into a 504.
//
// The clocks are entries in one list, ordered by deadline, that one
// goroutine per Proxy watches (sweep; started by New, stopped by Close),
// instead of a runtime timer each: the
// transport's ResponseHeaderTimeout cost a timer and a channel select per
// request, and per-request timers cost a timer-heap update on every start
// and stop and a scheduler that checks the heap on every turn (measured in
// docs/performance.md). Starting and stopping a clock is a short critical
// section; the sweeper wakes when the earliest deadline passes, about once
// per upstream_timeout under steady traffic, and sleeps while nothing runs.
// The clock lives in its request's state: nothing is allocated per
// request.
type clock struct {
	prev, next *clock
	at         time.Duration // deadline, on clocks' monotonic time line
	phase      int8
	linked     bool
	headerDone bool // the response headers came: the header phase is over
	rs         *reqState
}

const (
	phaseHeader = iota
	phaseHead
)

// deadlines is the list of running clocks, earliest first.
type deadlines struct {
	mu         sync.Mutex
	head, tail *clock
	sleepUntil time.Duration // the deadline the sweeper waits for; 0: it waits for a signal
	wake       chan struct{}
	quit       chan struct{} // closed by stop: the sweeper returns
	done       chan struct{} // closed by the sweeper as it returns
	closing    sync.Once
	epoch      time.Time
}

// newDeadlines returns a running list: its sweeper runs until close.
func newDeadlines() *deadlines {
	d := &deadlines{
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
		epoch: time.Now(),
	}
	go d.sweep()
	return d
}

// close stops the sweeper and waits for it to return. Clocks still running
// then never fire: close comes after the last request (Proxy.Close).
func (d *deadlines) close() {
	d.closing.Do(func() { close(d.quit) })
	<-d.done
}

func (d *deadlines) now() time.Duration { return time.Since(d.epoch) }

// start runs c for dur in phase, replacing whatever it ran before.
func (d *deadlines) start(c *clock, phase int8, dur time.Duration) {
	d.startIf(c, phase, dur, false)
}

// startIf is start; with unlessHeaderDone, it does nothing once the
// header phase has ended (endHeader), decided under the same lock.
func (d *deadlines) startIf(c *clock, phase int8, dur time.Duration, unlessHeaderDone bool) {
	at := d.now() + dur
	d.mu.Lock()
	if unlessHeaderDone && c.headerDone {
		d.mu.Unlock()
		return
	}
	if c.linked {
		d.unlink(c)
	}
	c.at, c.phase, c.linked = at, phase, true
	// Insert in order: from the tail, since deadlines mostly grow (one
	// upstream_timeout for all, started now); a config that shortened it
	// puts new ones before a few older ones.
	p := d.tail
	for p != nil && p.at > at {
		p = p.prev
	}
	c.prev = p
	if p == nil {
		c.next, d.head = d.head, c
	} else {
		c.next, p.next = p.next, c
	}
	if c.next != nil {
		c.next.prev = c
	} else {
		d.tail = c
	}
	signal := d.sleepUntil == 0 || at < d.sleepUntil
	if signal {
		d.sleepUntil = at
	}
	d.mu.Unlock()
	if signal {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// stop stops c; a clock that is not running is left alone.
func (d *deadlines) stop(c *clock) {
	d.mu.Lock()
	if c.linked {
		d.unlink(c)
	}
	d.mu.Unlock()
}

func (d *deadlines) unlink(c *clock) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		d.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		d.tail = c.prev
	}
	c.prev, c.next, c.linked = nil, nil, false
}

// sweep cancels the requests whose clocks ran out, then sleeps until the
// next deadline, or until a clock starts that ends sooner.
func (d *deadlines) sweep() {
	defer close(d.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	// The cancel function is copied under the lock: once its clock is
	// unlinked, a request may end and its state go back to reqStates
	// (release) for another request to take.
	type fired struct {
		cancel context.CancelCauseFunc
		cause  error
	}
	var out []fired // reused; what ran out, cancelled outside the lock
	for {
		clear(out)
		out = out[:0]
		d.mu.Lock()
		now := d.now()
		for d.head != nil && d.head.at <= now {
			c := d.head
			d.unlink(c)
			cause := errHeaderTimeout
			if c.phase == phaseHead {
				cause = errHeadTimeout
			}
			if c.rs != nil && c.rs.cancel != nil {
				out = append(out, fired{c.rs.cancel, cause})
			}
		}
		next := time.Duration(0)
		if d.head != nil {
			next = d.head.at
		}
		d.sleepUntil = next
		d.mu.Unlock()
		for _, f := range out {
			f.cancel(f.cause)
		}
		if next == 0 {
			select {
			case <-d.wake:
			case <-d.quit:
				return
			}
			continue
		}
		t.Reset(next - now)
		select {
		case <-t.C:
		case <-d.wake:
			t.Stop()
		case <-d.quit:
			t.Stop()
			return
		}
	}
}

// endHeader stops the header phase for good: a request body that the
// transport finishes reading after the response came does not start it.
func (d *deadlines) endHeader(c *clock) {
	d.mu.Lock()
	if c.linked && c.phase == phaseHeader {
		d.unlink(c)
	}
	c.headerDone = true
	d.mu.Unlock()
}

// bodyClock is a request body that starts the header phase when the
// transport has read all of it.
type bodyClock struct {
	io.ReadCloser
	clocks  *deadlines
	c       *clock
	d       time.Duration
	started bool
}

func (b *bodyClock) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.started {
		b.started = true
		b.clocks.startIf(b.c, phaseHeader, b.d, true)
	}
	return n, err
}
