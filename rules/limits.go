package rules

// DefaultMaxIdleConnections is server.max_idle_connections when the file
// does not set it: enough keep-alive connections for a few hundred busy
// clients, and about 25 MiB of memory held by idle ones at most.
const DefaultMaxIdleConnections = 1024

// serverLimits reads the [server] keys that bound what clients can make
// headgate hold (issue 19).
func (l *loader) serverLimits(t map[string]any) {
	if v, ok := t["max_idle_connections"]; ok {
		l.integer("server.max_idle_connections", v, 0, 1<<20, &l.cfg.Server.MaxIdleConnections)
	}
}
