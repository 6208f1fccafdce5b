//go:build !linux

package proxy

import "net"

// canSplice: elsewhere net.TCPConn's ReadFrom from another connection is
// a copy through a buffer it allocates (32 KiB a call): ReverseProxy's
// copy with headgate's pooled buffers is cheaper.
const canSplice = false

// connReset: see direct_linux.go; never called here.
func connReset(net.Conn) bool { return false }
