package rules

// DefaultMaxIdleConnections is server.max_idle_connections when the file
// does not set it: enough keep-alive connections for a few hundred busy
// clients, and about 25 MiB of memory held by idle ones at most.
const DefaultMaxIdleConnections = 1024

// maxIdleConnections reads server.max_idle_connections, which bounds what
// clients can make headgate hold (issue 19).
func (l *loader) maxIdleConnections(key string, v any) {
	l.integer(key, v, 0, 1<<20, &l.cfg.Server.MaxIdleConnections)
}
