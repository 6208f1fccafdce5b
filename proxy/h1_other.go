//go:build !unix || aix

package proxy

// peek can not look here: a connection the upstream closed is found by
// the request written on it, which is then sent again on a new one.
func (c *h1Conn) peek() int { return peekIdle }
