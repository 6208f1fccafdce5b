//go:build !unix || aix

package proxy

import "net"

// peeker can not look at an idle connection here, so that bytes an
// upstream sent on one unasked could be read as the next request's
// answer: h1Transport sends everything through http.Transport, whose
// reader goroutine watches idle connections.
type peeker struct{}

const canPeek = false

func (p *peeker) init(net.Conn) {}

func (p *peeker) start() []byte { return nil }

func (c *h1Conn) peek() int { return peekIdle }
