//go:build !js

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReload relays SIGHUP, the signal that reloads the config, to c.
func notifyReload(c chan<- os.Signal) { signal.Notify(c, syscall.SIGHUP) }
