package datafile

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzJSONLines checks the flat-object parser against encoding/json: a line
// it accepts is a JSON object whose string values it read the same, and it
// never panics or hangs on any bytes.
func FuzzJSONLines(f *testing.F) {
	for _, s := range []string{`{"a":"1"}`, `{"a":"caf\u00e9","b":301,"c":null}`, `{"a":"\"x\\y"}`, `{}`, `{"a":[1]}`, "{\"a\":\"\xff\"}", `{"a":1e5,"b":-0.5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) {
			return // the reader refuses such a line before parsing it
		}
		pairs, err := parseFlat(nil, line)
		if err != nil {
			return
		}
		var m map[string]any
		if jerr := json.Unmarshal(line, &m); jerr != nil {
			t.Fatalf("parseFlat accepted %q, encoding/json says %v", line, jerr)
		}
		for _, kv := range pairs {
			v, ok := m[string(kv[0])]
			if !ok {
				t.Fatalf("%q: key %q not in encoding/json's reading", line, kv[0])
			}
			if s, isStr := v.(string); isStr && s != string(kv[1]) && utf8.Valid(kv[1]) {
				// Duplicate keys: encoding/json keeps the last.
				last := ""
				for _, kv2 := range pairs {
					if string(kv2[0]) == string(kv[0]) {
						last = string(kv2[1])
					}
				}
				if last != s {
					t.Fatalf("%q: key %q = %q, encoding/json reads %q", line, kv[0], kv[1], s)
				}
			}
		}
	})
}

// FuzzOpen reads arbitrary bytes as either format: an *Error or io.EOF,
// never a panic, never a record after an error of the file, and after an
// error of one row the next rows.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("from,to\n/a,/b\n"), true)
	f.Add([]byte("\xef\xbb\xbfa,\"b\nc\"\r\n1,2\r\n"), true)
	f.Add([]byte(`{"a":"1"}`+"\n"+`{"a":"2"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, csv bool) {
		name := "t.jsonl"
		if csv {
			name = "t.csv"
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p, Options{MaxBytes: 1 << 16})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Open: %T %v", err, err)
			}
			return
		}
		defer r.Close()
		for i := 0; ; i++ {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("Next: %T %v", err, err)
				}
				if RowError(err) {
					// One row's problem: the reader goes on, and gets on.
					if i > len(data)+2 {
						t.Fatalf("row errors without end: %v", err)
					}
					continue
				}
				if _, again := r.Next(); again != err {
					t.Fatal("a record after an error of the file")
				}
				return
			}
			if len(rec.Values) != len(r.Columns()) || rec.Line < 1 {
				t.Fatalf("record %+v with columns %q", rec, r.Columns())
			}
			for _, v := range rec.Values {
				if !utf8.ValidString(v) {
					t.Fatalf("invalid UTF-8 value %q", v)
				}
			}
		}
	})
}
