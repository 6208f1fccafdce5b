package rules

// A stand-in for internal/datafile (being written by the lead), with the
// API it will have: replaced by it when it lands.

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

type dataError struct {
	File string
	Line int
	Msg  string
}

func (e *dataError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

type dataRecord struct {
	Line   int
	Values []string
}

type dataReader struct {
	name    string
	f       *os.File
	h       hash.Hash
	csv     *csv.Reader
	sc      *bufio.Scanner
	cols    []string
	line    int
	rec     dataRecord
	pending map[string]string
}

func openData(name string, limit int64) (*dataReader, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, &dataError{File: name, Msg: err.Error()}
	}
	if !st.Mode().IsRegular() {
		return nil, &dataError{File: name, Msg: "not a regular file"}
	}
	if st.Size() > limit {
		return nil, &dataError{File: name, Msg: fmt.Sprintf("%d bytes, larger than the %d a table may hold", st.Size(), limit)}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &dataError{File: name, Msg: err.Error()}
	}
	r := &dataReader{name: name, f: f, h: sha256.New()}
	br := bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, limit), r.h), 64<<10)
	if b, _ := br.Peek(3); string(b) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	if strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".ndjson") {
		r.sc = bufio.NewScanner(br)
		r.sc.Buffer(make([]byte, 64<<10), 1<<20)
		if err := r.jsonHeader(); err != nil {
			f.Close()
			return nil, err
		}
		return r, nil
	}
	r.csv = csv.NewReader(br)
	r.csv.ReuseRecord = true
	hdr, err := r.csv.Read()
	if err != nil {
		f.Close()
		return nil, r.csvErr(err)
	}
	r.cols = append([]string(nil), hdr...)
	for i, c := range r.cols {
		r.cols[i] = strings.TrimSpace(c)
	}
	return r, nil
}

func (r *dataReader) csvErr(err error) error {
	if err == io.EOF {
		return &dataError{File: r.name, Line: 1, Msg: "no header row"}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &dataError{File: r.name, Line: pe.StartLine, Msg: pe.Err.Error()}
	}
	return &dataError{File: r.name, Msg: err.Error()}
}

func (r *dataReader) jsonHeader() error {
	// Columns: the keys of the first object, sorted.
	for r.sc.Scan() {
		r.line++
		if strings.TrimSpace(r.sc.Text()) == "" {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal(r.sc.Bytes(), &m); err != nil {
			return &dataError{File: r.name, Line: r.line, Msg: "not a JSON object of strings"}
		}
		for k := range m {
			r.cols = append(r.cols, k)
		}
		sort.Strings(r.cols)
		r.pending = m
		return nil
	}
	return &dataError{File: r.name, Line: 1, Msg: "no rows"}
}

func (r *dataReader) Columns() []string { return r.cols }
func (r *dataReader) Sum() []byte       { return r.h.Sum(nil) }
func (r *dataReader) Close() error      { return r.f.Close() }

func (r *dataReader) Next() (dataRecord, error) {
	if r.sc != nil {
		return r.nextJSON()
	}
	rec, err := r.csv.Read()
	if err != nil {
		if err == io.EOF {
			return dataRecord{}, io.EOF
		}
		return dataRecord{}, r.csvErr(err)
	}
	line, _ := r.csv.FieldPos(0)
	for _, v := range rec {
		if !utf8.ValidString(v) {
			return dataRecord{}, &dataError{File: r.name, Line: line, Msg: "invalid UTF-8"}
		}
	}
	return dataRecord{Line: line, Values: rec}, nil
}

func (r *dataReader) nextJSON() (dataRecord, error) {
	var m map[string]string
	if r.pending != nil {
		m, r.pending = r.pending, nil
	} else {
		for {
			if !r.sc.Scan() {
				if err := r.sc.Err(); err != nil {
					return dataRecord{}, &dataError{File: r.name, Line: r.line + 1, Msg: err.Error()}
				}
				return dataRecord{}, io.EOF
			}
			r.line++
			if strings.TrimSpace(r.sc.Text()) != "" {
				break
			}
		}
		if !utf8.Valid(r.sc.Bytes()) {
			return dataRecord{}, &dataError{File: r.name, Line: r.line, Msg: "invalid UTF-8"}
		}
		if err := json.Unmarshal(r.sc.Bytes(), &m); err != nil {
			return dataRecord{}, &dataError{File: r.name, Line: r.line, Msg: "not a JSON object of strings"}
		}
	}
	vals := r.rec.Values[:0]
	for _, c := range r.cols {
		vals = append(vals, m[c])
	}
	r.rec = dataRecord{Line: r.line, Values: vals}
	return r.rec, nil
}
