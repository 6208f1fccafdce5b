// Package linkheader reads and writes HTTP Link headers (RFC 8288): the one
// reader and writer of the proxy (canonical and hreflang links on non-HTML
// responses, §4.8, §12.3) and the audit (what crawlers read there).
package linkheader

import (
	"net/http"
	"strings"
)

// Link is one link of a Link header.
type Link struct {
	Target string            // the URI reference between < and >
	Rels   []string          // the rel tokens, lower-case
	Params map[string]string // the other parameters, names lower-case, values unquoted
	Raw    string            // the link as written, to keep it as it was
}

// Has reports whether rel is one of the link's relation types.
func (l Link) Has(rel string) bool {
	for _, r := range l.Rels {
		if r == rel {
			return true
		}
	}
	return false
}

// Parse reads every link of the Link header values. It is lenient, as
// crawlers are: a malformed link is skipped up to the next top-level comma.
func Parse(values []string) []Link {
	var out []Link
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
			l := Link{Target: strings.TrimSpace(v[i+1 : i+end])}
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
						i++ // the closing quote
						val = b.String()
					} else {
						vs := i
						for i < len(v) && v[i] != ';' && v[i] != ',' {
							i++
						}
						val = strings.TrimSpace(v[vs:i])
					}
				}
				switch {
				case name == "rel":
					l.Rels = append(l.Rels, strings.Fields(strings.ToLower(val))...)
				case name != "":
					if l.Params == nil {
						l.Params = map[string]string{}
					}
					if _, seen := l.Params[name]; !seen { // RFC 8288: the first occurrence counts
						l.Params[name] = val
					}
				}
			}
			l.Raw = strings.TrimSpace(v[start:min(i, len(v))])
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

// Replace rewrites h's Link header: the links drop reports are removed,
// the others kept as written, and add appended, one header value each.
func Replace(h http.Header, drop func(Link) bool, add ...string) {
	var keep []string
	for _, l := range Parse(h.Values("Link")) {
		if !drop(l) {
			keep = append(keep, l.Raw)
		}
	}
	h.Del("Link")
	for _, l := range keep {
		h.Add("Link", l)
	}
	for _, l := range add {
		h.Add("Link", l)
	}
}

// The replacers of Format, built once: a strings.Replacer builds its
// tables on first use, which cost 10% of the CPU of a request whose
// canonical goes out as a Link header when one was made per call.
var (
	targetEscaper = strings.NewReplacer("<", "%3C", ">", "%3E")
	quoteEscaper  = strings.NewReplacer(`\`, `\\`, `"`, `\"`)
)

// Format writes one link: target between < and > (with < and > in it
// percent-encoded, so that no value can end the reference), then rel and
// the parameters, quoted.
func Format(target, rel string, params ...[2]string) string {
	var b strings.Builder
	b.WriteByte('<')
	b.WriteString(targetEscaper.Replace(target))
	b.WriteString(`>; rel="`)
	b.WriteString(rel)
	b.WriteByte('"')
	for _, p := range params {
		b.WriteString("; ")
		b.WriteString(p[0])
		b.WriteString(`="`)
		b.WriteString(quoteEscaper.Replace(p[1]))
		b.WriteByte('"')
	}
	return b.String()
}
