package sitemapxml

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Limits bound what one document may make Scan hold. A zero field takes
// its default.
type Limits struct {
	Bytes int64 // uncompressed bytes of the document; default 64 MiB (the protocol allows 50 MB)
	Token int   // bytes of one XML token; default 1 MiB
	Depth int   // elements nested in one another; default 32
	Loc   int   // bytes of one <loc>'s text; a longer one is dropped; default 4,096 (the protocol allows 2,048)
}

const (
	defaultBytes = 64 << 20
	defaultToken = 1 << 20
	defaultDepth = 32
	defaultLoc   = 4096

	// maxLastmod bounds a <lastmod>'s text: a W3C date-time is 25 bytes
	// at most, and a longer text is dropped (it would not parse).
	maxLastmod = 64
)

func (l Limits) withDefaults() Limits {
	if l.Bytes <= 0 {
		l.Bytes = defaultBytes
	}
	if l.Token <= 0 {
		l.Token = defaultToken
	}
	if l.Depth <= 0 {
		l.Depth = defaultDepth
	}
	if l.Loc <= 0 {
		l.Loc = defaultLoc
	}
	return l
}

// ErrTooLarge is wrapped by the error of a document past one of its
// Limits' bytes or token bounds; ErrToken, by that of the token bound.
var (
	ErrTooLarge = errors.New("larger than a sitemap may be")
	ErrToken    = fmt.Errorf("%w: an XML token over its bound", ErrTooLarge)
)

// Entry is one <url> of a <urlset> or <sitemap> of a <sitemapindex>. Its
// strings are the caller's to keep.
type Entry struct {
	Loc     string // the <loc> text as written (blanks kept), never empty
	Lastmod string // the <lastmod> text without surrounding blanks, or ""
}

// Scan reads a sitemap document (gzip-compressed or not) as a stream and
// calls fn for each entry that has a <loc> within Limits.Loc; root is the
// root element's local name ("urlset" or "sitemapindex"). fn returns false
// to stop early. Namespaces are not checked: sitemaps carry the sitemap
// namespace, or none. Scan fails on a document that is not XML, whose root
// is neither, or that passes its bounds; fn has then seen the entries that
// came before, each of them complete.
func Scan(r io.Reader, lim Limits, fn func(root string, e Entry) bool) (root string, err error) {
	lim = lim.withDefaults()
	br := bufio.NewReaderSize(r, 4096)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	dec := xml.NewDecoder(&runLimit{r: &byteLimit{r: src, max: lim.Bytes}, max: lim.Token})
	dec.Strict = true
	s := scanner{lim: lim, fn: fn}
	return s.run(dec)
}

// scanner is the walk of one document's elements.
type scanner struct {
	lim   Limits
	fn    func(string, Entry) bool
	root  string
	stack []xml.Name // the open elements, as written (prefix, local name)
	item  bool       // in a <url> or <sitemap>, at depth 2
	field string     // "loc" or "lastmod" being read, at depth 3
	loc   []byte
	mod   []byte
	long  bool // the <loc> ran past lim.Loc
}

func (s *scanner) run(dec *xml.Decoder) (string, error) {
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			if s.root == "" {
				return "", errors.New("not a sitemap: no root element")
			}
			if len(s.stack) > 0 {
				return s.root, errors.New("the document ends inside an element")
			}
			return s.root, nil
		}
		if err != nil {
			if s.root == "" && !errors.Is(err, ErrTooLarge) {
				return "", fmt.Errorf("not XML: %w", err)
			}
			return s.root, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := s.start(t.Name); err != nil {
				return s.root, err
			}
		case xml.EndElement:
			more, err := s.end(t.Name, dec)
			if err != nil || !more {
				return s.root, err
			}
		case xml.CharData:
			s.text(t)
		}
	}
}

func (s *scanner) start(name xml.Name) error {
	if len(s.stack) >= s.lim.Depth {
		return fmt.Errorf("elements nested more than %d deep", s.lim.Depth)
	}
	s.stack = append(s.stack, name)
	switch depth, local := len(s.stack), name.Local; {
	case depth == 1:
		if local != "urlset" && local != "sitemapindex" {
			return fmt.Errorf("not a sitemap: the root element is <%s>, not <urlset> or <sitemapindex>", local)
		}
		s.root = local
	case depth == 2 && (s.root == "urlset" && local == "url" || s.root == "sitemapindex" && local == "sitemap"):
		s.item, s.loc, s.mod, s.long = true, s.loc[:0], s.mod[:0], false
	case depth == 3 && s.item && (local == "loc" || local == "lastmod"):
		s.field = local
	}
	return nil
}

// end closes the innermost element; it reports false when fn asked to stop.
func (s *scanner) end(name xml.Name, dec *xml.Decoder) (bool, error) {
	if len(s.stack) == 0 {
		return false, errors.New("an end tag without its start")
	}
	if open := s.stack[len(s.stack)-1]; open != name {
		line, _ := dec.InputPos()
		return false, fmt.Errorf("line %d: element <%s> closed by </%s>", line, qname(open), qname(name))
	}
	switch len(s.stack) {
	case 3:
		s.field = ""
	case 2:
		if s.item && len(s.loc) > 0 && !s.long {
			if !s.fn(s.root, Entry{Loc: string(s.loc), Lastmod: string(bytes.TrimSpace(s.mod))}) {
				return false, nil
			}
		}
		s.item = false
	}
	s.stack = s.stack[:len(s.stack)-1]
	return true, nil
}

func (s *scanner) text(t xml.CharData) {
	switch s.field {
	case "loc":
		if len(s.loc)+len(t) > s.lim.Loc {
			s.long = true
		} else {
			s.loc = append(s.loc, t...)
		}
	case "lastmod":
		if len(s.mod)+len(t) <= maxLastmod {
			s.mod = append(s.mod, t...)
		}
	}
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// byteLimit fails a read past max bytes in all.
type byteLimit struct {
	r      io.Reader
	n, max int64 // bytes read so far, and the bound
}

func (b *byteLimit) Read(p []byte) (int, error) {
	if b.n >= b.max {
		return 0, fmt.Errorf("%w: over %d bytes", ErrTooLarge, b.max)
	}
	p = p[:min(int64(len(p)), b.max-b.n)]
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
