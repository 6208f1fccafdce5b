// Package schema owns what every area of the configuration shares to
// report on it: the Problem (an HG code, the file and line of a key, the
// key path, the message) and the Problems list Load returns as its error,
// the line of every key of a TOML document (KeyLines, read with go-toml's
// parser, since BurntSushi/toml keeps positions private), the spelling of
// a key path (Join: "rule[3].open_graph"), the "did you mean" of an
// unknown key (Suggest), and the decoding of a table from its declaration:
// a Fields value lists each key once (how it is read, whether it is
// required, its environment override), NewKeys gathers every table's keys
// and overrides, and Decode reads a table, reporting unknown and missing
// keys to a Reporter (the loader).
//
// Call order: the loader builds its Keys once per Parse (NewKeys), calls
// KeyLines once per document, Decodes each table, reports each problem at
// LineOf(lines, key) and sorts the list (Problems.Sort) before returning it.
//
// It imports nothing of headgate's: every rules/* package may use it.
//
// Security: KeyLines never fails and reads a document toml.Decode already
// accepted; a problem's Message quotes config values the operator wrote,
// never request data.
package schema
