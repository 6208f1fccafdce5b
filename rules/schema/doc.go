// Package schema owns what every area of the configuration shares to
// report on it: the Problem (an HG code, the file and line of a key, the
// key path, the message) and the Problems list Load returns as its error,
// the line of every key of a TOML document (KeyLines, read with go-toml's
// parser, since BurntSushi/toml keeps positions private), the spelling of
// a key path (Join: "rule[3].open_graph") and the "did you mean" of an
// unknown key (Suggest).
//
// Call order: the loader calls KeyLines once per document, then reports
// each problem at LineOf(lines, key) and sorts the list (Problems.Sort)
// before returning it.
//
// It imports nothing of headgate's: every rules/* package may use it.
//
// Security: KeyLines never fails and reads a document toml.Decode already
// accepted; a problem's Message quotes config values the operator wrote,
// never request data.
package schema
