package datafile

import (
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func write(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll returns the columns and every record as "line:v1|v2|…", or the
// error's text with the file's directory cut off.
func readAll(t testing.TB, path string, o Options) ([]string, []string, string) {
	t.Helper()
	r, err := Open(path, o)
	if err != nil {
		return nil, nil, strip(path, err)
	}
	defer r.Close()
	var rows []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return r.Columns(), rows, ""
		}
		if err != nil {
			return r.Columns(), rows, strip(path, err)
		}
		rows = append(rows, strconv.Itoa(rec.Line)+":"+strings.Join(rec.Values, "|"))
	}
}

func strip(path string, err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return "not an *Error: " + err.Error()
	}
	return strings.TrimPrefix(err.Error(), filepath.Dir(path)+"/")
}

// readCase is one table test of a reader: its input, and the columns and
// rows (line:values) or the error it gives.
type readCase struct {
	name, in string
	o        Options
	cols     []string
	rows     []string
	err      string
}

// run reads tc.in as a file named name.
func (tc readCase) run(t *testing.T, name string) {
	t.Run(tc.name, func(t *testing.T) {
		cols, rows, err := readAll(t, write(t, name, tc.in), tc.o)
		if err != tc.err {
			t.Fatalf("error %q, want %q", err, tc.err)
		}
		if tc.err != "" {
			return
		}
		if !reflect.DeepEqual(cols, tc.cols) || !reflect.DeepEqual(rows, tc.rows) {
			t.Errorf("got %q %q, want %q %q", cols, rows, tc.cols, tc.rows)
		}
	})
}

func TestCSV(t *testing.T) {
	for _, tc := range []readCase{
		{name: "plain", in: "from,to\n/a,/b\n/c,/d\n",
			cols: []string{"from", "to"}, rows: []string{"2:/a|/b", "3:/c|/d"}},
		{name: "BOM and CRLF, as a spreadsheet exports", in: "\xef\xbb\xbffrom,to\r\n/a,/b\r\n",
			cols: []string{"from", "to"}, rows: []string{"2:/a|/b"}},
		{name: "quoted commas, quotes and newlines keep their lines", in: "path,title\n/a,\"Tea, coffee\"\n/b,\"Two\nlines\"\n/c,\"say \"\"hi\"\"\"\n",
			cols: []string{"path", "title"}, rows: []string{"2:/a|Tea, coffee", "3:/b|Two\nlines", "5:/c|say \"hi\""}},
		{name: "no final newline", in: "a,b\n1,2",
			cols: []string{"a", "b"}, rows: []string{"2:1|2"}},
		{name: "header names are trimmed", in: " a , b\n1,2\n",
			cols: []string{"a", "b"}, rows: []string{"2:1|2"}},
		{name: "a ragged row names its line", in: "from,to\n/a,/b\n/c\n",
			err: "t.csv:3: this row has a different number of fields from the header row (2)"},
		{name: "a stray quote", in: "from,to\n/a,/b\"x\n",
			err: "t.csv:2: a quote is out of place: quote a field that holds a comma, a quote or a line break, and double the quotes inside it"},
		{name: "invalid UTF-8 in a cell", in: "from,to\n/a,/\xff\n",
			err: "t.csv:2: column \"to\" is not valid UTF-8"},
		{name: "a duplicate column", in: "from,from\n/a,/b\n",
			err: "t.csv:1: the header row names column \"from\" twice"},
		{name: "CR line ends", in: "from,to\r/a,/b\r/c,/d\r",
			err: "t.csv:1: the header row holds a line break: save the file with LF or CRLF line ends (a CR alone does not end a line)"},
		{name: "an unnamed column", in: "from,\n/a,/b\n",
			err: "t.csv:1: column 2 of the header row has no name"},
		{name: "empty", in: "",
			err: "t.csv: is empty: a CSV table starts with a header row"},
		{name: "known columns reorder", in: "to,from\n/b,/a\n", o: Options{Columns: []string{"from", "to", "status"}},
			cols: []string{"from", "to", "status"}, rows: []string{"2:/a|/b|"}},
		{name: "an unknown column", in: "from,to,note\n/a,/b,x\n", o: Options{Columns: []string{"from", "to"}},
			err: "t.csv:1: unknown column \"note\" (known: from, to)"},
		{name: "an unknown column ignored", in: "from,to,note\n/a,/b,x\n", o: Options{Columns: []string{"from", "to"}, IgnoreOther: true},
			cols: []string{"from", "to"}, rows: []string{"2:/a|/b"}},
	} {
		tc.run(t, "t.csv")
	}
}

func TestJSONLines(t *testing.T) {
	for _, tc := range []readCase{
		{name: "the first line names the columns", in: `{"from":"/a","to":"/b"}` + "\n" + `{"to":"/d","from":"/c"}` + "\n" + `{"from":"/e"}` + "\n",
			cols: []string{"from", "to"}, rows: []string{"1:/a|/b", "2:/c|/d", "3:/e|"}},
		{name: "escapes, numbers, booleans and null", in: `{"a":"caf\u00e9 \"x\"","b":301,"c":true,"d":null}`,
			cols: []string{"a", "b", "c", "d"}, rows: []string{"1:café \"x\"|301|true|"}},
		{name: "blank lines are skipped, lines still counted", in: "\n" + `{"a":"1"}` + "\n\n" + `{"a":"2"}` + "\r\n\n",
			cols: []string{"a"}, rows: []string{"2:1", "4:2"}},
		{name: "a BOM", in: "\xef\xbb\xbf" + `{"a":"1"}`, cols: []string{"a"}, rows: []string{"1:1"}},
		{name: "empty", in: "", cols: nil, rows: nil},
		{name: "a key the first line lacks", in: `{"a":"1"}` + "\n" + `{"a":"2","b":"3"}`,
			err: "t.jsonl:2: key \"b\" is not a column of this table (the first line names its columns: a)"},
		{name: "a nested object", in: `{"a":{"b":"c"}}`,
			err: "t.jsonl:1: the value of \"a\": nested objects and arrays are not table cells"},
		{name: "not an object", in: `["a"]`,
			err: "t.jsonl:1: a JSON Lines row is one JSON object per line"},
		{name: "two objects on a line", in: `{"a":"1"} {"a":"2"}`,
			err: "t.jsonl:1: text after the object: one object per line"},
		{name: "a duplicate key", in: `{"a":"1"}` + "\n" + `{"a":"2","a":"3"}`,
			err: "t.jsonl:2: key \"a\" appears twice"},
		{name: "a raw control character", in: "{\"a\":\"x\ty\"}",
			err: "t.jsonl:1: the value of \"a\": a control character in a string (escape it)"},
		{name: "invalid UTF-8", in: `{"a":"1"}` + "\n{\"a\":\"\xff\"}",
			err: "t.jsonl:2: the line is not valid UTF-8"},
		{name: "a bad literal", in: `{"a":nope}`,
			err: "t.jsonl:1: the value of \"a\": \"nope\" is not a JSON value"},
		{name: "a line over the bound", in: `{"a":"` + strings.Repeat("x", 100) + `"}`, o: Options{MaxLineBytes: 50},
			err: "t.jsonl:1: the line is over 50 bytes"},
		{name: "known columns", in: `{"to":"/b","from":"/a"}`, o: Options{Columns: []string{"from", "to", "status"}},
			cols: []string{"from", "to", "status"}, rows: []string{"1:/a|/b|"}},
		{name: "an unknown column with known ones", in: `{"from":"/a","x":"1"}`, o: Options{Columns: []string{"from"}},
			err: "t.jsonl:1: unknown column \"x\" (known: from)"},
	} {
		tc.run(t, "t.jsonl")
	}
}

func TestBounds(t *testing.T) {
	t.Run("a 2 GB file is refused before a byte is read", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "big.csv")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(2 << 30); err != nil { // sparse: no bytes written
			t.Fatal(err)
		}
		f.Close()
		_, err = Open(p, Options{})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v, want ErrTooLarge", err)
		}
		if want := "is 2147483648 bytes, over the limit of 536870912"; !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to say %q", err, want)
		}
	})
	t.Run("the bound holds while reading", func(t *testing.T) {
		in := "a,b\n" + strings.Repeat("1,2\n", 100)
		_, rows, err := readAll(t, write(t, "t.csv", in), Options{MaxBytes: 50})
		if !strings.Contains(err, "over the limit") {
			t.Fatalf("err = %q after %d rows, want the size limit", err, len(rows))
		}
	})
	t.Run("a file at the bound is read", func(t *testing.T) {
		in := "a,b\n1,2\n"
		_, rows, err := readAll(t, write(t, "t.csv", in), Options{MaxBytes: int64(len(in))})
		if err != "" || len(rows) != 1 {
			t.Fatalf("err %q rows %q", err, rows)
		}
	})
	t.Run("an error of the file sticks", func(t *testing.T) {
		// A line over the bound: where the next line starts is not known.
		r, err := Open(write(t, "t.jsonl", "{\"a\":\"1\"}\n{\"a\":\""+strings.Repeat("x", 100)+"\"}\n{\"a\":\"2\"}\n"), Options{MaxLineBytes: 50})
		if err != nil {
			t.Fatal(err)
		}
		var e1, e2 error
		for e1 == nil {
			_, e1 = r.Next()
		}
		_, e2 = r.Next()
		if e1 == nil || e1 != e2 || RowError(e1) {
			t.Fatalf("errors %v then %v", e1, e2)
		}
	})
	t.Run("an error of a row does not", func(t *testing.T) {
		for _, c := range []struct{ name, in, next string }{
			{"t.csv", "a,b\n\"x\"y,1\nz,2\n", "z"},
			{"t.csv", "a,b\n1\nz,2\n", "z"},
			{"t.csv", "a,b\n\xff,1\nz,2\n", "z"},
			{"t.jsonl", "{\"a\":\"1\"}\nnot json\n{\"a\":\"z\"}\n", "z"},
			{"t.jsonl", "{\"a\":\"1\"}\n{\"a\":\"2\",\"a\":\"3\"}\n{\"a\":\"z\"}\n", "z"},
			{"t.jsonl", "{\"a\":\"1\"}\n{\"b\":\"2\"}\n{\"a\":\"z\"}\n", "z"},
			{"t.csv", "a\n\"x\n", ""}, // an unclosed quote reads to the end
		} {
			r, err := Open(write(t, c.name, c.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var e1 error
			for e1 == nil {
				_, e1 = r.Next()
			}
			rec, e2 := r.Next()
			if !RowError(e1) {
				t.Errorf("%q: %v is not a row's error", c.in, e1)
			}
			if c.next == "" {
				if e2 != io.EOF {
					t.Errorf("%q: after the row, %v, want EOF", c.in, e2)
				}
				continue
			}
			if e2 != nil || rec.Values[0] != c.next {
				t.Errorf("%q: after the row, %q %v, want the row %q", c.in, rec.Values, e2, c.next)
			}
		}
	})
	t.Run("unknown format and missing file", func(t *testing.T) {
		if _, err := Open(write(t, "t.xlsx", "x"), Options{}); err == nil || !strings.Contains(err.Error(), "name it .csv") {
			t.Errorf("xlsx: %v", err)
		}
		if _, err := Open(filepath.Join(t.TempDir(), "none.csv"), Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("missing: %v", err)
		}
	})
}

func TestSum(t *testing.T) {
	in := "\xef\xbb\xbffrom,to\r\n/a,/b\r\n"
	r, err := Open(write(t, "t.csv", in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	want := sha256.Sum256([]byte(in))
	if got := r.Sum(); string(got) != string(want[:]) {
		t.Errorf("Sum is not the SHA-256 of the file's bytes")
	}
}
