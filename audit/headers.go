package audit

import "strings"

// linkValue is one link of a Link header (RFC 8288).
type linkValue struct {
	target string
	rels   []string // lower-case
	raw    string   // as written, for rebuilding the header
}

func (l linkValue) has(rel string) bool {
	for _, r := range l.rels {
		if r == rel {
			return true
		}
	}
	return false
}

// parseLinkHeader reads every link of the Link header values. It is
// lenient: a malformed link is skipped up to the next comma.
func parseLinkHeader(values []string) []linkValue {
	var out []linkValue
	for _, v := range values {
		i := 0
		for i < len(v) {
			for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == ',') {
				i++
			}
			if i >= len(v) {
				break
			}
			start := i
			if v[i] != '<' {
				i = skipLink(v, i)
				continue
			}
			end := strings.IndexByte(v[i:], '>')
			if end < 0 {
				break
			}
			l := linkValue{target: strings.TrimSpace(v[i+1 : i+end])}
			i += end + 1
			for i < len(v) && v[i] != ',' {
				if v[i] != ';' {
					i++
					continue
				}
				i++
				for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
					i++
				}
				ns := i
				for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' {
					i++
				}
				name := strings.ToLower(strings.TrimSpace(v[ns:i]))
				val := ""
				if i < len(v) && v[i] == '=' {
					i++
					for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
						i++
					}
					if i < len(v) && v[i] == '"' {
						i++
						var b strings.Builder
						for i < len(v) && v[i] != '"' {
							if v[i] == '\\' && i+1 < len(v) {
								i++
							}
							b.WriteByte(v[i])
							i++
						}
						i++ // closing quote
						val = b.String()
					} else {
						vs := i
						for i < len(v) && v[i] != ';' && v[i] != ',' {
							i++
						}
						val = strings.TrimSpace(v[vs:i])
					}
				}
				if name == "rel" {
					l.rels = append(l.rels, strings.Fields(strings.ToLower(val))...)
				}
			}
			l.raw = strings.TrimSpace(v[start:min(i, len(v))])
			out = append(out, l)
		}
	}
	return out
}

// skipLink moves past a malformed link to the next top-level comma.
func skipLink(v string, i int) int {
	inQuote := false
	for ; i < len(v); i++ {
		switch v[i] {
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				return i + 1
			}
		}
	}
	return i
}

// metaNoindex reports whether a robots meta content forbids indexing.
func metaNoindex(content string) bool {
	for _, d := range strings.Split(content, ",") {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "noindex", "none":
			return true
		}
	}
	return false
}

// valued are the X-Robots-Tag directives written "name: value"; any other
// "name:" at the start of a value names the crawler the value is for.
var valued = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// headerNoindex reports whether X-Robots-Tag values forbid indexing to
// some crawler ("noindex", "none", also "googlebot: noindex": a page any
// crawler must not index is no sitemap entry).
func headerNoindex(values []string) bool {
	for _, v := range values {
		if name, rest, ok := strings.Cut(v, ":"); ok && !strings.Contains(name, ",") {
			if n := strings.ToLower(strings.TrimSpace(name)); !valued[n] {
				v = rest
			}
		}
		if metaNoindex(v) {
			return true
		}
	}
	return false
}
