package main

import "os"

// notifyReload: js has no SIGHUP; the config reloads on a file change only.
func notifyReload(chan<- os.Signal) {}
