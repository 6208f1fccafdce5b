package insight

import (
	"sort"
	"unicode/utf8"
)

// MaxPathBytes is how much of a path the top-paths sketch keeps; a longer
// path is cut at a UTF-8 boundary at or before it.
const MaxPathBytes = 256

// slot is one Space-Saving counter. The path lives in the slot's own
// array, so counting never allocates and never keeps a caller's buffer
// alive.
type slot struct {
	count, err uint64 // err: how much of count may belong to paths it replaced
	n          uint16
	path       [MaxPathBytes]byte
}

// sketch is Space-Saving (Metwally, Agrawal, El Abbadi 2005) over k
// counters: a path that has a slot gains 1; one that has none takes the
// slot of the smallest count, inheriting that count as its error. Every
// path seen more than total/k times is in it, and each count overestimates
// by at most its err. k is small (≤ 64): a linear scan beats a map and
// a heap here and allocates nothing. Not safe for concurrent use.
type sketch struct {
	slots []slot
	used  int
}

func newSketch(k int) sketch { return sketch{slots: make([]slot, k)} }

func (s *sketch) reset() {
	for i := range s.slots[:s.used] {
		s.slots[i].count, s.slots[i].err, s.slots[i].n = 0, 0, 0
	}
	s.used = 0
}

// truncPath cuts p to at most MaxPathBytes at a rune boundary.
func truncPath(p string) string {
	if len(p) <= MaxPathBytes {
		return p
	}
	i := MaxPathBytes
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	return p[:i]
}

func (s *sketch) add(p string) {
	p = truncPath(p)
	min := -1
	for i := range s.slots[:s.used] {
		sl := &s.slots[i]
		if int(sl.n) == len(p) && string(sl.path[:sl.n]) == p {
			sl.count++
			return
		}
		if min < 0 || sl.count < s.slots[min].count {
			min = i
		}
	}
	if s.used < len(s.slots) {
		sl := &s.slots[s.used]
		s.used++
		sl.n = uint16(copy(sl.path[:], p))
		sl.count, sl.err = 1, 0
		return
	}
	sl := &s.slots[min]
	sl.n = uint16(copy(sl.path[:], p))
	sl.err = sl.count
	sl.count++
}

// PathCount is one of a crawler's most requested paths. Count may exceed
// the true number by at most Error (Space-Saving's guarantee).
type PathCount struct {
	Path  string `json:"path"`
	Count uint64 `json:"count"`
	Error uint64 `json:"error"`
}

// appendTo adds the sketch's counts into m (path → index in out).
func (s *sketch) appendTo(out []PathCount, m map[string]int) []PathCount {
	for i := range s.slots[:s.used] {
		sl := &s.slots[i]
		p := string(sl.path[:sl.n])
		if j, ok := m[p]; ok {
			out[j].Count += sl.count
			out[j].Error += sl.err
			continue
		}
		m[p] = len(out)
		out = append(out, PathCount{Path: p, Count: sl.count, Error: sl.err})
	}
	return out
}

func sortPaths(ps []PathCount, k int) []PathCount {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Count != ps[j].Count {
			return ps[i].Count > ps[j].Count
		}
		return ps[i].Path < ps[j].Path
	})
	if len(ps) > k {
		ps = ps[:k]
	}
	return ps
}
