package pattern

import (
	"net/url"
	"strings"
)

// maxBindSegments bounds the segments Bind looks at: a sitemap <loc> is at
// most 2,048 characters, and no real address has more.
const maxBindSegments = 256

// Bind matches an escaped path (as a sitemap <loc> or a request spells it)
// against the pattern, as Resolve would, and returns the parameters it
// binds, decoded; a trailing * binds "*" to the rest of the path. Fill of
// what Bind returns gives the path again, in one spelling (§16.4, §16.5).
func (p *Pattern) Bind(path string) (map[string]string, bool) {
	if !strings.HasPrefix(path, "/") || CheckPath(path) != nil {
		return nil, false
	}
	raw := strings.Split(path[1:], "/")
	if len(raw) > maxBindSegments {
		return nil, false
	}
	segs := make([]string, len(raw))
	for i, s := range raw {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		segs[i] = d
	}
	out := map[string]string{}
	if !p.bind(0, segs, out) {
		return nil, false
	}
	return out, true
}

func (p *Pattern) bind(si int, segs []string, out map[string]string) bool {
	if si == len(p.segs) {
		return len(segs) == 0
	}
	s := &p.segs[si]
	if s.Kind == SegWild {
		out["*"] = strings.Join(segs, "/")
		return true
	}
	if len(segs) == 0 {
		return false
	}
	switch s.Kind {
	case SegLiteral:
		return segs[0] == s.Lit && p.bind(si+1, segs[1:], out)
	case SegParam:
		if segs[0] == "" || strings.IndexByte(segs[0], '/') >= 0 {
			return false
		}
		out[s.Name] = segs[0]
		if p.bind(si+1, segs[1:], out) {
			return true
		}
		delete(out, s.Name)
		return false
	}
	// A constrained parameter; one that can match "/" may span segments,
	// longest first, as Resolve tries them.
	n := 1
	if s.Spans {
		n = len(segs)
	}
	for k := n; k >= 1; k-- {
		v := strings.Join(segs[:k], "/")
		if v == "" || !s.Spans && strings.IndexByte(v, '/') >= 0 || !s.Re.MatchString(v) {
			continue
		}
		out[s.Name] = v
		if p.bind(si+1, segs[k:], out) {
			return true
		}
		delete(out, s.Name)
	}
	return false
}
