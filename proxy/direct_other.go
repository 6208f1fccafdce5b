//go:build !linux

package proxy

// canSplice: elsewhere net.TCPConn's ReadFrom from another connection is
// a copy through a buffer it allocates (32 KiB a call): ReverseProxy's
// copy with headgate's pooled buffers is cheaper.
const canSplice = false
