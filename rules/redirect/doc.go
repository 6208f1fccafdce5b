// Package redirect owns the compiled form of a [[redirect_table]] (SPEC
// §11.2): a Table built to hold a million rows in little memory and to
// answer a request in constant time with two dependent memory reads, and
// the request's Query, decoded only when some row of the path has query
// pairs.
//
// Call order: the loader (rules/redirect_load.go) reads the file with
// internal/datafile and Reserves and Adds each checked row; rules then
// collapses chains across tables and [[redirect]] rules, reading rows with
// Row and FromPath and writing each final target with SetTarget; Finish
// lays the table out for serving and drops the build structures. From then
// on the Table is read-only and safe for concurrent use: per request,
// Lookup(path, &Query{Raw: q}) and Row.
//
// What a row's target means — normalization, templates, following a
// chain, the Location written — is rules', which owns the [[redirect]],
// [[redirect_table]] and [normalize] keys (redirect*.go there); only the
// table moved here so far.
//
// Security: keys and targets are operator data, checked by the loader
// before Add. Lookup reads at most 64 query pairs of a request (maxProbes)
// and MaxFileBytes bounds a table's file; a stored Location is written
// whole, never built from request bytes.
package redirect
