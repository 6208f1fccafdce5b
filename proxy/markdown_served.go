package proxy

import (
	"bytes"
	"slices"
	"strings"

	"golang.org/x/net/html"

	"github.com/headgate/headgate/internal/robotsmeta"
	"github.com/headgate/headgate/markdown"
)

// servedHead reads the front matter of §19.1 from the head of the page as
// headgate serves it: the first title, description, canonical, the html
// element's lang, and article:published_time/modified_time (or
// date/last-modified metas); robots is the page's robots meta, for
// X-Robots-Tag.
func servedHead(page []byte) (f markdown.Front, robots string) {
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(1 << 20)
	inTitle := false
	var title strings.Builder
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			f.Title = strings.Join(strings.Fields(title.String()), " ")
			return f, robots
		case html.TextToken:
			if inTitle {
				title.Write(z.Text())
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				inTitle = false
				if f.Title == "" {
					f.Title = strings.Join(strings.Fields(title.String()), " ")
				}
			case "head":
				f.Title = strings.Join(strings.Fields(title.String()), " ")
				return f, robots
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if _, seen := attrs[string(k)]; !seen {
					attrs[string(k)] = string(v)
				}
			}
			switch string(name) {
			case "html":
				f.Lang = strings.TrimSpace(attrs["lang"])
			case "title":
				inTitle = title.Len() == 0 && f.Title == ""
				if tt == html.StartTagToken {
					z.NextIsNotRawText()
				}
			case "meta":
				key := strings.ToLower(attrs["name"])
				if key == "" {
					key = strings.ToLower(attrs["property"])
				}
				v := strings.TrimSpace(attrs["content"])
				switch key {
				case "description":
					setOnce(&f.Description, v)
				case "robots":
					setOnce(&robots, v)
				case "article:published_time", "date", "dc.date", "dcterms.created":
					setOnce(&f.Date, v)
				case "article:modified_time", "last-modified", "dcterms.modified":
					setOnce(&f.Modified, v)
				}
			case "link":
				if hasRelToken(attrs["rel"], "canonical") {
					setOnce(&f.URL, strings.TrimSpace(attrs["href"]))
				}
			case "body":
				f.Title = strings.Join(strings.Fields(title.String()), " ")
				return f, robots
			}
		}
	}
}

// markdownRobots is a Markdown answer's X-Robots-Tag: the page's robots
// directives from both places a page states them, the X-Robots-Tag it is
// served with (the upstream's and the rules' headers, values) and its
// served head's robots meta (meta), so that a page kept out of an index
// by either is kept out as Markdown too (SPEC §19.1). The directives for
// every crawler go in one field, first, without repeats (so a reader of
// the first field alone has them all); a value for one crawler
// ("googlebot: noindex") keeps a field of its own. nil when there are
// none.
func markdownRobots(values []string, meta string) []string {
	var general, scoped []string
	add := func(list string) {
		for d := range strings.SplitSeq(list, ",") {
			if d = strings.TrimSpace(d); d != "" && !slices.ContainsFunc(general, func(g string) bool { return strings.EqualFold(g, d) }) {
				general = append(general, d)
			}
		}
	}
	for _, v := range values {
		if crawler, _ := robotsmeta.ForCrawler(v); crawler != "" {
			scoped = append(scoped, strings.TrimSpace(v))
			continue
		}
		add(v)
	}
	add(meta)
	if len(general) == 0 && len(scoped) == 0 {
		return nil
	}
	var out []string
	if len(general) > 0 {
		out = append(out, strings.Join(general, ", "))
	}
	return append(out, scoped...)
}

func setOnce(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func hasRelToken(rel, token string) bool {
	for _, t := range strings.Fields(rel) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}
