package rules

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"golang.org/x/text/language"

	"github.com/headgate/headgate/internal/langcode"

	"github.com/headgate/headgate/internal/pct"
	"github.com/headgate/headgate/rules/datatable"
)

// hreflangTable loads one [[hreflang_table]] and checks it (HG175).
func (l *loader) hreflangTable(i int, t map[string]any) {
	path := fmt.Sprintf("hreflang_table[%d]", i)
	r, name, _ := l.tableFile(path, t, hreflangTableFields, "HG175")
	if r == nil {
		return
	}
	defer r.Close()
	idx, ok := l.columns("HG175", path, name, r, []string{"group", "hreflang", "url"}, "an hreflang_table column (group, hreflang, url)")
	if !ok {
		return
	}
	for c, col := range []string{"group", "hreflang", "url"} {
		if idx[c] < 0 {
			l.addRow("HG175", name, 1, path, "has no %s column", col)
			ok = false
		}
	}
	if !ok {
		return
	}
	dt := &datatable.Table{Kind: "hreflang_table", File: name, Cols: []string{"group", "hreflang", "url"}, Key: hlURL}
	ht := &hreflangTable{t: dt}
	groups := map[string]uint32{}
	var count []uint32
	langs := map[[2]string]int{}     // group, lower-case code → line
	urls := map[[2]string]langLine{} // group, url → the first language that names it
	b := datatable.NewBuilder(dt, fileSize(name))
	read, clean := l.readRows("HG175", path, name, r, b, idx, func(line int, cells []string) bool {
		g, lang, u := cells[hlGroup], cells[hlLang], cells[hlURL]
		if g == "" {
			l.addRow("HG175", name, line, path, "the group cell is empty")
			return false
		}
		if why := checkHreflang(lang); why != "" {
			l.addRow("HG175", name, line, path, "hreflang %q: %s", clip(lang), why)
			return false
		}
		if len(u) > MaxValueBytes {
			// §23: a URL written into a tag or a Link header is never cut.
			l.addRow("HG175", name, line, path, "url of %d bytes: a url written into a tag or header is at most %d", len(u), MaxValueBytes)
			return false
		}
		nu, why := normURL(u)
		if why != "" {
			l.addRow("HG175", name, line, path, "url %q: %s", clip(u), why)
			return false
		}
		// site.path_safe: a URL on the site is spelled as its self (§23),
		// so the page finds its group and the alternates name canonicals.
		nu = l.cfg.spellURLPath(nu)
		k := [2]string{g, strings.ToLower(lang)}
		if first, dup := langs[k]; dup {
			l.addRow("HG175", name, line, path, "group %q has hreflang %q twice (first on line %d)", clip(g), lang, first)
			return false
		}
		if !strings.EqualFold(lang, "x-default") {
			uk := [2]string{g, nu}
			if first, dup := urls[uk]; dup {
				l.addRow("HG175", name, line, path, "url %q is hreflang %q and %q (line %d) of group %q: one page is one language (x-default aside)", clip(u), lang, first.lang, first.line, clip(g))
				return false
			}
			urls[uk] = langLine{lang, line}
		}
		langs[k] = line
		cells[hlURL] = nu
		gi, seen := groups[g]
		if !seen {
			gi = uint32(len(count))
			groups[g] = gi
			count = append(count, 0)
		}
		count[gi]++
		ht.group = append(ht.group, gi)
		return true
	})
	if !read {
		return
	}
	ok = clean
	for _, d := range b.Finish() {
		if ht.group[d[0]] != ht.group[d[1]] {
			l.addRow("HG175", name, int(dt.Line(d[1])), path, "url %q is in group %q and in group %q (line %d): a page has one set of language versions",
				clip(dt.Cell(d[1], hlURL)), clip(dt.Cell(d[0], hlGroup)), clip(dt.Cell(d[1], hlGroup)), dt.Line(d[0]))
			ok = false
		}
	}
	for row := range dt.Rows() {
		if clean && count[ht.group[row]] == 1 { // with rows refused, the count says little
			l.addRow("HG175", name, int(dt.Line(row)), path, "group %q has one row: a language version needs another to be one", clip(dt.Cell(row, hlGroup)))
			ok = false
		}
		for _, other := range l.data.hreflang {
			if o := other.t.Find(dt.Cell(row, hlURL)); o >= 0 {
				l.addRow("HG175", name, int(dt.Line(row)), path, "url %q is also on line %d of %s", clip(dt.Cell(row, hlURL)), other.t.Line(o), other.t.File)
				ok = false
				break
			}
		}
	}
	if !ok {
		return
	}
	// Rows by group, in file order within each.
	ht.start = make([]uint32, len(count)+1)
	for g, n := range count {
		ht.start[g+1] = ht.start[g] + n
	}
	next := append([]uint32(nil), ht.start[:len(count)]...)
	ht.order = make([]uint32, dt.Rows())
	for row, g := range ht.group {
		ht.order[next[g]] = uint32(row)
		next[g]++
	}
	l.data.hreflang = append(l.data.hreflang, ht)
	l.dataFile(name, r.Sum())
}

type langLine struct {
	lang string
	line int
}

// checkHreflang says why an hreflang code is refused (§12.3), or "": an
// ISO 639-1 language, optionally a script subtag, optionally an ISO 3166-1
// alpha-2 region; or x-default.
func checkHreflang(s string) string {
	if strings.EqualFold(s, "x-default") {
		return ""
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 2 {
		return "not an ISO 639-1 language (two letters) with an optional script and ISO 3166-1 region, nor x-default"
	}
	if !langcode.Language(parts[0]) {
		// The audit's list (internal/langcode): a withdrawn code such as
		// "iw" (Hebrew is "he") is not written, as the audit would report it.
		return fmt.Sprintf("%q is not an ISO 639-1 language", parts[0])
	}
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 {
		if _, err := language.ParseScript(rest[0]); err != nil || !isLetters(rest[0]) {
			return fmt.Sprintf("%q is not a script subtag", rest[0])
		}
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return ""
	case len(rest) > 1 || len(rest[0]) != 2 || !isLetters(rest[0]):
		return "not an ISO 639-1 language (two letters) with an optional script and ISO 3166-1 region, nor x-default"
	case strings.EqualFold(rest[0], "UK"):
		return `"UK" is not an ISO 3166-1 region (the United Kingdom is GB)`
	}
	if !langcode.Region(rest[0]) {
		return fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 region", rest[0])
	}
	return ""
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// normURL checks that u is an absolute http(s) URL headgate may write and
// spells it one way: scheme and host in lower case, percent-escapes in
// upper case, other bytes a URL may not hold raw (non-ASCII, space, quote,
// angle brackets) percent-encoded, "/" for an empty path. Head, sitemap and
// Link headers all compare and write this spelling. A URL spelled so
// already is returned as it is, without an allocation.
func normURL(u string) (string, string) {
	scheme, rest, ok := cutScheme(u)
	if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") || !strings.HasPrefix(rest, "//") {
		return "", "not an absolute http(s) URL"
	}
	if _, why := AbsURL(nil, u); why != "" {
		return "", dropText(why)
	}
	hostEnd := len(rest)
	if i := strings.IndexAny(rest[2:], "/?#"); i >= 0 {
		hostEnd = 2 + i
	}
	host, tail := rest[2:hostEnd], rest[hostEnd:]
	if host == "" || strings.ContainsAny(host, "@") {
		return "", "not an absolute http(s) URL with a host (and no user info)"
	}
	if strings.IndexByte(tail, '#') >= 0 {
		return "", "holds a fragment (#…): a language version is a page's address, which has none"
	}
	if why := checkHostPort(host); why != "" {
		return "", why
	}
	if path, _, _ := strings.Cut(tail, "?"); path != "" && CheckPath(path) != nil {
		return "", "its path holds a dot segment (./ or ../), a NUL or bad percent-encoding: name the page's own address"
	}
	// One spelling, as every URL headgate builds (§16.4): no default port,
	// the path's escapes of unreserved characters decoded.
	if h, port, ok := strings.Cut(host, ":"); ok && !strings.Contains(port, ":") &&
		portOf(port, strings.ToLower(scheme)) == portOf("", strings.ToLower(scheme)) {
		host = h
		u = scheme + "://" + host + tail
	}
	if path, _, _ := strings.Cut(tail, "?"); RespellPath(path) != path {
		p := RespellPath(path)
		tail = p + tail[len(path):]
		u = scheme + "://" + host + tail
	}
	if isLowerASCII(scheme) && isLowerASCII(host) && tail != "" && tail[0] == '/' && pct.Index(tail, pct.URL, pct.Upper) < 0 {
		return u, ""
	}
	if tail == "" || tail[0] != '/' {
		tail = "/" + tail
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(scheme))
	b.WriteString("://")
	b.WriteString(strings.ToLower(host))
	b.WriteString(pct.Encode(tail, pct.URL, pct.Upper))
	return b.String(), ""
}

// checkHostPort says why a URL's host[:port] is no address a crawler
// fetches as written (§4.6 via §23): a port outside 1–65535, a non-ASCII
// name (a sitemap and a Link header hold ASCII: its A-label).
func checkHostPort(hp string) string {
	host, port, hasPort := hp, "", false
	if strings.HasPrefix(hp, "[") {
		i := strings.IndexByte(hp, ']')
		if i < 0 || i+1 < len(hp) && hp[i+1] != ':' {
			return "its host is not [IPv6] or [IPv6]:port"
		}
		host = hp[:i+1]
		port, hasPort = strings.CutPrefix(hp[i+1:], ":")
	} else {
		host, port, hasPort = strings.Cut(hp, ":")
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || port[0] == '+' || port[0] == '-' || n < 1 || n > 65535 {
			return fmt.Sprintf("port %q is not a TCP port (1 to 65535)", port)
		}
	}
	if !isASCII(host) {
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			return fmt.Sprintf("its host %q is written as its A-label, %s", host, a)
		}
		return fmt.Sprintf("its host %q is not a domain name: write it as its A-label (xn--…)", host)
	}
	return ""
}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// canonKey is the spelling of a canonical the hreflang index compares.
func canonKey(u string) string {
	u, _, _ = strings.Cut(u, "#") // a crawler drops a canonical's fragment
	if n, why := normURL(u); why == "" {
		return n
	}
	return u
}
