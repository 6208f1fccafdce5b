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
// pointer. Nothing in this package knows about HTTP servers. The package
// holds no mutable state: the key schema is built per Parse (newSchema),
// and the one pool of Matches (PooledMatch, Release, the redirector's
// rule lookup) belongs to the Config.
//
// Layout. rules is the engine: Config, Load/Parse, Resolve → Match (the
// matching tree over every rule's pattern, the merge, the record of which
// rule or page_table row set each field: Match.SetBy), Render → Head. The
// pieces that need nothing of it are packages of their own, below it:
//
//	rules/schema   Problem/Problems (HG codes at file:line), key lines,
//	               key paths, did-you-mean: what every config area reports with
//	rules/pattern  path patterns (Parse, Fill, Bind), CheckPath, the deny
//	               forms, the one spelling of a path (EscapePath, RespellPath)
//	rules/datatable the compact in-memory table of §12 (arena, key index)
//	rules/redirect the compiled [[redirect_table]] store and request query
//	internal/pct   the one percent-encoder every package calls
//
// Each imports nothing of headgate's but internal/* (TestSubpackagesStandAlone).
//
// Inside rules, files go by area: load*.go and fields.go read the file
// ([server], [site], [sitemap], [[rule]], open_graph/twitter/json_ld);
// table.go and match.go resolve; render.go, head.go, template.go,
// filter.go, jsonld.go and tmplpage.go render; data*.go are the data
// tables of §12; redirect*.go the redirects of §11; crawl.go,
// aitraining.go robots.txt, llms.txt and IndexNow; cms.go query patterns.
//
// Where Part III's keys go (SPEC §18–§22). Each is a top-level table, so
// each is one more fields value declared in newSchema, read by its own
// file here until it earns a package under rules/ like pattern did:
//
//   - [bots] (§18, crawler identity): a bots_load.go beside crawl.go
//     reading the keys; the verified-crawler lists and matching are the
//     bots/ package's, which rules may call, never the other way round.
//   - [markdown] (§19): markdown.go, reading the keys into Config.Markdown;
//     a rule's own markdown switch is one more field of ruleFields.
//   - [watch] (§21, change alerts): watch.go, keys only; the watcher
//     runs outside rules.
//   - [[experiment]] (§21, split tests): experiment.go; its variants'
//     patterns compile with rules/pattern and resolve through the same
//     tree as [[rule]], so an experiment is a Match layer like a rule.
//   - content_signal (§18, robots.txt Content-Signal): already read by
//     crawl.go's contentSignalFields under [robots].
//
// Config keys: each table of the file is a schema.Fields value beside the
// code of its area (serverFields in load_site.go, ruleFields in
// load_rule.go, …), and each key is declared there once, with the function
// that reads it and, if it is required, the problem its absence is.
// schema.Decode reads a table with it: unknown keys (HG140 with a "did you
// mean"), the early fields in order, the rest in key order. newSchema
// (fields.go) lists every table, and TestDocsKeys checks
// docs/configuration.md against it. A new key is one more Field; a new
// table is one more Fields value, listed in newSchema. The line of each
// key comes from go-toml's parser (rules/schema); the values from
// BurntSushi/toml. testdata/problems and testdata/bad hold the golden
// report of every broken config the tests load.
//
// Redirects (SPEC §11, redirect*.go): [normalize], [[redirect]] and
// [[redirect_table]] compile into one redirector; cfg.Redirect(req) is
// called per request, after the 400 checks, deny and headgate's own
// endpoints. Tables are read with internal/datafile and held in a byte
// arena with fixed-size rows and an open-addressing hash (rules/redirect), so
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
