// Package datafile reads the data tables a config names (redirect tables,
// lookup tables, page tables, hreflang tables): CSV with a header row, or
// JSON Lines of flat objects, streamed record by record.
//
// Call order: Open, then Columns, then Next until io.EOF, then Sum (the
// SHA-256 of every byte read, for the config's hash and the reload
// watcher), then Close. A Record's Values alias the reader's buffers and
// are valid until the next call to Next: copy what you keep.
//
// Every problem is an *Error naming the file and the line it was found on
// (the line of the record's first byte, counted from 1; 0 for the file as
// a whole), so that a caller can report it as a config problem. A reader
// never yields a record past an error: a table that fails to load is
// refused whole by its caller, never served half-loaded.
//
// Security notes: the bytes are the operator's, but often exported from a
// spreadsheet that others edit. The reader bounds what it reads
// (Options.MaxBytes, the whole file; MaxLineBytes, one JSON line), refuses
// invalid UTF-8, and leaves every value's meaning to the caller, which
// validates and escapes it for where it goes.
package datafile
