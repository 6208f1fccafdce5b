package datatable

import (
	"hash/maphash"
	"strings"
)

// Table holds the rows of one data table (§12) compactly: every cell
// in one string arena, the cells' offsets in one slice, and an
// open-addressing index of the key column. A million rows cost a few
// allocations, not a map per row, and a lookup is one hash and a probe or
// two whatever the table's size.
type Table struct {
	Kind string // "table", "page_table" or "hreflang_table"
	Name string // [[table]] name; "" for the other kinds
	File string // as the loader opened it, for file:line
	Cols []string
	Key  int // the indexed column

	arena string
	offs  []uint32 // cell c of row r: arena[offs[r*n+c]:offs[r*n+c+1]]
	lines []uint32 // each row's line in the file
	index []uint32 // row+1, 0 for an empty slot; len is a power of two
	seed  maphash.Seed
}

// Rows is the number of rows.
func (t *Table) Rows() int { return len(t.lines) }

// Line is the line of row in the table's file.
func (t *Table) Line(row int) int { return int(t.lines[row]) }

// Indexed reports whether Finish has built the key index: a table whose
// file could not be read has none, and Find finds nothing in it.
func (t *Table) Indexed() bool { return t.index != nil }

// Cell returns a cell of a row.
func (t *Table) Cell(row, col int) string {
	i := row*len(t.Cols) + col
	return t.arena[t.offs[i]:t.offs[i+1]]
}

// Column returns the index of a column, or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Cols {
		if c == name {
			return i
		}
	}
	return -1
}

// Find returns the row whose key cell equals key, or -1.
func (t *Table) Find(key string) int {
	if len(t.index) == 0 {
		return -1
	}
	mask := uint64(len(t.index) - 1)
	for i := maphash.String(t.seed, key) & mask; ; i = (i + 1) & mask {
		r := t.index[i]
		if r == 0 {
			return -1
		}
		if t.Cell(int(r-1), t.Key) == key {
			return int(r - 1)
		}
	}
}

// Builder collects rows. Cells are copied into the arena, so the
// reader's buffers may be reused.
type Builder struct {
	t     *Table
	arena strings.Builder
	offs  []uint32
}

// NewBuilder starts filling t, whose columns are set, from a file of
// about sizeHint bytes.
func NewBuilder(t *Table, sizeHint int64) *Builder {
	b := &Builder{t: t}
	if sizeHint > 0 && sizeHint < 1<<31 {
		b.arena.Grow(int(sizeHint))
	}
	b.offs = append(b.offs, 0)
	return b
}

// Add appends a row; cells beyond the columns are ignored.
func (b *Builder) Add(line int, cells []string) {
	for i := range b.t.Cols {
		if i < len(cells) {
			b.arena.WriteString(cells[i])
		}
		b.offs = append(b.offs, uint32(b.arena.Len()))
	}
	b.t.lines = append(b.t.lines, uint32(line))
}

// TooLarge reports whether the arena reached what offsets can address.
func (b *Builder) TooLarge() bool { return int64(b.arena.Len()) > 1<<32-1<<20 }

// Finish builds the index and returns the duplicates of the key column as
// pairs of rows (first, again).
func (b *Builder) Finish() [][2]int {
	t := b.t
	t.arena = b.arena.String()
	t.offs = append([]uint32(nil), b.offs...) // exact size: the slack of append is not kept
	t.lines = append([]uint32(nil), t.lines...)
	b.offs = nil
	n := 2
	for n < 2*t.Rows() {
		n <<= 1
	}
	t.index = make([]uint32, n)
	t.seed = maphash.MakeSeed()
	mask := uint64(n - 1)
	var dups [][2]int
	for r := 0; r < t.Rows(); r++ {
		k := t.Cell(r, t.Key)
		for i := maphash.String(t.seed, k) & mask; ; i = (i + 1) & mask {
			x := t.index[i]
			if x == 0 {
				t.index[i] = uint32(r + 1)
				break
			}
			if t.Cell(int(x-1), t.Key) == k {
				dups = append(dups, [2]int{int(x - 1), r})
				break
			}
		}
	}
	return dups
}
