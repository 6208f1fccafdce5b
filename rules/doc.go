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
// Config keys (fields.go): each table of the file is a table of fields,
// and each key is declared there once, with the function that reads it and,
// if it is required, the problem its absence is. decode reads a table with
// it: unknown keys (HG140 with a "did you mean"), the early fields in
// order, the rest in key order. newSchema builds the schema from the tables, and
// TestDocsKeys checks docs/configuration.md against it. A new key is one
// more field; a new table is one more fields value, declared in newSchema. The
// line of each key comes from go-toml's parser (keylines.go); the values
// from BurntSushi/toml. testdata/problems and testdata/bad hold the golden
// report of every broken config the tests load.
//
// Redirects (SPEC §11, redirect*.go): [normalize], [[redirect]] and
// [[redirect_table]] compile into one redirector; cfg.Redirect(req) is
// called per request, after the 400 checks, deny and headgate's own
// endpoints. Tables are read with internal/datafile and held in a byte
// arena with fixed-size rows and an open-addressing hash (redirTable), so
// a million rows cost about 100 bytes each and a lookup is a few memory
// reads. Chains among rows and static rules are collapsed at load, cycles
// are HG181; templated targets are followed per request up to 10 steps and
// fail open. A target's origin is fixed by its literal start, and
// parameters are percent-encoded per segment, so no request can move a
// Location off the configured hosts.
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
