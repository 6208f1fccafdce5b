package datatable

import "testing"

func TestFind(t *testing.T) {
	tb := &Table{Kind: "table", Name: "t", File: "t.csv", Cols: []string{"k", "v"}}
	b := NewBuilder(tb, 64)
	for i, row := range [][]string{{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c"}} {
		b.Add(i+2, row)
	}
	dups := b.Finish()
	if len(dups) != 1 || dups[0] != [2]int{0, 2} {
		t.Errorf("dups = %v, want [[0 2]]", dups)
	}
	for _, tc := range []struct {
		key       string
		row, line int
		v         string
	}{{"a", 0, 2, "1"}, {"b", 1, 3, "2"}, {"c", 3, 5, ""}, {"z", -1, 0, ""}} {
		row := tb.Find(tc.key)
		if row != tc.row {
			t.Errorf("Find(%q) = %d, want %d", tc.key, row, tc.row)
			continue
		}
		if row >= 0 && (tb.Line(row) != tc.line || tb.Cell(row, tb.Column("v")) != tc.v) {
			t.Errorf("%q: line %d, v %q; want %d, %q", tc.key, tb.Line(row), tb.Cell(row, 1), tc.line, tc.v)
		}
	}
	if !tb.Indexed() || (&Table{}).Indexed() {
		t.Error("Indexed is wrong")
	}
}
