package audit

import (
	"sort"
	"strings"
)

// The crawl frontier spends the page budget (Options.MaxPages) on pages
// that can be indexed first. Three queues, taken in order:
//
//   - prio: canonical and alternate targets, which other pages' checks
//     need;
//   - normal: start URLs, sitemap URLs, redirect targets, and links found
//     on pages that are not noindex;
//   - low: links found only on noindex pages, and links whose shape (their
//     directory and the names of their query keys, see shapeOf) has so far
//     given only noindex pages: a wiki's ?action=edit, ?action=history and
//     diff views, linked from every article.
//
// A URL in low moves to normal when a page that is not noindex links to it
// (unless its shape predicts noindex); a link in normal moves to low when
// its turn comes and its shape has come to predict noindex. Start, sitemap
// and redirect URLs are never moved down. Pages found noindex are crawled
// and reported like any other, once the indexable ones are done or the
// budget allows. Links on pages that name another canonical are not moved
// down: page 2 of a series that names page 1 still leads to articles.

// tier is where a URL waits, or that it no longer does.
type tier uint8

const (
	tierNone   tier = iota // not queued
	tierLow                // in low
	tierLink               // in normal, a link: may move to low
	tierPinned             // in normal or prio, never moved
	tierSent               // dispatched
)

// noindexShapeMin is how many noindex pages of one shape, and none that
// is not, make the shape predict noindex.
const noindexShapeMin = 2

// shapeStat counts the fetched 200 HTML pages of one shape.
type shapeStat struct{ noindex, index int }

// shapeOf is a URL key's shape: its path up to the last "/", and the
// sorted names of its query keys ("/wiki/?action" for
// /wiki/Tea?action=edit, "/w/?action&title" for
// /w/index.php?title=Tea&action=history).
func shapeOf(key string) string {
	path, query, _ := strings.Cut(key, "?")
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[:i+1]
	}
	if query == "" {
		return path + "?"
	}
	var names []string
	for _, kv := range strings.Split(query, "&") {
		n, _, _ := strings.Cut(kv, "=")
		names = append(names, n)
	}
	sort.Strings(names)
	return path + "?" + strings.Join(names, "&")
}

// predictsNoindex reports whether key's shape has given only noindex
// pages so far, at least noindexShapeMin of them.
func (c *crawler) predictsNoindex(key string) bool {
	s := c.shapes[shapeOf(key)]
	return s.noindex >= noindexShapeMin && s.index == 0
}

// learn counts a fetched page in its shape.
func (c *crawler) learn(p *page) {
	if p.status != 200 || !p.html {
		return
	}
	s := c.shapes[shapeOf(p.key)]
	if p.noindex {
		s.noindex++
	} else {
		s.index++
	}
	c.shapes[shapeOf(p.key)] = s
}

// enqueue queues key in tier t (tierPinned with prio for prio); a URL
// already queued moves up from low, and to prio when asked.
func (c *crawler) enqueue(key string, t tier, prio bool, hops uint8) {
	id := c.intern(key)
	if id < 0 {
		return
	}
	if t == tierLink && c.predictsNoindex(key) {
		t = tierLow
	}
	switch c.state[id] {
	case tierNone:
	case tierLow:
		if t == tierLow && !prio {
			return
		}
		c.lowLive-- // its entry in low is skipped from now on
	default:
		return
	}
	c.hops[id] = hops
	switch {
	case prio:
		c.state[id] = tierPinned
		c.prio.push(id)
	case t == tierLow:
		c.state[id] = tierLow
		c.low.push(id)
		c.lowLive++
	default:
		c.state[id] = t
		c.normal.push(id)
	}
}

// next returns the URL to fetch next and its queue, moving links whose
// shape now predicts noindex down to low; nil when none waits.
func (c *crawler) next() (int32, *queue) {
	if c.prio.len() > 0 {
		return c.prio.peek(), &c.prio
	}
	for c.normal.len() > 0 {
		id := c.normal.peek()
		if c.state[id] == tierLink && c.predictsNoindex(c.keys[id]) {
			c.normal.pop()
			c.state[id] = tierLow
			c.low.push(id)
			c.lowLive++
			continue
		}
		return id, &c.normal
	}
	for c.low.len() > 0 {
		id := c.low.peek()
		if c.state[id] != tierLow {
			c.low.pop() // moved up, and queued there
			continue
		}
		return id, &c.low
	}
	return 0, nil
}

// sent takes id, the head of q, off its queue.
func (c *crawler) sent(id int32, q *queue) {
	q.pop()
	if q == &c.low {
		c.lowLive--
	}
	c.state[id] = tierSent
}

// waiting is how many URLs wait in the queues.
func (c *crawler) waiting() int {
	return c.prio.len() + c.normal.len() + c.lowLive
}
