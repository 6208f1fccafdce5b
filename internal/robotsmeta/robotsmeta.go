// Package robotsmeta reads robots directives as crawlers do: the content
// of a robots (or googlebot) meta tag and the values of X-Robots-Tag
// headers. It owns the one test of whether they keep a page out of the
// index, which the sitemap (a rule's robots value) and the audit (a
// crawled page's tags and headers) both ask, so that "noindex" means the
// same in what headgate lists and in what it reports.
package robotsmeta

import "strings"

// Noindex reports whether a robots meta content (a comma-separated list
// of directives, in any case) forbids indexing: "noindex" or "none".
func Noindex(content string) bool {
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

// ForCrawler splits an X-Robots-Tag value into the crawler it names,
// lower-cased ("googlebot" for "Googlebot: noindex"), or "" when the value
// is for every crawler, and its directives.
func ForCrawler(value string) (crawler, directives string) {
	if name, rest, ok := strings.Cut(value, ":"); ok && !strings.Contains(name, ",") {
		if n := strings.ToLower(strings.TrimSpace(name)); !valued[n] {
			return n, rest
		}
	}
	return "", value
}

// HeaderNoindex reports whether X-Robots-Tag values forbid indexing to
// some crawler ("noindex", "none", also "googlebot: noindex": a page any
// crawler must not index is no sitemap entry).
func HeaderNoindex(values []string) bool {
	for _, v := range values {
		if _, d := ForCrawler(v); Noindex(d) {
			return true
		}
	}
	return false
}

// Set is a normalized set of robots directives, as a bit set: two sets
// compare with ==, and reading one allocates nothing. "none" is noindex
// and nofollow; "index", "follow", "all" and unknown words add nothing; a
// valued directive ("max-snippet: 20") is noted by its name, its value
// left out.
type Set uint16

// The directives a Set knows, in the order String writes them.
const (
	NoIndex Set = 1 << iota
	NoFollow
	NoArchive
	NoSnippet
	NoImageIndex
	NoTranslate
	IndexIfEmbedded
	NoCache
	MaxSnippet
	MaxImagePreview
	MaxVideoPreview
	UnavailableAfter
)

var setNames = [...]string{"noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "notranslate",
	"indexifembedded", "nocache", "max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"}

// Parse reads a comma-separated list of directives, in any case, as a
// robots meta's content or an X-Robots-Tag value for every crawler holds
// it. It allocates nothing.
func Parse[T ~string | ~[]byte](content T) Set {
	var s Set
	for i := 0; i < len(content); {
		j := i
		for j < len(content) && content[j] != ',' {
			j++
		}
		s |= directive(content[i:j])
		i = j + 1
	}
	return s
}

// directive is the bit of one directive, "" and unknown words 0.
func directive[T ~string | ~[]byte](d T) Set {
	for len(d) > 0 && (d[0] == ' ' || d[0] == '\t' || d[0] == '\n' || d[0] == '\r') {
		d = d[1:]
	}
	for i := 0; i < len(d); i++ { // a valued directive: its name
		if d[i] == ':' {
			d = d[:i]
			break
		}
	}
	for len(d) > 0 && (d[len(d)-1] == ' ' || d[len(d)-1] == '\t' || d[len(d)-1] == '\n' || d[len(d)-1] == '\r') {
		d = d[:len(d)-1]
	}
	if len(d) == 0 || len(d) > 20 {
		return 0
	}
	var low [20]byte
	for i := 0; i < len(d); i++ {
		c := d[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	w := string(low[:len(d)]) // not kept: the compiler does not allocate it
	if w == "none" {
		return NoIndex | NoFollow
	}
	for i, n := range setNames {
		if w == n {
			return 1 << i
		}
	}
	return 0
}

// String lists the directives of s, comma-separated, in a fixed order;
// "" for none.
func (s Set) String() string {
	var b strings.Builder
	for i, n := range setNames {
		if s&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
		}
	}
	return b.String()
}
