// Package pattern owns request paths as headgate reads them: the path
// patterns of §2.2 (Parse: literal segments, :name, :name{regex}, a
// trailing *), filling a pattern with values (Pattern.Fill, for sitemap
// entries) and binding a path to one (Pattern.Bind), the one spelling of a
// path's percent-escapes (EscapePath, RespellPath, EscapeSegment, on
// internal/pct), an app's own spelling of its paths (Safe, from
// site.path_safe: SPEC §23), the check every request path passes first (CheckPath),
// and the other spellings of a path an upstream may resolve it to, which
// deny rules also see (DenyForms).
//
// It knows nothing of rules, templates or configuration: rules compiles
// each [[rule]]'s and [[redirect]]'s pattern here and walks their
// Segments in its own matching tree.
//
// Call order: Parse once per pattern at load; per request, CheckPath, then
// the caller's match, then DenyForms when the config has deny rules.
//
// Security: request paths are untrusted. CheckPath refuses dot segments
// (raw, percent-encoded, or separated by %2F, "\" or %5C, or with
// ";parameters"), NULs and invalid escapes before any rule is matched.
// Fill refuses a value that would make a dot segment or leave its
// segment, so a filled pattern always matches what it was filled from.
// A {regex} is Go's RE2: linear time, no backtracking.
package pattern
