// Package datatable owns the in-memory form of a data table (SPEC §12):
// a Table holds every cell of a [[table]], [[page_table]] or
// [[hreflang_table]] file in one string arena, with an open-addressing
// index of its key column, so that a million rows cost a few allocations
// and a lookup is one hash and a probe or two.
//
// Call order: the loader (rules/dataload.go) sets a Table's columns and
// Key, fills it through NewBuilder and Builder.Add row by row from
// internal/datafile's reader, and calls Builder.Finish once, which builds
// the index and returns the duplicate keys for the loader to report. The
// Table is then read-only: Find, Cell, Column, Line, safe for concurrent
// use.
//
// Which columns a table has and what its cells mean (a page_table's robots
// cell, an hreflang group) is rules' business, not this package's.
//
// Security: cells are operator data copied into the arena as read; a
// Builder refuses nothing itself, and TooLarge says when the arena reaches
// what its 32-bit offsets address, so the loader stops (HG176) instead of
// wrapping.
package datatable
