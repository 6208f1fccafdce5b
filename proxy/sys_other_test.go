//go:build !unix

package proxy

// setRecvBuffer: not set here (the tests that use it are Linux's).
func setRecvBuffer(uintptr, int) {}
