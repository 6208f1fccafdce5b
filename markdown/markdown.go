package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Errors a caller tests for; every error Convert returns means "answer the
// page as HTML" (nothing has been written to w).
var (
	// ErrTooLarge: the page is longer than Options.MaxBytes.
	ErrTooLarge = errors.New("markdown: page larger than the limit")
	// ErrSelector: an Options selector is not one this package reads.
	ErrSelector = errors.New("markdown: bad selector")
	// ErrConvert: the converter failed on this page (a bug; the page is
	// served as HTML and the error carries what failed).
	ErrConvert = errors.New("markdown: conversion failed")
)

// Defaults of Options (SPEC §19.1).
var (
	DefaultContent = []string{"main", "article", "[role=main]", "#content", "body"}
	DefaultRemove  = []string{"nav", "header", "footer", "aside", "form", "script", "style",
		"noscript", "template", "[hidden]", "[aria-hidden=true]"}
)

const (
	// DefaultMaxBytes is Options.MaxBytes' default: 8 MiB.
	DefaultMaxBytes = 8 << 20
	// DefaultMaxDepth is Options.MaxDepth's default.
	DefaultMaxDepth = 256
)

// Options configure a Converter. The zero value converts with SPEC §19.1's
// defaults.
type Options struct {
	// Content lists selectors tried in order; the first that matches an
	// element makes that element the content. nil means DefaultContent.
	// "body" and "html" always match (the whole document).
	Content []string
	// Remove lists selectors whose subtrees are left out. nil means
	// DefaultRemove; an empty non-nil slice removes nothing.
	Remove []string
	// MaxBytes is the most HTML read from a page, in bytes; a longer page
	// gives ErrTooLarge. 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxDepth is the most open elements tracked; deeper elements are read
	// as inline text (their subtrees still removed when selected). 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// Base is the page's URL, on which relative link and image URLs
	// resolve. nil leaves relative URLs relative.
	Base *url.URL
	// Resolve, when set, resolves a link or image URL (tabs and newlines
	// taken out, spaces trimmed) on Base and checks it, in one step: it
	// returns the absolute URL to write, or ok false to drop it. It is the
	// caller's SPEC §4.6 rules with the WHATWG URL Standard's resolution
	// (§23), which this package, below rules/, cannot import. It is asked
	// only when Base is set. Without it, Base resolves by net/url (RFC
	// 3986, which differs from WHATWG on ":foo", "/\host" and more) and
	// only http, https and relative URLs are kept. A dropped link keeps
	// its text, a dropped image its alt text.
	Resolve func(base *url.URL, ref string) (abs string, ok bool)
}

// Front is the page's metadata, written as YAML front matter. Empty fields
// are left out. The caller takes them from the head it serves.
type Front struct {
	Title, Description, URL, Lang, Date, Modified string
}

// Stats describe one conversion.
type Stats struct {
	In, Out int64 // bytes read and written
	// Tokens estimates the LLM tokens of the output: characters / 4,
	// rounded up (docs/agents.md). It is X-Markdown-Tokens.
	Tokens int64
	// Selector is the content selector that matched.
	Selector string
}

// A Converter turns HTML pages into Markdown. It is immutable and safe for
// concurrent use.
type Converter struct {
	content, remove []selector
	maxBytes        int64
	maxDepth        int
	base            *url.URL
	resolve         func(*url.URL, string) (string, bool)
	// The attribute names the selectors test, lower case: a start tag
	// whose raw bytes hold none of them is matched without its attributes.
	removeAttrs  []string
	contentAttrs [][]string
}

// New checks and compiles opt. Its errors wrap ErrSelector and name every
// bad selector.
func New(opt Options) (*Converter, error) {
	c := &Converter{maxBytes: opt.MaxBytes, maxDepth: opt.MaxDepth, base: opt.Base, resolve: opt.Resolve}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.maxDepth <= 0 {
		c.maxDepth = DefaultMaxDepth
	}
	content, remove := opt.Content, opt.Remove
	if content == nil {
		content = DefaultContent
	}
	if remove == nil {
		remove = DefaultRemove
	}
	if len(content) > 64 {
		return nil, fmt.Errorf("%w: %d content selectors (at most 64)", ErrSelector, len(content))
	}
	var errs []error
	for _, s := range content {
		sel, err := parseSelector(s)
		errs = append(errs, err)
		c.content = append(c.content, sel)
	}
	for _, s := range remove {
		sel, err := parseSelector(s)
		errs = append(errs, err)
		c.remove = append(c.remove, sel)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, s := range c.remove {
		c.removeAttrs = append(c.removeAttrs, s.attrNames()...)
	}
	for _, s := range c.content {
		c.contentAttrs = append(c.contentAttrs, s.attrNames())
	}
	return c, nil
}

// Convert reads one HTML page from r (at most MaxBytes) and writes its
// Markdown to w: front matter, then the content element. It buffers the
// whole output and writes it with one Write only when the conversion has
// succeeded, so on any error w has received nothing and the caller can
// still answer with the HTML. The page must be UTF-8 (decode other charsets
// first); invalid bytes become U+FFFD.
func (c *Converter) Convert(w io.Writer, r io.Reader, front Front) (st Stats, err error) {
	inBuf := bufPool.Get().(*[]byte)
	defer putBuf(inBuf)
	in, err := readBounded(*inBuf, r, c.maxBytes)
	*inBuf = in[:0]
	st.In = int64(len(in))
	if err != nil {
		return st, err
	}
	return c.convertTo(w, in, front)
}

// ConvertBytes is Convert of a page the caller holds already: no copy of
// it is made. A page longer than MaxBytes gives ErrTooLarge.
func (c *Converter) ConvertBytes(w io.Writer, in []byte, front Front) (Stats, error) {
	if int64(len(in)) > c.maxBytes {
		return Stats{In: int64(len(in))}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.maxBytes)
	}
	return c.convertTo(w, in, front)
}

// WithBase returns a Converter like c whose relative URLs resolve on base
// (the page's own URL), for a host that compiled c once for its site.
func (c *Converter) WithBase(base *url.URL) *Converter {
	d := *c
	d.base = base
	return &d
}

// convertTo converts in and writes the Markdown to w with one Write.
func (c *Converter) convertTo(w io.Writer, in []byte, front Front) (st Stats, err error) {
	st.In = int64(len(in))
	outBuf := bufPool.Get().(*[]byte)
	defer putBuf(outBuf)
	out, sel, err := c.convert((*outBuf)[:0], in, front)
	*outBuf = out[:0]
	if err != nil {
		return st, err
	}
	st.Selector = sel
	st.Tokens = Tokens(out)
	n, err := w.Write(out)
	st.Out = int64(n)
	if err != nil {
		return st, fmt.Errorf("markdown: write: %w", err)
	}
	return st, nil
}

// Convert is New(*opt) and Converter.Convert in one call; opt may be nil.
// A proxy converting many pages compiles its Converter once instead.
func Convert(w io.Writer, r io.Reader, front Front, opt *Options) (Stats, error) {
	if opt == nil {
		opt = &Options{}
	}
	c, err := New(*opt)
	if err != nil {
		return Stats{}, err
	}
	return c.Convert(w, r, front)
}

// Tokens is the X-Markdown-Tokens estimate of a Markdown text: its
// characters (Unicode code points) divided by four, rounded up.
func Tokens(md []byte) int64 {
	return (int64(utf8.RuneCount(md)) + 3) / 4
}

// bufPool holds the input and output buffers of conversions; a buffer
// larger than maxPooled is not kept.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 4 << 20

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		bufPool.Put(b)
	}
}

// readBounded appends at most limit bytes of r to buf.
func readBounded(buf []byte, r io.Reader, limit int64) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok && int64(l.Len()) <= limit {
		buf = slices.Grow(buf, l.Len()+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(len(buf), 32<<10), 1<<20))
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit+1)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, fmt.Errorf("markdown: read: %w", err)
		}
	}
}

// convert appends the Markdown of in to buf.
func (c *Converter) convert(buf, in []byte, front Front) (out []byte, sel string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = buf[:0], fmt.Errorf("%w: %v", ErrConvert, p)
		}
	}()
	b := bytes.NewBuffer(buf)
	writeFront(b, front)
	fm := b.Len()
	out, sel = c.body(b.Bytes(), in)
	if len(out) > fm {
		if fm > 0 {
			out = slices.Insert(out, fm, '\n')
		}
		out = append(out, '\n')
	}
	return out, sel, nil
}

// writeFront writes the front matter, every value a YAML double-quoted
// scalar so that any text reads back unchanged.
func writeFront(b *bytes.Buffer, f Front) {
	kv := [...]struct{ k, v string }{
		{"title", f.Title}, {"description", f.Description}, {"url", f.URL},
		{"lang", f.Lang}, {"date", f.Date}, {"modified", f.Modified},
	}
	any := false
	for _, e := range kv {
		if e.v == "" {
			continue
		}
		if !any {
			b.WriteString("---\n")
			any = true
		}
		b.WriteString(e.k)
		b.WriteString(": ")
		yamlQuote(b, e.v)
		b.WriteByte('\n')
	}
	if any {
		b.WriteString("---\n")
	}
}

// yamlQuote writes s as a YAML double-quoted scalar: the escapes of YAML
// 1.2 §5.7 for backslash, quote, every non-printable character and the
// Unicode line breaks (which would otherwise fold).
func yamlQuote(b *bytes.Buffer, s string) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(b, `\x%02X`, r)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
