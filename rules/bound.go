package rules

import (
	"strings"
	"unicode/utf8"
)

// Bounds on table values and on what one tag or header holds (§23): a
// spreadsheet cell or an upstream title of megabytes must not make every
// response as large.
const (
	// DefaultMaxCellBytes is tables.max_cell_bytes when the config leaves
	// it out: a longer cell refuses its table at load.
	DefaultMaxCellBytes = 8 << 10
	// maxRedirectToBytes bounds a redirect row's to: a Location header.
	maxRedirectToBytes = 2 << 10
	// MaxValueBytes bounds a value rendered into one tag or header: text
	// is cut at a word boundary with "…", a URL longer is dropped.
	MaxValueBytes = 4 << 10
)

// boundText cuts s to at most MaxValueBytes, at the last space of the
// second half of the cut when there is one (else at a rune boundary), and
// marks the cut with "…".
func boundText(s string) string {
	if len(s) <= MaxValueBytes {
		return s
	}
	const ell = "…"
	cut := s[:MaxValueBytes-len(ell)]
	for len(cut) > 0 && !utf8.RuneStart(s[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexAny(cut, " \t\n"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \t\n") + ell
}
