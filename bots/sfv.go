package bots

// A small RFC 8941 (Structured Field Values) parser and serializer: only
// what Web Bot Auth needs (dictionaries of inner lists and items with
// parameters, RFC 9421 §4) and what Identity.Header writes. Every input is
// untrusted; the parser is bounded by maxSFVLen and never panics
// (FuzzSignatureHeaders).

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// maxSFVLen bounds one structured header's bytes; a longer one is refused.
const maxSFVLen = 8 << 10

// maxSFVMembers bounds the members of a dictionary, list or parameter set.
const maxSFVMembers = 64

type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBool
)

// sfBare is a bare item.
type sfBare struct {
	kind sfKind
	i    int64
	s    string // string, token, decimal text
	b    []byte
}

type sfParam struct {
	key string
	val sfBare
}

type sfItem struct {
	bare   sfBare
	params []sfParam
}

// sfMember is a dictionary or list member: an item, or an inner list when
// inner is set.
type sfMember struct {
	key     string
	isInner bool
	item    sfItem   // when !isInner
	inner   []sfItem // when isInner
	params  []sfParam
}

func (m sfMember) param(key string) (sfBare, bool) {
	ps := m.params
	if !m.isInner {
		ps = m.item.params
	}
	for _, p := range ps {
		if p.key == key {
			return p.val, true
		}
	}
	return sfBare{}, false
}

var errSFV = errors.New("malformed structured field")

type sfParser struct {
	s string
	i int
}

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseDictionary parses an RFC 8941 §4.2.2 dictionary. A duplicate key
// keeps the last value, as the RFC says.
func parseDictionary(s string) ([]sfMember, error) {
	if len(s) > maxSFVLen {
		return nil, errSFV
	}
	p := &sfParser{s: s}
	p.skipSP()
	var out []sfMember
	for p.i < len(p.s) {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var m sfMember
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			m, err = p.member()
			if err != nil {
				return nil, err
			}
		} else {
			params, err := p.params()
			if err != nil {
				return nil, err
			}
			m = sfMember{item: sfItem{bare: sfBare{kind: sfBool, i: 1}, params: params}}
		}
		m.key = key
		replaced := false
		for j := range out {
			if out[j].key == key {
				out[j] = m
				replaced = true
			}
		}
		if !replaced {
			if len(out) >= maxSFVMembers {
				return nil, errSFV
			}
			out = append(out, m)
		}
		p.skipOWS()
		if p.i >= len(p.s) {
			return out, nil
		}
		if p.s[p.i] != ',' {
			return nil, errSFV
		}
		p.i++
		p.skipOWS()
		if p.i >= len(p.s) {
			return nil, errSFV // trailing comma
		}
	}
	return out, nil
}

// parseItem parses an RFC 8941 §4.2.3 item occupying the whole string.
func parseItem(s string) (sfItem, error) {
	if len(s) > maxSFVLen {
		return sfItem{}, errSFV
	}
	p := &sfParser{s: s}
	p.skipSP()
	it, err := p.item()
	if err != nil {
		return sfItem{}, err
	}
	p.skipSP()
	if p.i != len(p.s) {
		return sfItem{}, errSFV
	}
	return it, nil
}

func (p *sfParser) member() (sfMember, error) {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		var inner []sfItem
		for {
			p.skipSP()
			if p.i >= len(p.s) {
				return sfMember{}, errSFV
			}
			if p.s[p.i] == ')' {
				p.i++
				params, err := p.params()
				if err != nil {
					return sfMember{}, err
				}
				return sfMember{isInner: true, inner: inner, params: params}, nil
			}
			if len(inner) >= maxSFVMembers {
				return sfMember{}, errSFV
			}
			it, err := p.item()
			if err != nil {
				return sfMember{}, err
			}
			inner = append(inner, it)
			if p.i < len(p.s) && p.s[p.i] != ' ' && p.s[p.i] != ')' {
				return sfMember{}, errSFV
			}
		}
	}
	it, err := p.item()
	if err != nil {
		return sfMember{}, err
	}
	return sfMember{item: it}, nil
}

func (p *sfParser) item() (sfItem, error) {
	b, err := p.bare()
	if err != nil {
		return sfItem{}, err
	}
	params, err := p.params()
	if err != nil {
		return sfItem{}, err
	}
	return sfItem{bare: b, params: params}, nil
}

func (p *sfParser) params() ([]sfParam, error) {
	var out []sfParam
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		val := sfBare{kind: sfBool, i: 1}
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			val, err = p.bare()
			if err != nil {
				return nil, err
			}
		}
		replaced := false
		for j := range out {
			if out[j].key == key {
				out[j].val = val
				replaced = true
			}
		}
		if !replaced {
			if len(out) >= maxSFVMembers {
				return nil, errSFV
			}
			out = append(out, sfParam{key, val})
		}
	}
	return out, nil
}

func (p *sfParser) key() (string, error) {
	start := p.i
	if p.i >= len(p.s) {
		return "", errSFV
	}
	c := p.s[p.i]
	if !(c >= 'a' && c <= 'z' || c == '*') {
		return "", errSFV
	}
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i], nil
}

func isTChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *sfParser) bare() (sfBare, error) {
	if p.i >= len(p.s) {
		return sfBare{}, errSFV
	}
	c := p.s[p.i]
	switch {
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.s) {
			c := p.s[p.i]
			p.i++
			switch {
			case c == '\\':
				if p.i >= len(p.s) {
					return sfBare{}, errSFV
				}
				c = p.s[p.i]
				p.i++
				if c != '"' && c != '\\' {
					return sfBare{}, errSFV
				}
				b.WriteByte(c)
			case c == '"':
				return sfBare{kind: sfString, s: b.String()}, nil
			case c < 0x20 || c > 0x7e:
				return sfBare{}, errSFV
			default:
				b.WriteByte(c)
			}
		}
		return sfBare{}, errSFV
	case c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.i
		p.i++
		for p.i < len(p.s) && (isTChar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		return sfBare{kind: sfToken, s: p.s[start:p.i]}, nil
	case c == ':':
		p.i++
		end := strings.IndexByte(p.s[p.i:], ':')
		if end < 0 {
			return sfBare{}, errSFV
		}
		raw := p.s[p.i : p.i+end]
		p.i += end + 1
		for k := 0; k < len(raw); k++ {
			c := raw[k]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
				return sfBare{}, errSFV
			}
		}
		b, err := base64.StdEncoding.DecodeString(raw)
		if err != nil {
			// RFC 8941 §4.2.7: parsers may accept missing padding.
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(raw, "="))
			if err != nil {
				return sfBare{}, errSFV
			}
		}
		return sfBare{kind: sfBytes, b: b}, nil
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			v := int64(p.s[p.i+1] - '0')
			p.i += 2
			return sfBare{kind: sfBool, i: v}, nil
		}
		return sfBare{}, errSFV
	}
	return sfBare{}, errSFV
}

func (p *sfParser) number() (sfBare, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits, dot := 0, -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= '0' && c <= '9' {
			digits++
			p.i++
			continue
		}
		if c == '.' && dot < 0 {
			if digits > 12 {
				return sfBare{}, errSFV
			}
			dot = digits
			p.i++
			continue
		}
		break
	}
	text := p.s[start:p.i]
	if digits == 0 {
		return sfBare{}, errSFV
	}
	if dot < 0 {
		if digits > 15 {
			return sfBare{}, errSFV
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return sfBare{}, errSFV
		}
		return sfBare{kind: sfInteger, i: n}, nil
	}
	if text[len(text)-1] == '.' || digits-dot > 3 || digits > 15 {
		return sfBare{}, errSFV
	}
	return sfBare{kind: sfDecimal, s: text}, nil
}

// serialization (RFC 8941 §4.1)

func appendSFString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c > 0x7e:
			// Not representable in an sf-string: written as '?', so that a
			// name from config or an agent can never break the field.
			b = append(b, '?')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// isSFToken reports whether s can be written as a bare token.
func isSFToken(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isTChar(s[i]) && s[i] != ':' && s[i] != '/' {
			return false
		}
	}
	return true
}

func appendSFTokenOrString(b []byte, s string) []byte {
	if isSFToken(s) {
		return append(b, s...)
	}
	return appendSFString(b, s)
}

func appendSFBare(b []byte, v sfBare) []byte {
	switch v.kind {
	case sfInteger:
		return strconv.AppendInt(b, v.i, 10)
	case sfDecimal:
		return append(b, v.s...)
	case sfString:
		return appendSFString(b, v.s)
	case sfToken:
		return append(b, v.s...)
	case sfBytes:
		b = append(b, ':')
		b = base64.StdEncoding.AppendEncode(b, v.b)
		return append(b, ':')
	case sfBool:
		if v.i == 1 {
			return append(b, "?1"...)
		}
		return append(b, "?0"...)
	}
	return b
}

func appendSFParams(b []byte, ps []sfParam) []byte {
	for _, p := range ps {
		b = append(b, ';')
		b = append(b, p.key...)
		if p.val.kind == sfBool && p.val.i == 1 {
			continue
		}
		b = append(b, '=')
		b = appendSFBare(b, p.val)
	}
	return b
}

func appendSFItem(b []byte, it sfItem) []byte {
	b = appendSFBare(b, it.bare)
	return appendSFParams(b, it.params)
}

// appendSFMember writes a member's value (not its key).
func appendSFMember(b []byte, m sfMember) []byte {
	if !m.isInner {
		return appendSFItem(b, m.item)
	}
	b = append(b, '(')
	for i, it := range m.inner {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendSFItem(b, it)
	}
	b = append(b, ')')
	return appendSFParams(b, m.params)
}
