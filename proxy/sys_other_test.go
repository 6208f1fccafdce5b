//go:build !unix

package proxy

import "errors"

// setRecvBuffer: not set here (the tests that use it are Linux's).
func setRecvBuffer(uintptr, int) {}

// errPipe, errConnReset: stand-ins (the tests that use them are Linux's).
var errPipe, errConnReset = errors.New("broken pipe"), errors.New("connection reset by peer")
