package insight

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// Space-Saving's promise: a path seen more than n/k times is in the
// sketch, and no count is below the truth or above it by more than err.
func TestSketchFindsHeavyHitters(t *testing.T) {
	const k, n = 32, 100000
	s := newSketch(k)
	truth := map[string]uint64{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		var p string
		switch x := r.IntN(100); {
		case x < 20:
			p = "/"
		case x < 30:
			p = "/sitemap.xml"
		case x < 35:
			p = fmt.Sprintf("/hot/%d", r.IntN(3))
		default:
			p = fmt.Sprintf("/tail/%d", r.IntN(50000)) // the long tail
		}
		truth[p]++
		s.add(p)
	}
	got := sortPaths(s.appendTo(nil, map[string]int{}), k)
	in := map[string]PathCount{}
	var sum uint64
	for _, p := range got {
		in[p.Path] = p
		sum += p.Count
		if p.Count < truth[p.Path] || p.Count-p.Error > truth[p.Path] {
			t.Errorf("%s: count %d err %d, truth %d", p.Path, p.Count, p.Error, truth[p.Path])
		}
	}
	if sum != n {
		t.Errorf("counts sum to %d, want %d", sum, n)
	}
	for p, c := range truth {
		if c > n/k {
			if _, ok := in[p]; !ok {
				t.Errorf("%s seen %d times (> n/k = %d) is not in the sketch", p, c, n/k)
			}
		}
	}
	if got[0].Path != "/" || got[1].Path != "/sitemap.xml" {
		t.Errorf("top two %v", got[:2])
	}
}

func TestSketchTruncates(t *testing.T) {
	s := newSketch(4)
	long := "/" + strings.Repeat("é", 300) // two bytes a rune: the cut falls mid-rune
	s.add(long)
	s.add(long[:300])
	got := s.appendTo(nil, map[string]int{})
	if len(got) != 1 || len(got[0].Path) > MaxPathBytes || !utf8.ValidString(got[0].Path) || got[0].Count != 2 {
		t.Errorf("got %d entries, first %d bytes, valid %v, count %d", len(got), len(got[0].Path), utf8.ValidString(got[0].Path), got[0].Count)
	}
}

func TestSketchDoesNotAllocate(t *testing.T) {
	s := newSketch(32)
	paths := make([]string, 100)
	for i := range paths {
		paths[i] = fmt.Sprintf("/p/%d", i)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() { s.add(paths[i%len(paths)]); i++ }); n != 0 {
		t.Errorf("%v allocations per add", n)
	}
}
