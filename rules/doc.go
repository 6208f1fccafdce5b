// Package rules owns headgate's configuration: it loads the TOML file over
// defaults, validates every key (reporting each problem as an HG code with
// the file and line of its key), compiles the path patterns into a matcher
// and resolves a request path to the merged head fields of every rule that
// matches it.
//
// Call order:
//
//	cfg, err := rules.Load("headgate.toml") // err is a Problems list on bad input
//	m := cfg.Resolve(target)                 // per request ("/path?query"); a tree walk, no regex scan
//	head := m.Render(page)                   // once the upstream head is read
//
// A *Config is immutable once loaded: reload builds a new one and swaps the
// pointer. Nothing in this package knows about HTTP servers.
//
// Security: request paths are untrusted. CheckPath rejects dot segments
// (also percent-encoded, and also where %2F or a backslash separates them),
// NUL and invalid percent-encoding before anything is matched. Deny rules
// also match the path with %2F decoded and with "//" collapsed. Matching a
// parameter that spans segments is bounded per request, and fails closed
// (denied) when a deny rule exists. Path parameter values are
// percent-encoded per segment when they fill a URL, and every URL that a
// rule produces passes the URL rules (ValidURL) or is dropped. Templates
// substitute values, never markup, so a parameter can not change the
// structure of what is written.
package rules
