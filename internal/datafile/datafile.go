package datafile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format is a file's syntax.
type Format int

// The formats.
const (
	// Auto picks the format from the file name: .csv is CSV; .jsonl,
	// .ndjson and .json are JSON Lines.
	Auto Format = iota
	CSV
	JSONLines
)

// Options configures a Reader. The zero value works.
type Options struct {
	// Format of the file; Auto (the default) goes by its extension.
	Format Format
	// Columns, when set, are the columns the caller knows, in the order a
	// Record's Values give them; a file column (a CSV header name or a JSON
	// key) that is not one of them is an *Error with Column set, unless
	// IgnoreOther. When nil, the columns are the CSV header, or the keys of
	// the first JSON line in their order (a later line with another key is
	// an error: a JSON Lines table declares its columns on its first line).
	Columns []string
	// IgnoreOther skips file columns that are not in Columns.
	IgnoreOther bool
	// MaxBytes bounds the file; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxLineBytes bounds one JSON line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

// The default bounds.
const (
	DefaultMaxBytes     = 512 << 20 // 512 MiB: several million rows of short columns
	DefaultMaxLineBytes = 1 << 20   // 1 MiB
)

// Record is one row. Values are aligned with Reader.Columns (an absent
// cell is ""); they are valid until the next call to Next.
type Record struct {
	Line   int
	Values []string
}

// Error is a problem with a file, at a line (0: the file as a whole).
type Error struct {
	File   string
	Line   int
	Column string // the column concerned, when there is one
	Msg    string
	Err    error // the underlying error, when there is one
	// Row says the problem is one row's: Next can be called again and
	// goes on with the next row, so that a caller can report every bad
	// row of a file in one run. Any other error ends the file.
	Row bool
}

// RowError reports whether err is a problem of one row only (Error.Row).
func RowError(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Row
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrTooLarge is wrapped by the Error of a file over Options.MaxBytes.
var ErrTooLarge = errors.New("file too large")

// Reader reads one data file.
type Reader struct {
	name    string
	f       *os.File
	counter *countingReader
	sum     hash.Hash
	cols    []string
	known   bool // columns come from Options.Columns

	// CSV
	csv    *csv.Reader
	csvMap []int // file column → index into cols, or -1

	// JSON Lines
	br          *bufio.Reader
	maxLine     int
	line        int // lines read so far
	jsonBuf     []byte
	index       map[string]int
	pending     *pendingLine // the first JSON line, read by Open to learn the columns
	ignoreOther bool
	pairs       [][2][]byte // reused by each line

	values []string
	err    error // sticky
}

type pendingLine struct {
	line int
	vals []string
}

// Open opens the file at name and reads what it needs to know its columns
// (a CSV header; the first JSON line).
func Open(name string, o Options) (*Reader, error) {
	format := o.Format
	if format == Auto {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".csv":
			format = CSV
		case ".jsonl", ".ndjson", ".json":
			format = JSONLines
		default:
			return nil, &Error{File: name, Msg: "unknown format: name it .csv (with a header row) or .jsonl (JSON Lines)"}
		}
	}
	max := o.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	// A FIFO or device named as a table would block the open or never
	// end: only a regular file is read (looked at before it is opened).
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &Error{File: name, Msg: "is not a regular file"}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &Error{File: name, Msg: "cannot be read: " + pathErr(err), Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &Error{File: name, Msg: "cannot be read: " + pathErr(err), Err: err}
	}
	if fi.IsDir() {
		f.Close()
		return nil, &Error{File: name, Msg: "is a directory, not a table"}
	}
	if fi.Size() > max {
		f.Close()
		return nil, &Error{File: name, Msg: fmt.Sprintf("is %d bytes, over the limit of %d", fi.Size(), max), Err: ErrTooLarge}
	}
	r := &Reader{name: name, f: f, sum: sha256.New()}
	r.counter = &countingReader{r: io.TeeReader(f, r.sum), left: max, name: name}
	src := skipBOM(bufio.NewReaderSize(r.counter, 64<<10))
	if o.Columns != nil {
		r.cols = append([]string(nil), o.Columns...)
		r.known = true
	}
	switch format {
	case CSV:
		err = r.openCSV(src, o)
	case JSONLines:
		r.maxLine = o.MaxLineBytes
		if r.maxLine <= 0 {
			r.maxLine = DefaultMaxLineBytes
		}
		r.br = src
		err = r.openJSON(o)
	default:
		err = &Error{File: name, Msg: "unknown format"}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// skipBOM drops a UTF-8 byte order mark, as spreadsheets write one.
func skipBOM(br *bufio.Reader) *bufio.Reader {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	return br
}

// Columns returns the table's columns, the order of every Record's Values.
func (r *Reader) Columns() []string { return r.cols }

// Sum returns the SHA-256 of the bytes read so far: of the whole file once
// Next has returned io.EOF.
func (r *Reader) Sum() []byte { return r.sum.Sum(nil) }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Next returns the next record, or io.EOF after the last one. Any other
// error is an *Error, and every later call returns it again.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	var rec Record
	var err error
	if r.csv != nil {
		rec, err = r.nextCSV()
	} else {
		rec, err = r.nextJSON()
	}
	if err != nil {
		if err == io.EOF && r.counter.over {
			err = r.tooLarge()
		}
		if !RowError(err) {
			r.err = err
		}
	}
	return rec, err
}

func (r *Reader) tooLarge() error {
	return &Error{File: r.name, Msg: "is over the size limit", Err: ErrTooLarge}
}

// ---- CSV ----

func (r *Reader) openCSV(src io.Reader, o Options) error {
	c := csv.NewReader(src)
	c.ReuseRecord = true
	c.FieldsPerRecord = 0 // every row as many fields as the header
	r.csv = c
	header, err := c.Read()
	if err == io.EOF {
		if r.counter.over {
			return r.tooLarge()
		}
		return &Error{File: r.name, Msg: "is empty: a CSV table starts with a header row"}
	}
	if err != nil {
		return r.csvErr(err)
	}
	r.csvMap = make([]int, len(header))
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		switch {
		case !utf8.ValidString(h):
			return &Error{File: r.name, Line: 1, Msg: "the header row is not valid UTF-8"}
		case strings.ContainsAny(h, "\r\n"):
			// A CSV reader ends lines at LF (and CRLF) only: a file saved
			// with CR line ends (old Mac spreadsheets) is one long line.
			return &Error{File: r.name, Line: 1, Msg: "the header row holds a line break: save the file with LF or CRLF line ends (a CR alone does not end a line)"}
		case h == "":
			return &Error{File: r.name, Line: 1, Msg: fmt.Sprintf("column %d of the header row has no name", i+1)}
		case seen[h]:
			return &Error{File: r.name, Line: 1, Column: h, Msg: fmt.Sprintf("the header row names column %q twice", h)}
		}
		seen[h] = true
		if !r.known {
			r.cols = append(r.cols, h)
			r.csvMap[i] = i
			continue
		}
		r.csvMap[i] = indexOf(r.cols, h)
		if r.csvMap[i] < 0 && !o.IgnoreOther {
			return &Error{File: r.name, Line: 1, Column: h, Msg: fmt.Sprintf("unknown column %q (known: %s)", h, strings.Join(r.cols, ", "))}
		}
	}
	r.values = make([]string, len(r.cols))
	return nil
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func (r *Reader) nextCSV() (Record, error) {
	fields, err := r.csv.Read()
	if err != nil {
		if err == io.EOF {
			return Record{}, io.EOF
		}
		return Record{}, r.csvErr(err)
	}
	line, _ := r.csv.FieldPos(0)
	for i := range r.values {
		r.values[i] = ""
	}
	for i, v := range fields {
		j := r.csvMap[i]
		if j < 0 {
			continue
		}
		if !utf8.ValidString(v) {
			return Record{}, &Error{File: r.name, Line: line, Column: r.cols[j], Msg: fmt.Sprintf("column %q is not valid UTF-8", r.cols[j]), Row: true}
		}
		r.values[j] = v
	}
	return Record{Line: line, Values: r.values}, nil
}

func (r *Reader) csvErr(err error) error {
	if r.counter.over {
		return r.tooLarge()
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		switch {
		case errors.Is(pe.Err, csv.ErrFieldCount):
			msg = fmt.Sprintf("this row has a different number of fields from the header row (%d)", len(r.csvMap))
		case errors.Is(pe.Err, csv.ErrQuote), errors.Is(pe.Err, csv.ErrBareQuote):
			msg = "a quote is out of place: quote a field that holds a comma, a quote or a line break, and double the quotes inside it"
		}
		// csv.Reader goes on at the next line after a parse error (an
		// unclosed quote reads to the end of the file first).
		return &Error{File: r.name, Line: pe.StartLine, Msg: msg, Err: err, Row: true}
	}
	return &Error{File: r.name, Msg: "cannot be read: " + err.Error(), Err: err}
}

// ---- JSON Lines ----

func (r *Reader) openJSON(o Options) error {
	r.index = map[string]int{}
	for i, c := range r.cols {
		r.index[c] = i
	}
	if r.known {
		r.values = make([]string, len(r.cols))
		r.ignoreOther = o.IgnoreOther
		return nil
	}
	// The first object declares the columns.
	line, raw, err := r.readLine()
	if err == io.EOF {
		return nil // an empty table: no columns, no rows
	}
	if err != nil {
		return err
	}
	pairs, err := parseFlat(nil, raw)
	if err != nil {
		return &Error{File: r.name, Line: line, Msg: err.Error()}
	}
	vals := make([]string, 0, len(pairs))
	for _, kv := range pairs {
		k := string(kv[0])
		if _, dup := r.index[k]; dup {
			return &Error{File: r.name, Line: line, Column: k, Msg: fmt.Sprintf("key %q appears twice", k)}
		}
		r.index[k] = len(r.cols)
		r.cols = append(r.cols, k)
		vals = append(vals, string(kv[1]))
	}
	r.values = make([]string, len(r.cols))
	r.pending = &pendingLine{line: line, vals: vals}
	return nil
}

// readLine returns the next non-blank line and its number.
func (r *Reader) readLine() (int, []byte, error) {
	for {
		r.jsonBuf = r.jsonBuf[:0]
		for {
			chunk, err := r.br.ReadSlice('\n')
			r.jsonBuf = append(r.jsonBuf, chunk...)
			if len(r.jsonBuf) > r.maxLine {
				return r.line + 1, nil, &Error{File: r.name, Line: r.line + 1, Msg: fmt.Sprintf("the line is over %d bytes", r.maxLine)}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				if r.counter.over {
					return 0, nil, r.tooLarge()
				}
				return 0, nil, &Error{File: r.name, Line: r.line + 1, Msg: "cannot be read: " + err.Error(), Err: err}
			}
			if err == io.EOF && len(r.jsonBuf) == 0 {
				return 0, nil, io.EOF
			}
			break
		}
		r.line++
		b := bytes.TrimSpace(r.jsonBuf)
		if len(b) == 0 {
			continue // a blank line, as editors leave at the end
		}
		if !utf8.Valid(b) {
			return r.line, nil, &Error{File: r.name, Line: r.line, Msg: "the line is not valid UTF-8", Row: true}
		}
		return r.line, b, nil
	}
}

func (r *Reader) nextJSON() (Record, error) {
	for i := range r.values {
		r.values[i] = ""
	}
	if p := r.pending; p != nil {
		r.pending = nil
		copy(r.values, p.vals)
		return Record{Line: p.line, Values: r.values}, nil
	}
	line, raw, err := r.readLine()
	if err != nil {
		return Record{}, err
	}
	r.pairs, err = parseFlat(r.pairs[:0], raw)
	if err != nil {
		return Record{}, &Error{File: r.name, Line: line, Msg: err.Error(), Row: true}
	}
	seen := uint64(0)
	for _, kv := range r.pairs {
		j, ok := r.index[string(kv[0])]
		if !ok {
			if r.ignoreOther {
				continue
			}
			k := string(kv[0])
			msg := fmt.Sprintf("key %q is not a column of this table (the first line names its columns: %s)", k, strings.Join(r.cols, ", "))
			if r.known {
				msg = fmt.Sprintf("unknown column %q (known: %s)", k, strings.Join(r.cols, ", "))
			}
			return Record{}, &Error{File: r.name, Line: line, Column: k, Msg: msg, Row: true}
		}
		if j < 64 {
			if seen&(1<<j) != 0 {
				return Record{}, &Error{File: r.name, Line: line, Column: r.cols[j], Msg: fmt.Sprintf("key %q appears twice", r.cols[j]), Row: true}
			}
			seen |= 1 << j
		}
		r.values[j] = string(kv[1])
	}
	return Record{Line: line, Values: r.values}, nil
}

// parseFlat parses one JSON object whose values are strings (numbers,
// booleans and null are taken as their text; null as ""), appending its
// pairs in order to dst. The slices alias b unless a string had escapes.
// Nested objects and arrays are refused.
func parseFlat(dst [][2][]byte, b []byte) ([][2][]byte, error) {
	p := flatParser{b: b}
	p.space()
	if !p.byte('{') {
		return nil, errors.New("a JSON Lines row is one JSON object per line")
	}
	p.space()
	if p.byte('}') {
		return dst, p.end()
	}
	for {
		p.space()
		k, err := p.str()
		if err != nil {
			return nil, fmt.Errorf("a key: %w", err)
		}
		p.space()
		if !p.byte(':') {
			return nil, fmt.Errorf("after key %q: want ':'", k)
		}
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("the value of %q: %w", k, err)
		}
		dst = append(dst, [2][]byte{k, v})
		p.space()
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return dst, p.end()
		}
		return nil, fmt.Errorf("after the value of %q: want ',' or '}'", k)
	}
}

type flatParser struct {
	b []byte
	i int
}

func (p *flatParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r' || p.b[p.i] == '\n') {
		p.i++
	}
}

func (p *flatParser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *flatParser) end() error {
	p.space()
	if p.i != len(p.b) {
		return errors.New("text after the object: one object per line")
	}
	return nil
}

func (p *flatParser) str() ([]byte, error) {
	if !p.byte('"') {
		return nil, errors.New("want a string")
	}
	start := p.i
	plain := true
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if plain {
				return s, nil
			}
			var out string
			if err := json.Unmarshal(p.b[start-1:p.i], &out); err != nil {
				return nil, errors.New("a string with a bad escape")
			}
			return []byte(out), nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return nil, errors.New("a control character in a string (escape it)")
		default:
			p.i++
		}
	}
	return nil, errors.New("a string that does not end")
}

func (p *flatParser) value() ([]byte, error) {
	if p.i >= len(p.b) {
		return nil, errors.New("missing")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.str()
	case c == '{' || c == '[':
		return nil, errors.New("nested objects and arrays are not table cells")
	default:
		start := p.i
		for p.i < len(p.b) && !strings.ContainsRune(",} \t\r\n", rune(p.b[p.i])) {
			p.i++
		}
		lit := p.b[start:p.i]
		switch string(lit) {
		case "null":
			return nil, nil
		case "true", "false":
			return lit, nil
		}
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil || !json.Valid(lit) {
			return nil, fmt.Errorf("%q is not a JSON value", lit)
		}
		return lit, nil
	}
}

// countingReader stops reading past a limit, so that a file that grows
// while it is read (or a special file) is bounded too.
type countingReader struct {
	r    io.Reader
	left int64
	over bool
	name string
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more than the limit tells a file at the limit from one
		// past it.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
