package datafile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRead1M reads a generated table of 1,000,000 rows of four short
// columns, the size SPEC §11.2 and §12.3 set their load floors at (3 s for
// the whole load; reading is the part this package owns).
func BenchmarkRead1M(b *testing.B) {
	for _, format := range []string{"csv", "jsonl"} {
		b.Run(format, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "t."+format)
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriter(f)
			if format == "csv" {
				fmt.Fprintln(w, "from,to,status,note")
			}
			for i := range 1_000_000 {
				if format == "csv" {
					fmt.Fprintf(w, "/old/%d,/new/%d,301,n%d\n", i, i, i%7)
				} else {
					fmt.Fprintf(w, `{"from":"/old/%d","to":"/new/%d","status":"301","note":"n%d"}`+"\n", i, i, i%7)
				}
			}
			w.Flush()
			f.Close()
			fi, _ := os.Stat(p)
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				r, err := Open(p, Options{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				r.Close()
				if n != 1_000_000 {
					b.Fatalf("%d rows", n)
				}
			}
		})
	}
}
