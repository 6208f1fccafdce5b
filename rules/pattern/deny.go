package pattern

import (
	"slices"
	"strings"
)

// What deny rules see (docs/security.md, "Deny rules"). An upstream may
// resolve a path differently from its spelling: servlet containers (Tomcat,
// Jetty, Spring, and anything on them) cut ";parameters" off each segment,
// Windows servers (IIS, ASP.NET) read "\" as "/", many decode %2F, and most
// collapse empty segments; frameworks such as Express and Rails route
// "/admin/" like "/admin". A deny rule therefore also matches every
// spelling of the path those resolutions could produce, and denies when any
// matches. Dot segments, with or without parameters, never get this far:
// CheckPath refuses them.

// slash modes: which spellings of a separator a form reads as "/".
const (
	slashRaw     = iota // only "/"
	slashEncoded        // and %2F
	slashBack           // and "\", %5C
	slashAll            // all of them
)

// semicolon modes: when ";parameters" are cut off each segment, and
// whether %3B starts them too.
const (
	semiKeep          = iota
	semiBeforeRaw     // at a raw ";", before decoding (a servlet container)
	semiBeforeEncoded // at ";" or %3B, before the other separators
	semiAfterRaw      // at a raw ";", after the other separators became "/"
	semiAfterEncoded  // at ";" or %3B, after them (decoded first)
)

// DenyForms returns the other spellings of path that deny rules see. Most
// paths have none: only a separator other than "/", a ";" (raw or %3B), an
// empty segment or a trailing "/" makes any.
func DenyForms(path string) []string {
	if !needsDenyForms(path) {
		return nil
	}
	// The spellings before empty segments are removed, each once: most
	// modes change nothing in a given path.
	var pre [(slashAll + 1) * (semiAfterEncoded + 1)]string
	np := 0
	add := func(s string) {
		for _, f := range pre[:np] {
			if f == s {
				return
			}
		}
		pre[np] = s
		np++
	}
	cutRaw, cutEnc := cutParams(path, false), cutParams(path, true)
	for slash := slashRaw; slash <= slashAll; slash++ {
		if slash != slashRaw && toSlashes(path, slash) == 0 {
			continue // the same spellings as slashRaw's
		}
		slashed := toSlash(path, slash)
		add(slashed)                // semiKeep
		add(toSlash(cutRaw, slash)) // semiBeforeRaw
		add(toSlash(cutEnc, slash)) // semiBeforeEncoded
		if slash != slashRaw {
			add(cutParams(slashed, false)) // semiAfterRaw
			add(cutParams(slashed, true))  // semiAfterEncoded
		}
	}
	var forms []string
	for _, s := range pre[:np] {
		for _, f := range [2]string{s, collapseSlashes(s)} {
			if f != path && !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	return forms
}

// needsDenyForms reports whether path has anything denyForms rewrites.
func needsDenyForms(path string) bool {
	if len(path) > 1 && path[len(path)-1] == '/' {
		return true
	}
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\', ';':
			return true
		case '/':
			if i > 0 && path[i-1] == '/' {
				return true
			}
		case '%':
			if i+2 < len(path) {
				if k, _ := pathToken(path, i); k == pathSep || k == pathSemi {
					return true
				}
			}
		}
	}
	return false
}

// toSlash writes the separators mode names as "/".
func toSlash(path string, mode int) string {
	if mode == slashRaw || toSlashes(path, mode) == 0 {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '\\' && mode >= slashBack:
			b.WriteByte('/')
			continue
		case c == '%' && i+2 < len(path):
			if k, _ := pathToken(path, i); k == pathSep {
				encodedSlash := path[i+1] == '2'
				if encodedSlash && mode != slashBack || !encodedSlash && mode >= slashBack {
					b.WriteByte('/')
					i += 2
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// toSlashes counts the separators toSlash would write as "/".
func toSlashes(path string, mode int) int {
	n := 0
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			if mode >= slashBack {
				n++
			}
		case '%':
			if k, _ := pathToken(path, i); k == pathSep {
				if path[i+1] == '2' && mode != slashBack || path[i+1] != '2' && mode >= slashBack {
					n++
				}
			}
		}
	}
	return n
}

// cutParams removes, from each "/"-separated segment, everything from its
// first ";" on (or %3B, with encoded).
func cutParams(path string, encoded bool) string {
	if !hasParams(path, encoded) {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	params := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '/':
			params = false
		case params:
			continue
		case c == ';':
			params = true
			continue
		case c == '%' && encoded && i+2 < len(path):
			if k, _ := pathToken(path, i); k == pathSemi {
				params = true
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func hasParams(path string, encoded bool) bool {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case ';':
			return true
		case '%':
			if k, _ := pathToken(path, i); encoded && k == pathSemi {
				return true
			}
		}
	}
	return false
}

// collapseSlashes removes empty segments, a trailing one included; the
// root stays "/".
func collapseSlashes(path string) string {
	if !strings.Contains(path, "//") && (len(path) <= 1 || path[len(path)-1] != '/') {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 && path[i-1] == '/' {
			continue
		}
		b.WriteByte(path[i])
	}
	s := strings.TrimSuffix(b.String(), "/")
	if s == "" {
		return "/"
	}
	return s
}
