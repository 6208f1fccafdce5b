package rules

import (
	"hash/maphash"
	"strings"

	"github.com/headgate/headgate/internal/pct"
)

// dataTable holds the rows of one data table (§12) compactly: every cell
// in one string arena, the cells' offsets in one slice, and an
// open-addressing index of the key column. A million rows cost a few
// allocations, not a map per row, and a lookup is one hash and a probe or
// two whatever the table's size.
type dataTable struct {
	kind string // "table", "page_table" or "hreflang_table"
	name string // [[table]] name; "" for the other kinds
	file string // as the loader opened it, for file:line
	cols []string
	key  int // the indexed column

	arena string
	offs  []uint32 // cell c of row r: arena[offs[r*n+c]:offs[r*n+c+1]]
	lines []uint32 // each row's line in the file
	index []uint32 // row+1, 0 for an empty slot; len is a power of two
	seed  maphash.Seed
}

// rows is the number of rows.
func (t *dataTable) rows() int { return len(t.lines) }

// cell returns a cell of a row.
func (t *dataTable) cell(row, col int) string {
	i := row*len(t.cols) + col
	return t.arena[t.offs[i]:t.offs[i+1]]
}

// column returns the index of a column, or -1.
func (t *dataTable) column(name string) int {
	for i, c := range t.cols {
		if c == name {
			return i
		}
	}
	return -1
}

// find returns the row whose key cell equals key, or -1.
func (t *dataTable) find(key string) int {
	if len(t.index) == 0 {
		return -1
	}
	mask := uint64(len(t.index) - 1)
	for i := maphash.String(t.seed, key) & mask; ; i = (i + 1) & mask {
		r := t.index[i]
		if r == 0 {
			return -1
		}
		if t.cell(int(r-1), t.key) == key {
			return int(r - 1)
		}
	}
}

// tableBuilder collects rows. Cells are copied into the arena, so the
// reader's buffers may be reused.
type tableBuilder struct {
	t     *dataTable
	arena strings.Builder
	offs  []uint32
}

func newTableBuilder(t *dataTable, sizeHint int64) *tableBuilder {
	b := &tableBuilder{t: t}
	if sizeHint > 0 && sizeHint < 1<<31 {
		b.arena.Grow(int(sizeHint))
	}
	b.offs = append(b.offs, 0)
	return b
}

// add appends a row; cells beyond the columns are ignored.
func (b *tableBuilder) add(line int, cells []string) {
	for i := range b.t.cols {
		if i < len(cells) {
			b.arena.WriteString(cells[i])
		}
		b.offs = append(b.offs, uint32(b.arena.Len()))
	}
	b.t.lines = append(b.t.lines, uint32(line))
}

// tooLarge reports whether the arena reached what offsets can address.
func (b *tableBuilder) tooLarge() bool { return b.arena.Len() > 1<<32-1<<20 }

// finish builds the index and returns the duplicates of the key column as
// pairs of rows (first, again).
func (b *tableBuilder) finish() [][2]int {
	t := b.t
	t.arena = b.arena.String()
	t.offs = append([]uint32(nil), b.offs...) // exact size: the slack of append is not kept
	t.lines = append([]uint32(nil), t.lines...)
	b.offs = nil
	n := 2
	for n < 2*t.rows() {
		n <<= 1
	}
	t.index = make([]uint32, n)
	t.seed = maphash.MakeSeed()
	mask := uint64(n - 1)
	var dups [][2]int
	for r := 0; r < t.rows(); r++ {
		k := t.cell(r, t.key)
		for i := maphash.String(t.seed, k) & mask; ; i = (i + 1) & mask {
			x := t.index[i]
			if x == 0 {
				t.index[i] = uint32(r + 1)
				break
			}
			if t.cell(int(x-1), t.key) == k {
				dups = append(dups, [2]int{int(x - 1), r})
				break
			}
		}
	}
	return dups
}

// normPath spells a path as §11.2 compares it: percent-escapes with
// upper-case hex. It allocates only for a path with a lower-case escape.
func normPath(p string) string { return pct.CanonHex(p) }
