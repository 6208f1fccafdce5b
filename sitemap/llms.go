package sitemap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/headgate/headgate/rules"
)

// /llms.txt (SPEC §13.2) is built by the sitemap's own generation: every
// <url> the sitemap lists is offered to the first [[llms_txt.section]]
// (in file order) whose pattern matches its path, until that section holds
// max_links links. It is cached, single-flighted and failed with the
// sitemap's files (§5.5).
//
//	# {title}
//
//	> {summary}
//
//	## {section name}
//
//	- [{link title}](url): {description}
//
// The link title is the entry's rule's title rendered for its parameters
// (without site.title_template), or the URL's path when the rule has none;
// the description is the rule's, and ": …" is left out without one. Both
// are cut to maxLinkTitle / maxLinkDesc characters, and escaped: a
// backslash before each of \ ` * _ [ ] ( ) < >, and CR, LF, tabs and other
// control characters become spaces. In the URL, ( and ) get a backslash
// (CommonMark reads the URL back byte for byte). A section that gets no
// link is left out. The whole file stops growing at maxLLMSBytes (the rest
// is left out and logged), so it is bounded whatever the sitemap's size.

const (
	llmsType     = "text/markdown; charset=utf-8"
	maxLinkTitle = 200     // characters of a link title, "…" included
	maxLinkDesc  = 500     // characters of a description, "…" included
	maxLLMSBytes = 8 << 20 // of the whole file
)

// llmsBuilder collects one generation's llms.txt.
type llmsBuilder struct {
	cfg      *rules.LLMSTxt
	sections []bytes.Buffer
	counts   []int
	full     int // sections that hold max_links links
	size     int
	leftOut  int             // links left out at maxLLMSBytes
	md       *rules.Markdown // [markdown]: links go to the .md forms when it has a suffix (§19.1)
}

func newLLMS(cfg *rules.LLMSTxt, md *rules.Markdown) *llmsBuilder {
	if cfg == nil {
		return nil
	}
	if md != nil && md.Suffix == "" {
		md = nil
	}
	return &llmsBuilder{cfg: cfg, md: md, sections: make([]bytes.Buffer, len(cfg.Sections)), counts: make([]int, len(cfg.Sections))}
}

// add offers one listed URL.
func (b *llmsBuilder) add(r *rules.Rule, params map[string]string, v *version, base string) {
	if b.full == len(b.sections) {
		return
	}
	i := b.cfg.Section(v.path)
	if i < 0 || b.counts[i] >= b.cfg.Sections[i].MaxLinks {
		return
	}
	title := ""
	if r.Title != nil {
		title = r.EntryText(r.Title, params, v.lang, v.path, base, "")
	}
	if strings.TrimSpace(title) == "" {
		title = v.path // no title, or one that renders empty (§13.2)
	}
	desc := r.EntryText(r.Description, params, v.lang, v.path, base, title)
	var line []byte
	line = append(line, "- ["...)
	at := len(line)
	line = appendMarkdown(line, title, maxLinkTitle)
	if t := string(line[at:]); t == "x" || t == "X" {
		// "- [x]" would read as a GFM task list item, ticked: a
		// character reference is the same letter to CommonMark.
		line = append(line[:at], "&#"+strconv.Itoa(int(t[0]))+";"...)
	}
	line = append(line, "]("...)
	loc := b.mdLoc(r, v, base)
	for j := 0; j < len(loc); j++ {
		// Parentheses would end the destination, and CommonMark decodes a
		// character reference (&copy;, &#65;) in one: escaped, each reads
		// back as the URL's own byte.
		if c := loc[j]; c == '(' || c == ')' || c == '&' {
			line = append(line, '\\')
		}
		line = append(line, loc[j])
	}
	line = append(line, ')')
	if strings.TrimSpace(desc) != "" {
		line = append(line, ": "...)
		line = appendMarkdown(line, desc, maxLinkDesc)
	}
	line = append(line, '\n')
	if b.size+len(line) > maxLLMSBytes {
		b.leftOut++
		return
	}
	b.size += len(line)
	b.sections[i].Write(line)
	b.counts[i]++
	if b.counts[i] == b.cfg.Sections[i].MaxLinks {
		b.full++
	}
}

// mdLoc is the URL an llms.txt line links: the page's .md path form when
// it has a Markdown version and [markdown] a suffix (§19.1), else its
// sitemap URL. A URL with a query, or off base, stays as it is.
func (b *llmsBuilder) mdLoc(r *rules.Rule, v *version, base string) string {
	if b.md == nil || r.Rewrite != nil && !*r.Rewrite || !strings.HasPrefix(v.loc, base+"/") || strings.Contains(v.loc, "?") || !b.md.Covers(v.path) {
		return v.loc
	}
	return base + b.md.FormPath(v.loc[len(base):])
}

// appendMarkdown appends s as Markdown text, escaped, cut to max
// characters.
func appendMarkdown(b []byte, s string, max int) []byte {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if utf8.RuneCountInString(s) > max {
		n := 0
		for i := range s {
			if n == max-1 {
				s = strings.TrimRight(s[:i], " ") + "…"
				break
			}
			n++
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("\\`*_[]()<>&!~", c) >= 0:
			b = append(b, '\\', c)
		case c < 0x20 || c == 0x7f:
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return b
}

// llmsFile is a finished llms.txt.
type llmsFile struct {
	body, gz []byte
	etag     string
}

func (b *llmsBuilder) finish() *llmsFile {
	var out bytes.Buffer
	out.WriteString("# " + b.cfg.Title + "\n")
	if sum := strings.TrimSpace(b.cfg.Summary); sum != "" {
		out.WriteByte('\n')
		for _, l := range strings.Split(strings.ReplaceAll(sum, "\r\n", "\n"), "\n") {
			out.WriteString(strings.TrimRight("> "+l, " ") + "\n")
		}
	}
	for i, s := range b.cfg.Sections {
		if b.counts[i] == 0 {
			continue
		}
		out.WriteString("\n## " + s.Name + "\n\n")
		out.Write(b.sections[i].Bytes())
	}
	f := &llmsFile{body: out.Bytes()}
	sum := sha256.Sum256(f.body)
	f.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(f.body)
	zw.Close()
	f.gz = z.Bytes()
	return f
}

// serveLLMS answers /llms.txt from a generation.
func (s *Sitemap) serveLLMS(w http.ResponseWriter, r *http.Request, f *llmsFile) {
	gz, done := cacheHeaders(w, r, llmsType, f.etag)
	if done {
		return
	}
	h := w.Header()
	body := f.body
	if gz {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// serveKey answers /{key}.txt: the IndexNow key, as text/plain.
func (s *Sitemap) serveKey(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", textType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Length", strconv.Itoa(len(s.cfg.IndexNow.Key)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write([]byte(s.cfg.IndexNow.Key))
	}
}

// isKeyPath reports whether path is the IndexNow key file's.
func (s *Sitemap) isKeyPath(path string) bool {
	return s.cfg.IndexNow != nil && path == s.cfg.IndexNow.KeyPath()
}

// listed is called for each <url> the generation writes: the i-th of the
// current entry's kept versions.
func (g *generation) listed(i int, lastmod string) {
	if g.llms == nil && g.each == nil {
		return
	}
	v := &g.kept[i]
	if g.llms != nil {
		g.llms.add(g.rule, g.params, v, g.s.cfg.Site.BaseURL)
	}
	if g.each != nil {
		g.each(v.loc, lastmod)
	}
}

// finishLLMS puts the generation's llms.txt into res.
func (g *generation) finishLLMS(res *result) {
	if g.llms == nil {
		return
	}
	res.llms = g.llms.finish()
	if g.llms.leftOut > 0 {
		g.s.log.Warn("sitemap: llms.txt reached its size limit; the rest of its links are left out",
			"limit_bytes", maxLLMSBytes, "links_left_out", g.llms.leftOut)
	}
}
