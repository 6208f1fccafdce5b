package sitemap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxLine bounds one JSON Lines line, or one element of a JSON array
// source (approximately: the decoder reads ahead by up to readChunk).
const maxLine = 64 << 10

// readChunk caps the bytes one Read hands to the JSON decoder of an array
// source, which is what makes the element bound hold.
const readChunk = 16 << 10

// record is one entry read from a source. Params is reused for the next
// record: a callback copies what it keeps.
type record struct {
	Pos     position
	Params  map[string]string
	Lastmod string
	Loc     string // "loc": a path or an absolute URL, instead of params (§16.5)
}

// position says where an entry comes from, for the log. It is formatted
// only when logged.
type position struct {
	kind posKind
	n    int
}

type posKind uint8

const (
	posLine    posKind = iota // line n of a JSON Lines source, from 1
	posElement                // element n of a JSON array source, from 1
	posStatic                 // sitemap_entries[n], from 0
	posPattern                // the pattern of a rule without parameters
)

func (p position) String() string {
	switch p.kind {
	case posLine:
		return "line " + strconv.Itoa(p.n)
	case posElement:
		return "element " + strconv.Itoa(p.n)
	case posStatic:
		return "sitemap_entries[" + strconv.Itoa(p.n) + "]"
	case posSitemap:
		return "loc " + strconv.Itoa(p.n)
	}
	return "pattern"
}

// problem is a record left out, and why: one of the reason* constants, and
// what the log says, built only when it is logged (data aliases the
// source's buffer: it is valid during the bad callback only).
type problem struct {
	reason string
	msg    string
	data   []byte
	err    error
}

func (p problem) detail() string {
	s := p.msg
	if p.data != nil {
		s += fmt.Sprintf(" %.60q", p.data)
	}
	if p.err != nil {
		s += ": " + p.err.Error()
	}
	return s
}

// Reasons an entry is left out; they key the counts of the per-rule
// warning.
const (
	reasonBadLine     = "bad_line"      // not a JSON object of the documented shape
	reasonLineTooLong = "line_too_long" // a line (or array element) over maxLine
	reasonTruncated   = "truncated"     // a last line without newline that does not parse
	reasonBadLastmod  = "bad_lastmod"   // lastmod that does not parse: the date is dropped, the URL kept (§16.5)
	reasonMissing     = "missing_param" // a parameter without a value
	reasonConstraint  = "constraint"    // a value the pattern's constraint refuses
	reasonDot         = "dot_segment"   // "." or ".." as a segment
	reasonSlash       = "slash"         // a "/" the constraint does not allow
	reasonNUL         = "nul"           // a NUL in a value
	reasonLocTooLong  = "loc_too_long"  // a <loc> over 2,048 characters
	reasonUnsafe      = "unsafe_loc"    // a <loc> with bytes outside printable ASCII (never expected)
	reasonDenied      = "denied"        // a deny rule matches the address
	reasonNoindex     = "noindex"       // the rules make the page noindex
	reasonCanonical   = "canonical"     // the rules give the page another canonical
	reasonOtherHost   = "other_host"    // a loc on neither the upstream's nor base_url's origin
	reasonLocNoMatch  = "loc_no_match"  // a "loc" line whose path the rule's pattern does not match
	reasonBadLoc      = "bad_loc"       // a loc that is not a path or an http(s) URL, or holds a query
	reasonBadSitemap  = "bad_sitemap"   // a child sitemap that can not be read or is not a sitemap
	reasonNestedIndex = "nested_index"  // an index named by the index: followed one level only
	reasonTooLarge    = "too_large"     // a sitemap over 50 MiB, or a loc over its bound: read no further
)

// openSource opens a rule's sitemap_source. The returned reader honours
// ctx: reads fail with ctx's error once it is done, and the underlying
// reader is closed then, which unblocks a read that ignores ctx.
func (s *Sitemap) openSource(ctx context.Context, src string) (io.ReadCloser, error) {
	var rc io.ReadCloser
	switch {
	case strings.HasPrefix(src, "upstream:"):
		if s.fetch == nil {
			return nil, errors.New("no upstream to read from (Options.Fetch is nil)")
		}
		var err error
		if rc, err = s.fetch(ctx, strings.TrimPrefix(src, "upstream:")); err != nil {
			return nil, err
		}
		if rc == nil {
			return nil, errors.New("fetch returned no body")
		}
	case strings.HasPrefix(src, "file:"):
		p := strings.TrimPrefix(src, "file:")
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.cfg.Dir, p)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok {
			f.SetReadDeadline(dl) // a FIFO or device honours it; a regular file never blocks
		}
		rc = f
	default:
		return nil, fmt.Errorf("%q is neither upstream:/path nor file:path", src)
	}
	return newCtxReader(ctx, rc), nil
}

// ctxReader makes a reader honour a context.
type ctxReader struct {
	ctx   context.Context
	rc    io.ReadCloser
	once  sync.Once
	err   error
	close func() bool
}

func newCtxReader(ctx context.Context, rc io.ReadCloser) *ctxReader {
	c := &ctxReader{ctx: ctx, rc: rc}
	c.close = context.AfterFunc(ctx, func() { c.closeOnce() })
	return c
}

func (c *ctxReader) closeOnce() error {
	c.once.Do(func() { c.err = c.rc.Close() })
	return c.err
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.rc.Read(p)
	if err != nil && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}

func (c *ctxReader) Close() error {
	c.close()
	return c.closeOnce()
}

// scan reads a source: JSON Lines, or a JSON array when its first
// non-space byte is '['. It calls fn for each well-formed record and bad
// for each one left out, and returns an error only when the source as a
// whole cannot be read: an I/O error or timeout, a document that starts
// like HTML or XML, or an array that is not valid JSON or ends early.
func scan(r io.Reader, fn func(*record), bad func(position, problem)) error {
	br := bufio.NewReaderSize(r, maxLine)
	// Skip a BOM and leading white space to see what the source is.
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return nil // empty: no entries
		}
		if err != nil {
			return err
		}
		switch {
		case b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n':
			br.Discard(1)
			continue
		case b[0] == 0xEF:
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				br.Discard(3)
				continue
			}
		case b[0] == '<':
			start, _ := br.Peek(min(br.Buffered(), 40))
			return fmt.Errorf("not JSON Lines or a JSON array: it starts like HTML or XML (%q)", start)
		case b[0] == '[':
			return scanArray(br, fn, bad)
		}
		return scanLines(br, fn, bad)
	}
}

func scanLines(br *bufio.Reader, fn func(*record), bad func(position, problem)) error {
	var d lineDecoder
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("line %d: %w", n, err)
			}
			bad(position{posLine, n}, problem{reason: reasonLineTooLong, msg: "longer than 64 KiB"})
			if err == io.EOF {
				return nil
			}
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: %w", n, err)
		}
		last := err == io.EOF
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		t := bytes.TrimSpace(line)
		if len(t) > 0 {
			if rec, p := d.decode(t); p.reason != "" {
				if !complete {
					p.reason, p.msg = reasonTruncated, "the source ends within this line: "+p.msg
				}
				bad(position{posLine, n}, p)
			} else {
				rec.Pos = position{posLine, n}
				fn(rec)
			}
		}
		if last {
			return nil
		}
	}
}

// errElementTooLong ends an array source whose element exceeds maxLine:
// a JSON decoder cannot skip it without reading it whole.
var errElementTooLong = fmt.Errorf("an array element is longer than %d bytes", maxLine)

// limitReader hands a JSON decoder at most readChunk bytes per Read and
// refuses to go past limit.
type limitReader struct {
	r         io.Reader
	delivered int64
	limit     int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.delivered >= l.limit {
		return 0, errElementTooLong
	}
	p = p[:min(len(p), readChunk, int(l.limit-l.delivered))]
	n, err := l.r.Read(p)
	l.delivered += int64(n)
	return n, err
}

func scanArray(br *bufio.Reader, fn func(*record), bad func(position, problem)) error {
	lr := &limitReader{r: br, limit: maxLine + readChunk}
	dec := json.NewDecoder(lr)
	if _, err := dec.Token(); err != nil { // '['
		return fmt.Errorf("JSON array: %w", err)
	}
	var d lineDecoder
	var raw json.RawMessage
	for n := 1; dec.More(); n++ {
		lr.limit = dec.InputOffset() + maxLine + readChunk
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("JSON array, element %d: %w", n, err)
		}
		if rec, p := d.decode(raw); p.reason != "" {
			bad(position{posElement, n}, p)
		} else {
			rec.Pos = position{posElement, n}
			fn(rec)
		}
	}
	lr.limit = dec.InputOffset() + maxLine
	if _, err := dec.Token(); err != nil { // ']'
		if err == io.EOF {
			err = errors.New("the source ends before the closing ]")
		}
		return fmt.Errorf("JSON array: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the closing ]")
		}
		return fmt.Errorf("JSON array: %w", err)
	}
	return nil
}

// lineDecoder decodes one {"params": {…}, "lastmod": "…"} object, reusing
// its maps from one record to the next.
type lineDecoder struct {
	in     jsonRecord
	params map[string]paramValue
	rec    record
}

type jsonRecord struct {
	Params  map[string]paramValue `json:"params"`
	Lastmod *string               `json:"lastmod"`
	Loc     *string               `json:"loc"`
}

// paramValue is a parameter: a JSON string, or an integer written as one.
type paramValue string

func (v *paramValue) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"':
		if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
			*v = paramValue(b[1 : len(b)-1])
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = paramValue(s)
		return nil
	case len(b) > 0 && (b[0] == '-' || '0' <= b[0] && b[0] <= '9') && bytes.IndexAny(b, ".eE") < 0:
		*v = paramValue(b)
		return nil
	}
	return fmt.Errorf("a parameter is a string or an integer, not %.20s", b)
}

func (d *lineDecoder) decode(b []byte) (*record, problem) {
	if b[0] != '{' {
		return nil, problem{reason: reasonBadLine, msg: "not a JSON object:", data: b}
	}
	if d.params == nil {
		d.params = map[string]paramValue{}
		d.rec.Params = map[string]string{}
	}
	if d.fast(b) {
		return &d.rec, problem{}
	}
	clear(d.params)
	d.in.Params, d.in.Lastmod, d.in.Loc = d.params, nil, nil
	if err := json.Unmarshal(b, &d.in); err != nil {
		return nil, problem{reason: reasonBadLine, msg: `not a {"params": {…}, "lastmod": "…"} object`, err: err}
	}
	clear(d.rec.Params)
	for k, v := range d.in.Params { // nil after "params": null
		d.rec.Params[k] = string(v)
	}
	d.rec.Lastmod, d.rec.Loc = "", ""
	if d.in.Lastmod != nil {
		d.rec.Lastmod = *d.in.Lastmod
	}
	if d.in.Loc != nil {
		d.rec.Loc = *d.in.Loc
	}
	return &d.rec, problem{}
}

// parseLastmod normalises a lastmod to YYYY-MM-DD in UTC. "" is no date.
func parseLastmod(s string) (string, bool) {
	if s == "" {
		return "", true
	}
	var t time.Time
	var err error
	switch {
	case len(s) == len(time.DateOnly):
		t, err = time.Parse(time.DateOnly, s)
	case len(s) == len(time.DateTime) && s[10] == ' ':
		// WordPress' and MySQL's "YYYY-MM-DD HH:MM:SS", read as UTC (§16.5).
		t, err = time.Parse(time.DateTime, s)
	default:
		s = strings.ToUpper(s) // RFC 3339 §5.6: "t" and "z" may be lower-case
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			// RFC 3339 without an offset, read as UTC.
			t, err = time.Parse("2006-01-02T15:04:05.999999999", s)
		}
	}
	if err != nil {
		return "", false
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return "", false
	}
	return t.Format(time.DateOnly), true
}

// fast decodes the common shape of a record without encoding/json, which
// costs most of a large generation: an object with only "params" (an
// object of strings) and "lastmod" (a string), in any order, strings
// without escapes or control characters. On anything else it returns false
// and encoding/json decides; what it accepts, encoding/json reads the same.
func (d *lineDecoder) fast(b []byte) bool {
	p := fastParser{b: b}
	clear(d.rec.Params)
	d.rec.Lastmod, d.rec.Loc = "", ""
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return p.end()
	}
	for {
		key, ok := p.str()
		if !ok || !p.next(':') {
			return false
		}
		switch string(key) {
		case "params":
			if !p.next('{') {
				return false
			}
			if !p.next('}') {
				for {
					k, ok := p.str()
					if !ok || !p.next(':') {
						return false
					}
					v, ok := p.str()
					if !ok {
						return false
					}
					d.rec.Params[string(k)] = string(v)
					if p.next(',') {
						continue
					}
					if p.next('}') {
						break
					}
					return false
				}
			}
		case "lastmod":
			v, ok := p.str()
			if !ok {
				return false
			}
			d.rec.Lastmod = string(v)
		case "loc":
			v, ok := p.str()
			if !ok {
				return false
			}
			d.rec.Loc = string(v)
		default:
			return false
		}
		if p.next(',') {
			continue
		}
		if p.next('}') {
			return p.end()
		}
		return false
	}
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// next skips white space and then c, if c is next.
func (p *fastParser) next(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid
// UTF-8, after white space.
func (p *fastParser) str() ([]byte, bool) {
	if !p.next('"') {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}
